import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChildSupervisor } from '../../src/children/supervisor.js'
import { createLogger } from '../../src/logger.js'
import { TokenStore } from '../../src/oauth/token-store.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { startHttpFixture } from '../helpers/e2e.js'
import { loadedConfig } from '../helpers/runtime.js'
import { childSessions } from '../../src/eras/child-sessions.js'

/**
 * People's own connections to an HTTP server (myc serve --http, a server
 * with an `oauth` key): one per person, let go when unused too long or when
 * there are too many, never while a call is in flight. Over a real HTTP
 * child (the progress fixture on Streamable HTTP).
 */
describe('ChildSupervisor.personalFor: people’s own connections are bounded', () => {
  let web: { url: string; stop: () => void }
  let clock = 0
  let supervisor: ChildSupervisor
  const store = (owner: string) => new TokenStore(mkdtempSync(path.join(tmpdir(), 'myc-personal-')), owner)

  beforeAll(async () => {
    web = await startHttpFixture('progress')
    const { config } = loadedConfig({ mcpServers: { web: { type: 'http', url: web.url } } })
    supervisor = new ChildSupervisor(config.servers, {
      childSessions,
      logger: createLogger({ quiet: true }),
      version: '0.0.0-test',
      host: hostForThisProcess(),
      configDir: tmpdir(),
      events: { listsChanged: () => {}, notification: () => {}, request: async () => ({}) },
      personal: { max: 2, idleMs: 1_000, now: () => clock },
    })
  }, 30_000)
  afterAll(async () => {
    await supervisor?.stopAll()
    web?.stop()
  })

  it('opens one running connection per person, the same one again for the same person', async () => {
    const alice = await supervisor.personalFor('web', 'alice', store('alice'))
    expect(alice?.state).toBe('RUNNING')
    expect(await supervisor.personalFor('web', 'alice', store('alice'))).toBe(alice)
    expect(supervisor.personalCount).toBe(1)
  })

  it('lets the least recently used go beyond the cap, and one unused too long', async () => {
    const alice = await supervisor.personalFor('web', 'alice', store('alice'))
    clock += 10
    await supervisor.personalFor('web', 'bob', store('bob'))
    clock += 10
    await supervisor.personalFor('web', 'carol', store('carol'))
    // Three people, a cap of two: alice, used longest ago, is let go.
    expect(supervisor.personalCount).toBe(2)
    expect(alice?.state).toBe('STOPPED')
    // Past the idle time, the next use lets the idle ones go.
    clock += 5_000
    await supervisor.personalFor('web', 'dave', store('dave'))
    expect(supervisor.personalCount).toBe(1)
    // alice's next call opens hers again.
    expect((await supervisor.personalFor('web', 'alice', store('alice')))?.state).toBe('RUNNING')
  })

  it('never lets go of a connection with a call in flight', async () => {
    const erin = await supervisor.personalFor('web', 'erin', store('erin'))
    const call = erin!.forward('tools/call', { name: 'count', arguments: { steps: 5, stepMs: 100 } }, { caller: {} })
    clock += 5_000
    await supervisor.personalFor('web', 'frank', store('frank'))
    expect(erin?.state).toBe('RUNNING')
    expect(await call).toMatchObject({ ok: true, result: { content: [{ type: 'text', text: 'counted 5' }] } })
  })
})

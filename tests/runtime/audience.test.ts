import { describe, expect, it } from 'vitest'
import { ChildConnection } from '../../src/children/child.js'
import { createLogger } from '../../src/logger.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import type { ConnectionHandle } from '../../src/runtime/connection.js'
import { audienceOf } from '../../src/runtime/instance-routing.js'
import { childSessions } from '../../src/eras/child-sessions.js'
import { loadedConfig } from '../helpers/runtime.js'

/**
 * Who hears what a child says outside its calls (runtime/instance-routing.ts):
 * a person's own connection to a server logged in as them speaks to that
 * person's connections only, whoever else reaches the server.
 */
describe('audienceOf: a person’s own connection is heard by that person only', () => {
  const { config } = loadedConfig({ mcpServers: { gh: { type: 'http', url: 'http://127.0.0.1:9/mcp' } } })
  const child = new ChildConnection('gh', config.servers.get('gh')!, {
    childSessions,
    logger: createLogger({ quiet: true }),
    version: '0.0.0-test',
    host: hostForThisProcess(),
    configDir: '/',
    events: { stateChanged: () => {}, listsChanged: () => {}, notification: () => {}, request: async () => ({}) },
  })
  // Only `who` is read: whose connection it is.
  const connection = (who: ConnectionHandle['who']) => ({ who }) as ConnectionHandle

  it('a shared server’s connection speaks to everyone', () => {
    expect(audienceOf(child, undefined)).toBeUndefined()
  })

  it('alice’s own connection: alice’s sessions hear it, bob’s, the local person’s and an unknown caller’s do not', () => {
    const hears = audienceOf(child, undefined, 'alice')!
    expect(hears(connection({ owner: 'alice' }))).toBe(true)
    expect(hears(connection({ owner: 'alice', sessionId: 's1' }))).toBe(true)
    expect(hears(connection({ owner: 'bob' }))).toBe(false)
    expect(hears(connection({}))).toBe(false)
    expect(hears(connection(undefined))).toBe(false)
  })
})

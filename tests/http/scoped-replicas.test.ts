import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Server } from 'node:http'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSessionStore, type SessionStore } from '../../src/http/session-store.js'
import { sharePeople } from '../../src/http/shared-people.js'
import { TokenStore } from '../../src/oauth/token-store.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { runHere } from '../helpers/cli.js'
import { writeConfig } from '../helpers/e2e.js'
import { hasRedis, startRedis, type RedisServer } from '../helpers/redis.js'
import {
  PEOPLE,
  peopleFace,
  perPersonEntry,
  personClient,
  scopedRuntime,
  TEST_TOKEN_KEY,
  whoami,
} from '../helpers/scoped.js'

/**
 * Two replicas (two runtimes, each with its own user config folder, as two
 * machines) over one real Redis: a person's secret set through one is used
 * by their instance on the other, and Redis holds it sealed (no value, no
 * name). The operator's own secret stays each machine's.
 */
describe.skipIf(!hasRedis())('a person’s secret shared by replicas through Redis', () => {
  let redis: RedisServer
  const stores: SessionStore[] = []
  const runtimes: Runtime[] = []
  const servers: Server[] = []
  const open: Client[] = []
  const bases: string[] = []

  beforeAll(async () => {
    redis = await startRedis()
    for (const operator of ['operator-a', 'operator-b']) {
      const { runtime } = await scopedRuntime({ gh: perPersonEntry() }, { kept: { local: { github: operator } } })
      const store = await openSessionStore(redis.url)
      sharePeople(runtime, store, TEST_TOKEN_KEY)
      runtime.secrets.selfService = true
      const { base, server } = await peopleFace(runtime, { selfServiceSecrets: true, sharedStore: store })
      runtimes.push(runtime)
      stores.push(store)
      servers.push(server)
      bases.push(base)
    }
  }, 60_000)
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => {})))
    for (const s of servers) s.close()
    await Promise.all(runtimes.map((r) => r.close()))
    await Promise.all(stores.map((s) => s.close()))
    await redis?.stop()
  })

  it('uses on one replica the secret a person set through the other', async () => {
    const put = await fetch(`${bases[0]}/secrets/github`, {
      method: 'PUT',
      body: 'alice-shared-value',
      headers: { Authorization: `Bearer ${PEOPLE.alice}` },
    })
    expect(put.status).toBe(200)
    const { client } = await personClient(`${bases[1]}/mcp`, 'alice')
    open.push(client)
    expect((await whoami(client)).secret).toBe('alice-shared-value')
    // Each replica's own process still runs with its own operator's secret (this machine's, not Redis's).
    expect(await runtimes[1]!.secrets.store('local').value('github')).toBe('operator-b')
    // Redis holds the entry sealed: neither the value nor the name nor the person.
    const kept = JSON.stringify(await stores[0]!.secretEntries!().read())
    expect(kept).not.toBe('{}')
    expect(kept).not.toMatch(/alice-shared-value|github|alice/)
  }, 30_000)

  it('takes a person’s secret from myc secrets set on the machine, into the replicas’ Redis', async () => {
    const config = writeConfig({ mcpServers: {}, http: { sessionStore: redis.url } })
    const elsewhere = { XDG_CONFIG_HOME: mkdtempSync(path.join(tmpdir(), 'myc-replica-cli-')) }
    // Without the replicas' key it says which variable, and keeps nothing.
    const keyless = await runHere(
      ['secrets', 'set', 'github', '--principal', 'bob', '--config', config],
      'bob-cli-value',
      {
        env: { ...elsewhere, MYC_TOKEN_KEY: undefined },
      },
    )
    expect(keyless.code).toBe(2)
    expect(keyless.stderr).toMatch(/http\.sessionStore is Redis.*MYC_TOKEN_KEY/)
    const env = { ...elsewhere, MYC_TOKEN_KEY: TEST_TOKEN_KEY }
    const set = await runHere(
      ['secrets', 'set', 'github', '--principal', 'bob', '--config', config],
      'bob-cli-value\n',
      {
        env,
      },
    )
    expect(set.code, set.stderr).toBe(0)
    const listed = await runHere(['secrets', 'list', '--principal', 'bob', '--json', '--config', config], '', { env })
    expect(JSON.parse(listed.stdout)).toMatchObject({ principal: 'bob', names: ['github'] })
    for (const base of bases) {
      const { client } = await personClient(`${base}/mcp`, 'bob')
      open.push(client)
      expect((await whoami(client)).secret).toBe('bob-cli-value')
    }
    // The machine's own file got nothing of bob's.
    expect(existsSync(path.join(elsewhere.XDG_CONFIG_HOME, 'mycelium', 'secrets.json'))).toBe(false)
    expect(
      (await runHere(['secrets', 'rm', 'github', '--principal', 'bob', '--config', config], '', { env })).code,
    ).toBe(0)
    expect(await runtimes[0]!.secrets.store('bob').value('github')).toBeUndefined()
  }, 60_000)
  it('reads and forgets a person’s login with myc auth status and logout on the machine, in the replicas’ Redis', async () => {
    const url = 'https://api.example.test/mcp'
    const config = writeConfig({
      mcpServers: { remote: { type: 'http', url, oauth: {} } },
      http: { sessionStore: redis.url },
    })
    // A replica keeps bob's login in Redis, as one does after bob logs in through it.
    const replica = new TokenStore(
      mkdtempSync(path.join(tmpdir(), 'myc-replica-a-')),
      'bob',
      TEST_TOKEN_KEY,
      undefined,
      stores[0]!.tokenEntries!(),
    )
    await replica.update(url, () => ({
      serverUrl: url,
      tokens: { access_token: 'bob-token', token_type: 'Bearer', scope: 'repo' },
      client: { client_id: 'myc' },
      authorizationServerUrl: 'https://auth.example.test',
      savedAt: Date.now(),
    }))
    const elsewhere = { XDG_CONFIG_HOME: mkdtempSync(path.join(tmpdir(), 'myc-replica-cli-')) }
    const keyless = await runHere(['auth', 'status', '--principal', 'bob', '--json', '--config', config], '', {
      env: { ...elsewhere, MYC_TOKEN_KEY: undefined },
    })
    expect(keyless.code).toBe(2)
    expect(keyless.stderr).toMatch(/http\.sessionStore is Redis.*logins.*MYC_TOKEN_KEY/)
    const env = { ...elsewhere, MYC_TOKEN_KEY: TEST_TOKEN_KEY }
    const status = await runHere(['auth', 'status', '--principal', 'bob', '--json', '--config', config], '', { env })
    expect(status.code, status.stderr).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({
      principal: 'bob',
      servers: [{ server: 'remote', state: 'valid', scopes: ['repo'] }],
    })
    const logout = await runHere(['auth', 'logout', 'remote', '--principal', 'bob', '--config', config], '', { env })
    expect(logout.code, logout.stderr).toBe(0)
    expect(logout.stdout).toMatch(/logged out of "remote" for bob/)
    expect(await replica.get(url)).toBeUndefined()
    // The machine's own file got nothing of bob's.
    expect(existsSync(path.join(elsewhere.XDG_CONFIG_HOME, 'mycelium', 'oauth-tokens.json'))).toBe(false)
  }, 60_000)
})

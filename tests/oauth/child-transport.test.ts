import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChildTransport, describeStartError } from '../../src/children/child-transports.js'
import { currentHost } from '../../src/children/resolve-command.js'
import type { HttpServerConfig } from '../../src/config/server-schema.js'
import { startFix } from '../../src/inspect/doctor.js'
import { createLogger } from '../../src/logger.js'
import { TokenStore } from '../../src/oauth/token-store.js'
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js'

/** An HTTP child's transport (as ChildConnection makes it) with an SDK client on it, against the real local OAuth server. */
describe('an HTTP child’s transport with a stored OAuth login', () => {
  let server: OAuthTestServer
  const client = { id: 'transport-client', secret: 'transport-secret' }
  beforeAll(async () => {
    server = await startOAuthServer({ client })
  })
  afterAll(async () => {
    await server.close()
  })

  const config = (): HttpServerConfig =>
    ({
      type: 'http',
      url: server.mcpUrl,
      headers: {},
      startup: 'eager',
      timeoutMs: 60_000,
      startupTimeoutMs: 30_000,
      disabled: false,
      restart: { maxRetries: 0, initialDelayMs: 500, maxDelayMs: 30_000 },
      pingIntervalMs: 0,
    }) as HttpServerConfig

  async function connect(store: TokenStore): Promise<Client> {
    const transport = createChildTransport(config(), createLogger({ quiet: true }), {
      key: 'srv',
      host: currentHost(false),
      configDir: tmpdir(),
      tokenStore: store,
    })
    const c = new Client({ name: 't', version: '1' })
    await c.connect(transport)
    return c
  }

  async function seeded(tokens: ReturnType<OAuthTestServer['issueTokens']>, refresh = true): Promise<TokenStore> {
    const store = new TokenStore(mkdtempSync(path.join(tmpdir(), 'myc-transport-')), 'local')
    await store.put(server.mcpUrl, {
      serverUrl: server.mcpUrl,
      tokens: refresh ? tokens : { ...tokens, refresh_token: undefined },
      expiresAt: Date.now() + 3_600_000,
      client: { client_id: client.id, client_secret: client.secret },
      authorizationServerUrl: server.base,
      resource: server.mcpUrl,
      savedAt: Date.now(),
    })
    return store
  }

  it('sends the stored token: tools are listed and called', async () => {
    const c = await connect(await seeded(server.issueTokens(client.id)))
    try {
      expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['whoami'])
      const result = await c.callTool({ name: 'whoami', arguments: {} })
      expect((result.content as Array<{ text: string }>)[0]!.text).toMatch(/^you are logged in \(login \d+\)$/)
    } finally {
      await c.close()
    }
  })

  it('refreshes a token about to expire before sending it', async () => {
    const store = await seeded(server.issueTokens(client.id))
    await store.update(server.mcpUrl, (current) => ({
      ...current!,
      expiresAt: Date.now() + 20_000,
      savedAt: Date.now() - 3_600_000,
    }))
    const before = server.requests.length
    const c = await connect(store)
    await c.close()
    expect(server.requests.slice(before, before + 2)).toEqual(['POST /token', 'POST /mcp'])
    expect((await store.get(server.mcpUrl))!.expiresAt).toBeGreaterThan(Date.now() + 3_000_000)
  })

  it('no login: the connect fails with the fix, and no fallback to HTTP+SSE is tried', async () => {
    const store = new TokenStore(mkdtempSync(path.join(tmpdir(), 'myc-transport-')), 'local')
    const before = server.requests.length
    const error = await connect(store).then(
      () => undefined,
      (e: unknown) => e,
    )
    // One POST, answered 401: no GET of an HTTP+SSE stream, no registration, no authorization.
    expect(server.requests.slice(before)).toEqual(['POST /mcp'])
    expect(describeStartError(error, config())).toBe(
      'needs an OAuth login (the server answered 401 and no login is stored for it); run: myc auth login srv',
    )
    // myc doctor's fix for it.
    expect(startFix(describeStartError(error, config()))).toBe('run `myc auth login srv`')
  })

  it('a refused token that cannot be refreshed: the fix is a login', async () => {
    const store = await seeded(server.issueTokens(client.id), false)
    server.revokeAccessTokens()
    const error = await connect(store).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(describeStartError(error, config())).toMatch(
      /^needs an OAuth login \(the server refused the stored token and it has no refresh token\); run: myc auth login srv$/,
    )
  })

  it('refused again after a successful refresh: the fix is a login, and no fallback to HTTP+SSE is tried', async () => {
    const store = await seeded(server.issueTokens(client.id))
    server.refuseAll = true
    const before = server.requests.length
    const refreshes = server.refreshes
    try {
      const error = await connect(store).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(describeStartError(error, config())).toBe(
        'needs an OAuth login (the server refused the token even after a refresh); run: myc auth login srv',
      )
    } finally {
      server.refuseAll = false
    }
    expect(server.refreshes).toBe(refreshes + 1)
    expect(server.requests.slice(before)).toEqual(['POST /mcp', 'POST /token', 'POST /mcp'])
  })

  it('a config that sends its own Authorization header (and no "oauth") is left alone', async () => {
    const store = await seeded(server.issueTokens(client.id))
    const transport = createChildTransport(
      { ...config(), headers: { Authorization: 'Bearer static-not-valid' } },
      createLogger({ quiet: true }),
      { key: 'srv', host: currentHost(false), configDir: tmpdir(), tokenStore: store },
    )
    const error = await new Client({ name: 't', version: '1' }).connect(transport).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(String(error)).not.toMatch(/OAuth login/)
    expect(error).toBeDefined()
  })
})

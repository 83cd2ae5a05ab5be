import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { HttpServerConfig } from '../../src/config/server-schema.js'
import { childAuthProvider } from '../../src/oauth/child-auth.js'
import { beginLogin, login } from '../../src/oauth/login.js'
import { interactiveReauthorize } from '../../src/oauth/reauthorize.js'
import { TokenStore } from '../../src/oauth/token-store.js'
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js'

const store = () => new TokenStore(mkdtempSync(path.join(tmpdir(), 'myc-login-')), 'local')
const http = (url: string, oauth?: HttpServerConfig['oauth']): HttpServerConfig =>
  ({
    type: 'http',
    url,
    headers: {},
    startup: 'eager',
    timeoutMs: 60_000,
    startupTimeoutMs: 30_000,
    disabled: false,
    restart: { maxRetries: 5, initialDelayMs: 500, maxDelayMs: 30_000 },
    pingIntervalMs: 30_000,
    ...(oauth ? { oauth } : {}),
  }) as HttpServerConfig

describe('myc auth login, in process, against a real local OAuth server', () => {
  let server: OAuthTestServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  it('a pre-registered confidential client: no registration, the secret on the token request, the configured scopes; a redirect without the login’s state is refused', async () => {
    server = await startOAuthServer({ client: { id: 'myc-pre', secret: 'pre-secret-value' }, registration: false })
    const tokens = store()
    let strayStatus = 0
    const stored = await login({
      server: 'wiki',
      config: http(server.mcpUrl, { clientId: 'myc-pre', clientSecret: 'pre-secret-value', scopes: ['custom:scope'] }),
      store: tokens,
      onAuthorizationUrl: (url) => {
        const callback = new URL(url.searchParams.get('redirect_uri')!)
        // A forged answer (wrong state) first: refused, and the login waits on for the real one.
        void fetch(`${callback.href}?code=forged&state=wrong`)
          .then((r) => (strayStatus = r.status))
          .then(() => fetch(url, { redirect: 'follow' }))
      },
    })
    expect(strayStatus).toBe(400)
    expect(server.registrations).toHaveLength(0)
    const q = server.authorizeRequests.at(-1)!
    expect(q.get('client_id')).toBe('myc-pre')
    expect(q.get('scope')?.split(' ')).toEqual(['custom:scope', 'offline_access'])
    expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{32}$/)
    const exchange = server.tokenRequests.find((f) => f.get('grant_type') === 'authorization_code')!
    expect(exchange.get('code_verifier')).toMatch(/^[A-Za-z0-9._~-]{43,128}$/)
    expect(exchange.get('resource')).toBe(server.mcpUrl)
    expect(stored.client.client_id).toBe('myc-pre')
    expect((await tokens.get(server.mcpUrl))?.tokens.access_token).toBe(stored.tokens.access_token)
    expect(stored.expiresAt).toBeGreaterThan(Date.now())
    // The configured secret is not copied into the store: a refresh takes it from the config.
    expect(stored.client.client_secret).toBeUndefined()
    const unauthorized = {
      response: new Response(null, { status: 401 }),
      serverUrl: new URL(server.mcpUrl),
      fetchFn: fetch,
    }
    const withoutSecret = childAuthProvider({ key: 'wiki', url: server.mcpUrl, store: tokens })
    expect(await withoutSecret.token()).toBe(stored.tokens.access_token)
    await expect(withoutSecret.onUnauthorized!(unauthorized)).rejects.toThrow(
      /refresh was refused.*run: myc auth login wiki/,
    )
    const refreshes = server.refreshes
    const withSecret = childAuthProvider({
      key: 'wiki',
      url: server.mcpUrl,
      store: tokens,
      oauth: { clientId: 'myc-pre', clientSecret: 'pre-secret-value' },
    })
    await withSecret.token()
    await withSecret.onUnauthorized!(unauthorized)
    expect(server.refreshes).toBe(refreshes + 1)
    expect(await withSecret.token()).not.toBe(stored.tokens.access_token)
  })

  it('fails when the person says no, and stores nothing', async () => {
    server = await startOAuthServer({ deny: true })
    const tokens = store()
    await expect(
      login({
        server: 'srv',
        config: http(server.mcpUrl),
        store: tokens,
        onAuthorizationUrl: (url) => void fetch(url, { redirect: 'follow' }),
      }),
    ).rejects.toThrow(/access_denied/)
    expect(await tokens.get(server.mcpUrl)).toBeUndefined()
  })

  it('fails on a timeout with the redirect address named', async () => {
    server = await startOAuthServer()
    await expect(
      login({
        server: 'srv',
        config: http(server.mcpUrl),
        store: store(),
        timeoutMs: 200,
        onAuthorizationUrl: () => {},
      }),
    ).rejects.toThrow(/no authorization came back to http:\/\/127\.0\.0\.1:\d+\/callback within 0 s/)
  })

  it('a server that answers without a challenge asks for no login (unless "oauth" is set)', async () => {
    const open = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'))
    await new Promise<void>((resolve) => open.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(open.address() as AddressInfo).port}/mcp`
      await expect(
        login({ server: 'srv', config: http(url), store: store(), onAuthorizationUrl: () => {} }),
      ).rejects.toThrow(/HTTP 200, not 401: it asks for no login \(add "oauth": \{\} to its config/)
    } finally {
      open.close()
    }
  })
  it('an authorization address that is not http(s) (file:, from the metadata) fails the login naming server and scheme: nothing shown, opened or stored', async () => {
    server = await startOAuthServer({ authorizationEndpoint: () => 'file:///tmp/myc-evil/evil.desktop' })
    const tokens = store()
    const shown: URL[] = []
    const refused =
      /the authorization address of "tracker" is a file: address: myc opens and shows only http and https addresses/
    // `myc auth login`: its onAuthorizationUrl prints the address and opens the browser.
    await expect(
      login({
        server: 'tracker',
        config: http(server.mcpUrl),
        store: tokens,
        timeoutMs: 1_000,
        onAuthorizationUrl: (u) => shown.push(u),
      }),
    ).rejects.toThrow(refused)
    // A running serve asking the person again (step-up, a login gone bad): announce would print and open it.
    const reauthorize = interactiveReauthorize({ announce: (u) => shown.push(u), timeoutMs: 1_000 })
    await expect(reauthorize('tracker', http(server.mcpUrl), tokens, 'a step-up')).rejects.toThrow(refused)
    // `myc serve --http`'s /oauth/login/<server> hands out what beginLogin gives.
    await expect(
      beginLogin({
        server: 'tracker',
        config: http(server.mcpUrl),
        store: tokens,
        redirectUrl: 'http://127.0.0.1:9/callback',
        state: 's',
      }),
    ).rejects.toThrow(refused)
    expect(shown).toEqual([])
    expect(await tokens.get(server.mcpUrl)).toBeUndefined()
  })

  it('an https authorization address on another host is given as it is (the benign twin)', async () => {
    server = await startOAuthServer({
      authorizationEndpoint: () => 'https://login.example.com/oauth/authorize?tenant=a',
    })
    const started = await beginLogin({
      server: 'tracker',
      config: http(server.mcpUrl),
      store: store(),
      redirectUrl: 'http://127.0.0.1:9/callback',
      state: 'st',
    })
    expect(started.url.origin).toBe('https://login.example.com')
    expect(started.url.pathname).toBe('/oauth/authorize')
    expect(started.url.searchParams.get('tenant')).toBe('a')
    expect(started.url.searchParams.get('state')).toBe('st')
  })
})

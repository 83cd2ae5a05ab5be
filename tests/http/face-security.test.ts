import { request as httpRequest, type Server } from 'node:http'
import { exportSPKI, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpFace, type HttpFaceOptions } from '../../src/http/http-face.js'
import { createJwtVerifier } from '../../src/http/jwt.js'
import { createMetrics, type HttpMetrics } from '../../src/http/metrics.js'
import { launchPrincipal } from '../../src/http/principals.js'
import { httpSettings } from '../../src/http/http-settings.js'
import { MemorySessionStore } from '../../src/http/session-store.js'
import { credentialKeyer, readMetricsToken, readTokens, type TokenConfig } from '../../src/http/bearer-tokens.js'
import { openView } from '../../src/principal/view.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { initializeBody, mcpHeaders, serveFace as serve } from '../helpers/http.js'
import { fixtureEntry, loadedConfig, PolicyHarness, startRuntime, waitFor } from '../helpers/runtime.js'
import { createView } from '../../src/principal/policy-mode.js'
import { repoRoot } from '../helpers/fixtures.js'
import { clientFaces } from '../../src/eras/client-faces.js'

const ALICE = 'alice-0123456789abcdef0123456789abcdef'
const BOB = 'bob-0123456789abcdef0123456789abcdef0000'
const SCRAPER = 'scraper-0123456789abcdef0123456789abcdef'
const SECRET = 'a-session-secret-0123456789abcdef0123456789'
const ENV = { A: ALICE, B: BOB, M: SCRAPER, MYC_SESSION_SECRET: SECRET }
const aliceAndBob: TokenConfig[] = [
  { env: 'A', role: 'dev', name: 'alice' },
  { env: 'B', role: 'dev', name: 'bob' },
]

describe('the HTTP face, its security rules, over real HTTP', () => {
  let runtime: Runtime
  let metrics: HttpMetrics
  const faces: HttpFace[] = []
  const servers: Server[] = []

  const start = async (extra: Partial<HttpFaceOptions> = {}, as: 'mcp' | 'metrics' = 'mcp') => {
    const face = new HttpFace({
      runtime,
      logger: runtime.logger,
      listen: { host: '127.0.0.1', port: 8808 },
      path: '/mcp',
      tokens: readTokens(aliceAndBob, ENV),
      launch: launchPrincipal(undefined, undefined),
      viewFor: () => openView(),
      allowedOrigins: [],
      allowedHosts: [],
      maxSessions: 100,
      sessionIdleMs: 60_000,
      maxMessageBytes: 65_536,
      faces: clientFaces(),
      ...extra,
    })
    faces.push(face)
    const { base, server } = await serve(face, as)
    servers.push(server)
    return { face, base, url: `${base}/mcp` }
  }
  const get = (url: string, token?: string, headers: Record<string, string> = {}) =>
    fetch(url, { headers: { ...headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) } })
  const initialize = async (url: string, token?: string) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: mcpHeaders(token ? { Authorization: `Bearer ${token}` } : {}),
      body: initializeBody,
    })
    await response.text()
    return { status: response.status, sessionId: response.headers.get('mcp-session-id') }
  }
  const initialized = async (url: string, token: string | undefined, sessionId: string) => {
    const r = await fetch(url, {
      method: 'POST',
      headers: mcpHeaders({
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        'Mcp-Session-Id': sessionId,
        'MCP-Protocol-Version': '2025-11-25',
      }),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
    await r.text()
    return r.status
  }
  const ping = async (url: string, token: string | undefined, sessionId: string) => {
    const r = await fetch(url, {
      method: 'POST',
      headers: mcpHeaders({
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        'Mcp-Session-Id': sessionId,
        'MCP-Protocol-Version': '2025-11-25',
      }),
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    })
    return { status: r.status, body: await r.text() }
  }

  beforeAll(async () => {
    runtime = await startRuntime({
      mcpServers: {
        vault: fixtureEntry('echo'),
        broken: { command: '/nonexistent/myc-test-no-such-command', restart: { maxRetries: 0 } },
      },
    })
    await waitFor(
      () =>
        runtime.supervisor.children.get('broken')?.state === 'FAILED' &&
        runtime.supervisor.children.get('vault')?.state === 'RUNNING',
      15_000,
      'vault to run and broken to fail',
    )
    metrics = await createMetrics({ runtime, sessions: () => ({ active: 0, inFlight: 0 }), processMetrics: false })
  }, 30_000)
  afterAll(async () => {
    await Promise.all(faces.map((f) => f.close(0)))
    await Promise.all(servers.map((s) => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r())))))
    metrics?.close()
    await runtime?.close()
  })

  describe('/metrics and /readyz need the metrics credential to name anything', () => {
    it('without http.metricsToken or http.metricsListen, GET /metrics is 404 and names no server or tool, with or without a token', async () => {
      const { base } = await start({ metrics })
      for (const token of [undefined, ALICE, SCRAPER]) {
        const r = await get(`${base}/metrics`, token)
        expect(r.status).toBe(404)
        const body = await r.text()
        expect(body).not.toMatch(/vault|myc_/)
        expect(JSON.parse(body)).toMatchObject({
          error: { message: expect.stringMatching(/http\.metricsToken.*http\.metricsListen/) },
        })
      }
    })

    it('with http.metricsToken: 401 with a challenge without it, or with an MCP token; the text for its bearer', async () => {
      const { base } = await start({ metrics, metricsToken: readMetricsToken({ env: 'M' }, ENV, []) })
      const none = await get(`${base}/metrics`)
      expect(none.status).toBe(401)
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="mycelium-metrics"')
      expect(await none.text()).not.toMatch(/vault/)
      for (const token of [ALICE, 'nope']) {
        const r = await get(`${base}/metrics`, token)
        expect(r.status).toBe(401)
        expect(r.headers.get('www-authenticate')).toBe('Bearer realm="mycelium-metrics", error="invalid_token"')
        expect(await r.text()).not.toMatch(/vault/)
      }
      const ok = await get(`${base}/metrics`, SCRAPER)
      expect(ok.status).toBe(200)
      expect(await ok.text()).toMatch(/myc_child_state\{server="vault",state="RUNNING"\} 1/)
      // The metrics token is no MCP credential.
      expect((await initialize(`${base}/mcp`, SCRAPER)).status).toBe(401)
    })

    it('/readyz says ready or not (the status) to anyone, and which servers are not running only to the metrics credential; /healthz says ok', async () => {
      const { base } = await start({ metrics, metricsToken: readMetricsToken({ env: 'M' }, ENV, []) })
      for (const token of [undefined, ALICE, 'nope']) {
        const r = await get(`${base}/readyz`, token)
        expect(r.status).toBe(503)
        expect(await r.json()).toEqual({ ready: false })
      }
      const detailed = await get(`${base}/readyz`, SCRAPER)
      expect(detailed.status).toBe(503)
      expect(await detailed.json()).toEqual({
        ready: false,
        starting: [],
        notRunning: [{ server: 'broken', state: 'FAILED' }],
      })
      const health = await get(`${base}/healthz`)
      expect(health.status).toBe(200)
      expect(await health.text()).toBe('ok')
      // Without a metrics token configured, nobody gets the details on the MCP port.
      const { base: plain } = await start({ metrics })
      expect(await (await get(`${plain}/readyz`, SCRAPER)).json()).toEqual({ ready: false })
    })

    it('http.metricsListen: that address serves /metrics and /readyz details (checking Host), nothing else; the MCP port says where they are', async () => {
      const metricsListen = { host: '127.0.0.1', port: 9464 }
      const { base } = await start({ metrics, metricsListen }, 'metrics')
      const text = await (await get(`${base}/metrics`)).text()
      expect(text).toMatch(/myc_child_state\{server="vault",state="RUNNING"\} 1/)
      expect(await (await get(`${base}/readyz`)).json()).toEqual({
        ready: false,
        starting: [],
        notRunning: [{ server: 'broken', state: 'FAILED' }],
      })
      expect((await get(`${base}/mcp`)).status).toBe(404)
      expect((await initialize(`${base}/mcp`, ALICE)).status).toBe(405)
      expect((await get(`${base}/healthz`)).status).toBe(200)
      // Host is checked there too (DNS rebinding).
      const rebound = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${base}/metrics`, { headers: { Host: 'attacker.example' } }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.on('error', reject)
        req.end()
      })
      expect(rebound).toBe(403)
      const { base: mcp } = await start({ metrics, metricsListen })
      const there = await get(`${mcp}/metrics`)
      expect(there.status).toBe(404)
      expect(await there.text()).toMatch(/served on http\.metricsListen \(127\.0\.0\.1:9464\)/)
    })

    it('with both, the metrics address asks for the token too', async () => {
      const { base } = await start(
        {
          metrics,
          metricsListen: { host: '127.0.0.1', port: 9464 },
          metricsToken: readMetricsToken({ env: 'M' }, ENV, []),
        },
        'metrics',
      )
      expect((await get(`${base}/metrics`)).status).toBe(401)
      expect(await (await get(`${base}/readyz`)).json()).toEqual({ ready: false })
      expect((await get(`${base}/metrics`, SCRAPER)).status).toBe(200)
    })

    it('config: http.metricsToken is read from its variable (a clear error naming the key otherwise), never one of http.tokens; http.metricsListen is an address of its own', () => {
      const tokens = [{ env: 'A', role: 'dev' }]
      const settings = httpSettings(
        loadedConfig({ http: { tokens, metricsToken: { env: 'M' }, metricsListen: '127.0.0.1:9464' } }),
        undefined,
        ENV,
      )
      expect(settings.metricsToken).toBeInstanceOf(Buffer)
      expect(settings.metricsListen).toEqual({ host: '127.0.0.1', port: 9464 })
      expect(() =>
        httpSettings(
          loadedConfig({ http: { tokens, metricsToken: { env: 'MYC_TEST_UNSET_METRICS' } } }),
          undefined,
          ENV,
        ),
      ).toThrow(/http\.metricsToken\.env: environment variable MYC_TEST_UNSET_METRICS is not set/)
      expect(() =>
        httpSettings(loadedConfig({ http: { tokens, metricsToken: { env: 'A' } } }), undefined, ENV),
      ).toThrow(/http\.metricsToken\.env: A holds the same token as http\.tokens\[0\]/)
      expect(() => loadedConfig({ http: { metricsToken: 'plain-text' } })).toThrow(/http\.metricsToken/)
      expect(() => loadedConfig({ http: { metricsListen: 'nowhere' } })).toThrow(/http\.metricsListen/)
      expect(() =>
        httpSettings(
          loadedConfig({ http: { listen: '127.0.0.1:8808', metricsListen: '127.0.0.1:8808' } }),
          undefined,
          ENV,
        ),
      ).toThrow(/http\.metricsListen: 127\.0\.0\.1:8808 is where the MCP endpoint listens/)
    })
  })

  describe('a session is bound to its credential itself, never to its place in http.tokens', () => {
    it('two replicas sharing a store, the second with the tokens reordered or one removed: another token never takes the session over', async () => {
      const store = new MemorySessionStore()
      const first = await start({ sharedStore: store })
      const reordered = await start({ sharedStore: store, tokens: readTokens([aliceAndBob[1]!, aliceAndBob[0]!], ENV) })
      const shortened = await start({ sharedStore: store, tokens: readTokens([aliceAndBob[1]!], ENV) })
      const { status, sessionId } = await initialize(first.url, ALICE)
      expect(status).toBe(200)
      expect(await initialized(first.url, ALICE, sessionId!)).toBe(202)
      // Bob sits where alice was (index 0) on both: the session is still not his, on any replica.
      for (const replica of [first, reordered, shortened]) {
        const r = await ping(replica.url, BOB, sessionId!)
        expect(r.status).toBe(404)
        expect(JSON.parse(r.body)).toMatchObject({
          error: { code: -32001, message: expect.stringMatching(/^Session not found/) },
        })
      }
      // Alice carries it on, on the replica with her token elsewhere in the list.
      expect((await ping(reordered.url, ALICE, sessionId!)).status).toBe(200)
      // The store holds a keyed digest, not an index nor the token.
      const record = await store.load(sessionId!)
      expect(record!.principal.key).toMatch(/^token:[A-Za-z0-9_-]{43}$/)
      expect(JSON.stringify(record)).not.toContain(ALICE)
    })

    it('keys: the same for a token under MYC_SESSION_SECRET whatever its place; without it, of this process only', () => {
      const [a1] = readTokens(aliceAndBob, ENV)
      const [, a2] = readTokens([aliceAndBob[1]!, aliceAndBob[0]!], ENV)
      expect(a1!.key).toBe(a2!.key)
      expect(a1!.key).not.toMatch(/^token:\d+$/)
      const noSecret = { A: ALICE, B: BOB }
      expect(readTokens(aliceAndBob, noSecret)[0]!.key).not.toBe(readTokens(aliceAndBob, noSecret)[0]!.key)
      expect(credentialKeyer(noSecret).shared).toBe(false)
      expect(credentialKeyer(ENV).shared).toBe(true)
      expect(() => credentialKeyer({ MYC_SESSION_SECRET: 'short' })).toThrow(
        /MYC_SESSION_SECRET: 5 characters; use at least 32/,
      )
    })

    it('a Redis session store with tokens needs MYC_SESSION_SECRET (a config error naming it); the memory store does not', () => {
      const raw = { http: { sessionStore: 'redis://127.0.0.1:6399', tokens: aliceAndBob } }
      expect(() => httpSettings(loadedConfig(raw), undefined, { A: ALICE, B: BOB })).toThrow(
        /http\.sessionStore: .*set MYC_SESSION_SECRET to the same random value on every replica/,
      )
      expect(httpSettings(loadedConfig(raw), undefined, ENV).tokens).toHaveLength(2)
      expect(
        httpSettings(loadedConfig({ http: { tokens: aliceAndBob } }), undefined, { A: ALICE, B: BOB }).tokens,
      ).toHaveLength(2)
    })
  })

  describe('one credential cannot take every session', () => {
    it('http.maxSessionsPerCredential: one more session for the same credential ends its least recently used idle one (404 from then on); another credential keeps its own', async () => {
      const { url } = await start({ maxSessionsPerCredential: 2 })
      const opened = [await initialize(url, ALICE), await initialize(url, ALICE)]
      const bobs = await initialize(url, BOB)
      expect(opened.map((o) => o.status)).toEqual([200, 200])
      expect((await initialize(url, ALICE)).status).toBe(200)
      expect((await ping(url, ALICE, opened[0]!.sessionId!)).status).toBe(404)
      expect((await ping(url, ALICE, opened[1]!.sessionId!)).status).toBe(200)
      expect((await ping(url, BOB, bobs.sessionId!)).status).toBe(200)
    })

    it('a session that never completes initialization lives only a short while; an initialized one stays', async () => {
      const { url } = await start({ maxSessionsPerCredential: 2, sessionInitMs: 300 })
      const never = await initialize(url, ALICE)
      const done = await initialize(url, ALICE)
      expect(await initialized(url, ALICE, done.sessionId!)).toBe(202)
      await waitFor(
        async () => (await ping(url, ALICE, never.sessionId!)).status === 404,
        5_000,
        'the uninitialized session to expire (404)',
      )
      expect((await ping(url, ALICE, done.sessionId!)).status).toBe(200)
      expect((await initialize(url, ALICE)).status).toBe(200)
    })

    it('the config: maxSessionsPerCredential defaults to 16 and must be a positive integer', () => {
      expect(loadedConfig({}).config.http.maxSessionsPerCredential).toBe(16)
      expect(loadedConfig({ http: { maxSessionsPerCredential: 3 } }).config.http.maxSessionsPerCredential).toBe(3)
      expect(() => loadedConfig({ http: { maxSessionsPerCredential: 0 } })).toThrow(/http\.maxSessionsPerCredential/)
    })
  })

  describe('JWTs: a subject is required', () => {
    it('a verified JWT without sub is refused with 401 and an error_description; two with subjects are two principals', async () => {
      const keys = await generateKeyPair('ES256')
      const issuer = 'https://id.example.test/'
      const audience = 'myc-unit'
      const jwt = await createJwtVerifier({
        issuer,
        audience,
        publicKey: await exportSPKI(keys.publicKey),
        roleClaim: 'role',
      })
      const sign = (sub?: string) => {
        let t = new SignJWT({ role: 'dev' })
          .setProtectedHeader({ alg: 'ES256' })
          .setIssuer(issuer)
          .setAudience(audience)
          .setIssuedAt()
          .setExpirationTime('5m')
        if (sub !== undefined) t = t.setSubject(sub)
        return t.sign(keys.privateKey)
      }
      const { url, base } = await start({ tokens: [], jwt })
      for (const token of [await sign(), await sign('')]) {
        const r = await fetch(url, {
          method: 'POST',
          headers: mcpHeaders({ Authorization: `Bearer ${token}` }),
          body: initializeBody,
        })
        expect(r.status).toBe(401)
        expect(r.headers.get('www-authenticate')).toBe(
          `Bearer realm="mycelium", resource_metadata="${base}/.well-known/oauth-protected-resource", error="invalid_token", error_description="the token has no sub claim (myc binds a caller to iss and sub)"`,
        )
        expect(((await r.json()) as { error: { message: string } }).error.message).toBe(
          'Unauthorized: the token has no sub claim (myc binds a caller to iss and sub)',
        )
      }
      const g = await sign('g')
      const opened = await initialize(url, g)
      expect(opened.status).toBe(200)
      expect((await ping(url, g, opened.sessionId!)).status).toBe(200)
      // Another subject presenting the session id: not found.
      expect((await ping(url, await sign('h'), opened.sessionId!)).status).toBe(404)
    })
  })

  describe('Origin: the same origin is the same scheme, host and port', () => {
    it("a page on https:// at myc's host:port is another origin than myc on http://", async () => {
      const { url, base } = await start({ tokens: [] })
      const port = new URL(base).port
      const withOrigin = (origin: string) =>
        fetch(url, { method: 'POST', headers: mcpHeaders({ Origin: origin }), body: initializeBody })
      const https = await withOrigin(`https://127.0.0.1:${port}`)
      expect(https.status).toBe(403)
      expect(await https.text()).toMatch(/is not allowed \(list it in http\.allowedOrigins\)/)
      expect((await withOrigin(`http://127.0.0.1:${Number(port) + 1}`)).status).toBe(403)
      const same = await withOrigin(`http://127.0.0.1:${port}`)
      expect(same.status).toBe(200)
      await same.text()
    })
  })
})

/** The result (or error) of one JSON-RPC request in a session, read from JSON or from the SSE stream. */
async function rpc(
  url: string,
  token: string,
  sessionId: string,
  method: string,
  params: Record<string, unknown> = {},
): Promise<{ status: number; result?: Record<string, unknown>; error?: { message: string } }> {
  const r = await fetch(url, {
    method: 'POST',
    headers: mcpHeaders({
      Authorization: `Bearer ${token}`,
      'Mcp-Session-Id': sessionId,
      'MCP-Protocol-Version': '2025-11-25',
    }),
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  })
  const text = await r.text()
  if (r.status !== 200) return { status: r.status, ...(text ? (JSON.parse(text) as object) : {}) }
  const messages = (r.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data:') && l.slice(5).trim() !== '')
        .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>)
    : [JSON.parse(text) as Record<string, unknown>]
  const answer = messages.find((m) => m.id === 7)!
  return { status: r.status, ...(answer as object) }
}

describe('a session narrowed by a narrower JWT, across two replicas sharing a store (policy mode, real HTTP)', () => {
  const harness = new PolicyHarness(async () =>
    loadedConfig({
      mcpServers: { echo: fixtureEntry('echo') },
      skills: { dirs: [`${repoRoot}/tests/fixtures/http/skills`] },
      session: { defaultSkills: ['common'] },
    }),
  )
  const faces: HttpFace[] = []
  const servers: Server[] = []
  let keys: Awaited<ReturnType<typeof generateKeyPair>>
  const issuer = 'https://id.example.test/'
  const audience = 'myc-narrow'
  const sign = (claims: Record<string, unknown>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject('carol')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(keys.privateKey)

  beforeAll(async () => {
    await harness.start()
    keys = await generateKeyPair('ES256')
  }, 30_000)
  afterAll(async () => {
    await Promise.all(faces.map((f) => f.close(0)))
    await Promise.all(servers.map((s) => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r())))))
    await harness.close()
  })

  const replica = async (store: MemorySessionStore) => {
    const { runtime, loaded, mode } = harness
    const jwt = await createJwtVerifier({
      issuer,
      audience,
      publicKey: await exportSPKI(keys.publicKey),
      roleClaim: 'role',
      skillsClaim: 'scope',
    })
    const face = new HttpFace({
      runtime,
      faces: clientFaces(),
      logger: runtime.logger,
      listen: { host: '127.0.0.1', port: 8808 },
      path: '/mcp',
      tokens: [],
      jwt,
      identity: (role, skills) =>
        mode.kind === 'policy'
          ? { ok: true, skills: skills.filter((s) => mode.state.policy.reaches(role, s)) }
          : { ok: true, skills: [] },
      launch: launchPrincipal(undefined, undefined),
      viewFor: (p) =>
        createView(mode, loaded, {
          role: p.role,
          skills: p.skills,
          env: {},
          catalogue: runtime.catalogue,
          logger: harness.logger,
          transport: 'http',
        }),
      allowedOrigins: [],
      allowedHosts: [],
      maxSessions: 100,
      sessionIdleMs: 60_000,
      maxMessageBytes: 65_536,
      sharedStore: store,
    })
    faces.push(face)
    const { base, server } = await serve(face)
    servers.push(server)
    return `${base}/mcp`
  }

  it('narrowed on one replica, narrow on the other too; a wider token widens it on neither; activating the skill again is refused', async () => {
    const store = new MemorySessionStore()
    const [a, b] = [await replica(store), await replica(store)]
    const wide = await sign({ role: 'guest', scope: 'skill:reader' })
    const narrow = await sign({ role: 'guest', scope: 'openid' })
    const opened = await fetch(a, {
      method: 'POST',
      headers: mcpHeaders({ Authorization: `Bearer ${wide}` }),
      body: initializeBody,
    })
    await opened.text()
    const id = opened.headers.get('mcp-session-id')!
    await (
      await fetch(a, {
        method: 'POST',
        headers: mcpHeaders({
          Authorization: `Bearer ${wide}`,
          'Mcp-Session-Id': id,
          'MCP-Protocol-Version': '2025-11-25',
        }),
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      })
    ).text()
    const tools = async (url: string, token: string) => {
      const answer = await rpc(url, token, id, 'tools/list')
      expect(answer.status, JSON.stringify(answer)).toBe(200)
      return (answer.result!.tools as Array<{ name: string }>).map((t) => t.name)
    }
    expect(await tools(a, wide)).toContain('echo__add')
    // The narrower token reaches replica b (which takes the session over) and narrows it there, at once.
    expect(await tools(b, narrow)).not.toContain('echo__add')
    // Replica a, holding the session too, sees it narrowed, even for the wider token.
    expect(await tools(a, wide)).not.toContain('echo__add')
    expect(await tools(b, wide)).not.toContain('echo__add')
    const again = await rpc(a, wide, id, 'tools/call', {
      name: 'mycelium__activate_skill',
      arguments: { name: 'reader' },
    })
    expect(again.result).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/Skill reader is no longer granted/) }],
    })
    expect(await tools(b, wide)).not.toContain('echo__add')
    const record = await store.load(id)
    expect(record).toMatchObject({ principal: { skills: [] }, revoked: ['reader'] })
    // The skills every session has stay.
    expect(await tools(a, narrow)).toContain('echo__echo')
  })
})

import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { Client, InsufficientScopeError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { protocolErrorOf, writeConfig } from '../helpers/e2e.js'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'
import { connectHttp, startHttpMyc, type HttpMyc } from '../helpers/http.js'
import { waitFor } from '../helpers/runtime.js'

/**
 * MCP 2026-07-28 over `myc serve --http`, beside the 2025 session route on
 * the same port: SDK 2.x clients pinned to 2026-07-28 (versionNegotiation)
 * and 2025 clients in the same run. A 2026 request's principal is its
 * credential alone: a static token's role and skills, a JWT's role and
 * skill scopes; activate_skill is the OAuth scope step-up.
 */

const MODERN = '2026-07-28'
const TOKENS = {
  MYC_E2E_TOKEN_ALICE: 'alice-0123456789abcdef0123456789abcdef',
  MYC_E2E_TOKEN_BOB: 'bob-0123456789abcdef0123456789abcdef00',
}
const alice = TOKENS.MYC_E2E_TOKEN_ALICE
const bob = TOKENS.MYC_E2E_TOKEN_BOB
/** http.metricsToken: /metrics answers only to it. */
const SCRAPER = 'scraper-modern-0123456789abcdef0123456789'
const server = (name: string) => ({ command: process.execPath, args: [fixtureServer(name)] })
const skillsDir = path.join(repoRoot, 'tests/fixtures/http/skills')
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} }

/** An SDK 2.x client pinned to the 2026-07-28 revision. */
async function connectModern(url: string, token?: string, setup?: (client: Client) => void): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {},
  )
  const client = new Client({ name: 'modern-e2e', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } })
  setup?.(client)
  await client.connect(transport)
  return client
}

/** The tool names a client sees, asked of the server every time (never the client's cache). */
async function names(client: Client): Promise<string[]> {
  return (await client.listTools(undefined, { cacheMode: 'bypass' })).tools.map((t) => t.name)
}

function text(result: { content?: unknown }): string {
  return (result.content as Array<{ text: string }>)[0]!.text
}

/** A 2026-07-28 request as a plain POST: the envelope in `_meta`, the standard headers (overridable). */
function modernPost(
  url: string,
  token: string | undefined,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string | null> = {},
): Promise<Response> {
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined
  const all: Record<string, string | null> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': method,
    ...(name !== undefined ? { 'Mcp-Name': name } : {}),
    ...(token ? { Authorization: `Bearer ${token}` } : {}),
    ...headers,
  }
  const sent = Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== null))
  return fetch(url, {
    method: 'POST',
    headers: sent,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { ...params, _meta: { ...ENVELOPE, ...(params._meta as object | undefined) } },
    }),
  })
}

/** The value of one Prometheus sample line, 0 when absent. */
function sample(metrics: string, line: string): number {
  const found = metrics.split('\n').find((l) => l.startsWith(`${line} `))
  return found ? Number(found.slice(line.length + 1)) : 0
}

describe('myc serve --http: MCP 2026-07-28 beside the 2025 sessions (build/myc.cjs)', () => {
  const issuer = 'https://id.example.test/'
  const audience = 'myc-e2e'
  let keys: Awaited<ReturnType<typeof generateKeyPair>>
  let jwks: Server
  let m: HttpMyc
  const clients: Client[] = []
  const keep = <T extends Client>(c: T): T => {
    clients.push(c)
    return c
  }
  const sign = (claims: Record<string, unknown>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(String(claims.sub))
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(keys.privateKey)

  beforeAll(async () => {
    keys = await generateKeyPair('ES256')
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256' }
    jwks = createServer((_req, res) =>
      res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })),
    )
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r))
    const config = writeConfig({
      mcpServers: { echo: server('echo'), asker: server('elicit'), slow: server('progress') },
      skills: { dirs: [skillsDir] },
      roles: { default: 'guest' },
      session: { defaultSkills: ['common'] },
      http: {
        // alice: guest; bob: developer with the interactive skill.
        tokens: [
          { env: 'MYC_E2E_TOKEN_ALICE', role: 'guest', name: 'alice' },
          { env: 'MYC_E2E_TOKEN_BOB', role: 'developer', skills: ['interactive'], name: 'bob' },
        ],
        jwt: {
          issuer,
          audience,
          jwksUrl: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`,
          roleClaim: 'role',
          skillsClaim: 'scope',
        },
        metricsToken: { env: 'MYC_E2E_METRICS_TOKEN' },
      },
    })
    m = await startHttpMyc(config, { env: { ...TOKENS, MYC_E2E_METRICS_TOKEN: SCRAPER } })
  }, 30_000)
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})))
    const code = await m?.stop()
    await new Promise<void>((r) => jwks?.close(() => r()))
    expect(code).toBe(0)
  })

  it('serves both eras on one port: a 2025 session and 2026 requests of the same token, side by side', async () => {
    const legacy = keep((await connectHttp(m.url, { token: alice })).client)
    const modern = keep(await connectModern(m.url, alice))
    expect(legacy.getNegotiatedProtocolVersion?.() ?? '2025-11-25').not.toBe(MODERN)
    expect(modern.getNegotiatedProtocolVersion?.()).toBe(MODERN)
    const [l, n] = await Promise.all([names(legacy), names(modern)])
    expect(l).toEqual([
      'mycelium__list_skills',
      'mycelium__activate_skill',
      'mycelium__deactivate_skill',
      'mycelium__get_context',
      'mycelium__search_tools',
      'echo__echo',
      'echo__log',
    ])
    // The 2026 era has no deactivate_skill: a credential's skills cannot be dropped by a request.
    expect(n).toEqual([
      'mycelium__list_skills',
      'mycelium__activate_skill',
      'mycelium__get_context',
      'mycelium__search_tools',
      'echo__echo',
      'echo__log',
    ])
    const [a, b] = await Promise.all([
      legacy.callTool({ name: 'echo__echo', arguments: { message: 'old' } }),
      modern.callTool({ name: 'echo__echo', arguments: { message: 'new' } }),
    ])
    expect([text(a), text(b)]).toEqual(['old', 'new'])
    // A 2026 request opens no session.
    const raw = await modernPost(m.url, alice, 'tools/list')
    expect(raw.status).toBe(200)
    expect(raw.headers.get('mcp-session-id')).toBeNull()
  })

  it('two tokens see two tool sets, and a hidden tool, prompt or resource answers exactly as one that never existed', async () => {
    const a = keep(await connectModern(m.url, alice))
    const b = keep(await connectModern(m.url, bob))
    expect(await names(a)).toEqual([
      'mycelium__list_skills',
      'mycelium__activate_skill',
      'mycelium__get_context',
      'mycelium__search_tools',
      'echo__echo',
      'echo__log',
    ])
    expect(await names(b)).toEqual([
      'mycelium__list_skills',
      'mycelium__activate_skill',
      'mycelium__get_context',
      'mycelium__search_tools',
      'echo__echo',
      'echo__log',
      'asker__ask',
      'asker__sample',
      'slow__count',
    ])
    const never = await protocolErrorOf(() => a.callTool({ name: 'zz__never', arguments: {} }))
    expect(never).toBe('-32602 Unknown tool: zz__never')
    for (const hidden of ['slow__count', 'asker__ask', 'echo__add', 'mycelium__deactivate_skill']) {
      expect(await protocolErrorOf(() => a.callTool({ name: hidden, arguments: {} }))).toBe(
        never.replace('zz__never', hidden),
      )
    }
    // Resource not found is -32602 in the 2026 era, as in the 2025 one.
    expect(await protocolErrorOf(() => a.readResource({ uri: 'echo://nothing/here' }))).toBe(
      '-32602 Resource not found: echo://nothing/here',
    )
    expect(await protocolErrorOf(() => a.getPrompt({ name: 'zz__never' }))).toBe('-32602 Unknown prompt: zz__never')
    expect(text(await b.callTool({ name: 'slow__count', arguments: { steps: 1, stepMs: 1 } }))).toBe('counted 1')
  })

  it('server/discover, and lists with cacheScope "private", a ttlMs and resultType', async () => {
    const discover = await modernPost(m.url, alice, 'server/discover')
    expect(discover.status).toBe(200)
    const d = (await discover.json()) as { result: Record<string, unknown> }
    expect(d.result).toMatchObject({
      supportedVersions: [MODERN],
      resultType: 'complete',
      cacheScope: 'private',
      capabilities: { tools: { listChanged: true } },
    })
    expect(d.result.capabilities).not.toHaveProperty('tasks')
    for (const [method, key] of [
      ['tools/list', 'tools'],
      ['prompts/list', 'prompts'],
      ['resources/list', 'resources'],
      ['resources/templates/list', 'resourceTemplates'],
    ] as const) {
      const r = await modernPost(m.url, alice, method)
      expect(r.status, method).toBe(200)
      const body = (await r.json()) as { result: Record<string, unknown> }
      expect(body.result, method).toMatchObject({
        resultType: 'complete',
        cacheScope: 'private',
        ttlMs: expect.any(Number),
      })
      expect(body.result.ttlMs as number, method).toBeGreaterThan(0)
      expect(Array.isArray(body.result[key]), method).toBe(true)
    }
    const read = (await (await modernPost(m.url, alice, 'resources/read', { uri: 'echo://item/7' })).json()) as {
      result: Record<string, unknown>
    }
    expect(read.result).toMatchObject({
      resultType: 'complete',
      cacheScope: 'private',
      contents: [{ uri: 'echo://item/7', text: 'item 7' }],
    })
  })

  it('activate_skill for a skill the token does not grant: 403 insufficient_scope naming skill:<name>; the list never changes', async () => {
    const modern = keep(await connectModern(m.url, alice))
    const before = await names(modern)
    const refused = await modern.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'reader' } }).then(
      () => undefined,
      (error: unknown) => error,
    )
    // The SDK client with no OAuth provider to step up with surfaces the challenge as is.
    expect(refused).toBeInstanceOf(InsufficientScopeError)
    expect((refused as InsufficientScopeError).requiredScope).toBe('skill:reader')
    const raw = await modernPost(m.url, alice, 'tools/call', {
      name: 'mycelium__activate_skill',
      arguments: { name: 'reader' },
    })
    expect(raw.status).toBe(403)
    expect(raw.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", error_description="Skill reader needs the scope skill:reader", scope="skill:reader", resource_metadata="${m.base}/.well-known/oauth-protected-resource"`,
    )
    expect(await raw.json()).toMatchObject({ error: 'insufficient_scope' })
    expect(await names(modern)).toEqual(before)
    expect(before).not.toContain('echo__add')

    // A 2025 session of the same token escalates by tool, as always; the token's 2026 requests see none of it.
    const legacy = keep((await connectHttp(m.url, { token: alice })).client)
    expect(text(await legacy.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'reader' } }))).toMatch(
      /^Skill reader is active\./,
    )
    expect((await legacy.listTools()).tools.map((t) => t.name)).toContain('echo__add')
    expect(await names(modern)).toEqual(before)

    // A granted skill answers with its instructions; one the role cannot use, or that does not exist, as an unknown skill; nothing changes.
    const granted = await modern.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'common' } })
    expect(text(granted)).toBe('Skill common is already active.\n\nEcho things.')
    for (const skill of ['writer', 'no-such-skill']) {
      const r = await modern.callTool({ name: 'mycelium__activate_skill', arguments: { name: skill } })
      expect(r.isError).toBe(true)
      expect(text(r)).toBe(`Unknown skill: ${skill}. Call list_skills to see the skills you can activate.`)
    }
    expect(await names(modern)).toEqual(before)
  })

  it("a JWT's skill scopes widen the set; stepping up is presenting a token that grants the scope", async () => {
    const plain = await sign({ sub: 'carol', role: 'guest', scope: 'openid' })
    const stepped = await sign({ sub: 'carol', role: 'guest', scope: 'openid skill:reader' })
    const c1 = keep(await connectModern(m.url, plain))
    const c2 = keep(await connectModern(m.url, stepped))
    expect(await names(c1)).not.toContain('echo__add')
    expect(await names(c2)).toContain('echo__add')
    const challenge = await modernPost(m.url, plain, 'tools/call', {
      name: 'mycelium__activate_skill',
      arguments: { name: 'reader' },
    })
    expect(challenge.status).toBe(403)
    expect(challenge.headers.get('www-authenticate')).toContain('scope="skill:reader"')
    const after = await c2.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'reader' } })
    expect(text(after)).toBe('Skill reader is already active.\n\nReader instructions.')
    expect(text(await c2.callTool({ name: 'echo__add', arguments: { a: 2, b: 3 } }))).toBe('5')
    // The first token still sees what it saw.
    expect(await names(c1)).not.toContain('echo__add')
  })

  it('checks MCP-Protocol-Version, Mcp-Method and Mcp-Name, and answers with the 2026 error codes', async () => {
    const error = async (r: Response) => ({
      status: r.status,
      code: ((await r.json()) as { error: { code: number } }).error.code,
    })
    expect(await error(await modernPost(m.url, alice, 'tools/list', {}, { 'Mcp-Method': 'prompts/list' }))).toEqual({
      status: 400,
      code: -32020,
    })
    expect(
      await error(
        await modernPost(
          m.url,
          alice,
          'tools/call',
          { name: 'echo__echo', arguments: { message: 'x' } },
          { 'Mcp-Name': 'echo__log' },
        ),
      ),
    ).toEqual({ status: 400, code: -32020 })
    expect(
      await error(
        await modernPost(
          m.url,
          alice,
          'tools/call',
          { name: 'echo__echo', arguments: { message: 'x' } },
          { 'Mcp-Name': null },
        ),
      ),
    ).toEqual({ status: 400, code: -32020 })
    expect(await error(await modernPost(m.url, alice, 'tools/list', {}, { 'MCP-Protocol-Version': null }))).toEqual({
      status: 400,
      code: -32020,
    })
    expect(
      await error(
        await modernPost(
          m.url,
          alice,
          'tools/list',
          { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
          { 'MCP-Protocol-Version': '2099-01-01' },
        ),
      ),
    ).toEqual({ status: 400, code: -32022 })
    // A modern header on a body without the envelope.
    const bare = await fetch(m.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${alice}`,
        'MCP-Protocol-Version': MODERN,
        'Mcp-Method': 'tools/list',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(await error(bare)).toEqual({ status: 400, code: -32602 })
    // Credentials are checked first, whatever the era.
    expect((await modernPost(m.url, undefined, 'tools/list')).status).toBe(401)
  })

  it("progress, the request's own log level and cancellation reach through to the children", async () => {
    const logs: unknown[] = []
    const b = keep(
      await connectModern(m.url, bob, (c) =>
        c.setNotificationHandler('notifications/message', (n) => void logs.push(n.params)),
      ),
    )
    const progress: number[] = []
    const counted = await b.callTool(
      { name: 'slow__count', arguments: { steps: 3, stepMs: 10 } },
      { onprogress: (p) => void progress.push(p.progress) },
    )
    expect(text(counted)).toBe('counted 3')
    expect(progress).toEqual([1, 2, 3])
    // No log level in the request: no log messages.
    await b.callTool({ name: 'echo__log', arguments: { text: 'quiet' } })
    expect(logs).toEqual([])
    await b.callTool({
      name: 'echo__log',
      arguments: { text: 'loud' },
      _meta: { 'io.modelcontextprotocol/logLevel': 'info' },
    })
    expect(logs).toEqual([{ level: 'info', logger: 'echo', data: { said: 'loud' } }])
    await b.callTool({
      name: 'echo__log',
      arguments: { text: 'too low' },
      _meta: { 'io.modelcontextprotocol/logLevel': 'error' },
    })
    expect(logs).toHaveLength(1)

    // Aborting the request cancels the child's call: it ends at once (counted, with no duration: cancelled) instead of running its 10 s.
    const metrics = () =>
      fetch(`${m.base}/metrics`, { headers: { Authorization: `Bearer ${SCRAPER}` } }).then((r) => r.text())
    const calls = 'myc_tool_calls_total{server="slow",tool="count"}'
    const timed = 'myc_tool_call_duration_seconds_count{server="slow",tool="count"}'
    const before = await metrics()
    const abort = new AbortController()
    const call = b
      .callTool({ name: 'slow__count', arguments: { steps: 100, stepMs: 100 } }, { signal: abort.signal })
      .then(
        () => 'answered',
        () => 'aborted',
      )
    setTimeout(() => abort.abort(), 300)
    expect(await call).toBe('aborted')
    await waitFor(
      async () => sample(await metrics(), calls) === sample(before, calls) + 1,
      3_000,
      'the cancelled call to end',
    )
    expect(sample(await metrics(), timed)).toBe(sample(before, timed))

    // A child's elicitation during a 2026 call of a client that did not declare elicitation: declined for the child, not left hanging; its sampling: refused, and the failed call answered -32021 naming it.
    expect(
      JSON.parse(
        ((await b.callTool({ name: 'asker__ask', arguments: {} })).content as Array<{ text: string }>)[0]!.text,
      ),
    ).toEqual({ action: 'decline' })
    expect(await protocolErrorOf(() => b.callTool({ name: 'asker__sample', arguments: {} }))).toMatch(
      /-32021.*sampling/,
    )
  })
})

describe('myc serve --http without credentials: the 2026 era as the launch principal (build/myc.cjs)', () => {
  let m: HttpMyc
  let client: Client | undefined
  beforeAll(async () => {
    m = await startHttpMyc(
      writeConfig({
        mcpServers: { echo: server('echo') },
        skills: { dirs: [skillsDir] },
        roles: { default: 'guest' },
        session: { defaultSkills: ['common'] },
      }),
    )
  }, 30_000)
  afterAll(async () => {
    await client?.close().catch(() => {})
    await m?.stop()
  })

  it('a skill the launch does not grant cannot be had by a request: activate_skill says how to get it, and the list stays', async () => {
    client = await connectModern(m.url)
    const before = await names(client)
    expect(before).toEqual([
      'mycelium__list_skills',
      'mycelium__activate_skill',
      'mycelium__get_context',
      'mycelium__search_tools',
      'echo__echo',
      'echo__log',
    ])
    const r = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'reader' } })
    expect(r.isError).toBe(true)
    expect(text(r)).toMatch(/^Skill reader is not granted to this client\. .*skill:reader.*--skills reader/)
    expect(await names(client)).toEqual(before)
  })
})

import { spawnSync } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'
import {
  connectHttp,
  freePort,
  initializeBody,
  mcpHeaders,
  rawInitialize,
  startHttpMyc,
  type HttpMyc,
} from '../helpers/http.js'
import { quietWindow, waitFor } from '../helpers/wait-for.js'

const TOKENS = {
  MYC_E2E_TOKEN_ALICE: 'alice-0123456789abcdef0123456789abcdef',
  MYC_E2E_TOKEN_BOB: 'bob-0123456789abcdef0123456789abcdef00',
}
const alice = TOKENS.MYC_E2E_TOKEN_ALICE
const bob = TOKENS.MYC_E2E_TOKEN_BOB
const SCRAPER = 'scraper-serve-0123456789abcdef0123456789ab'
const skillsDir = path.join(repoRoot, 'tests/fixtures/http/skills')
const server = (name: string) => ({ command: process.execPath, args: [fixtureServer(name)] })

/** Policy mode, two tokens: alice (guest), bob (developer, starting with the interactive skill). */
const teamConfig = {
  mcpServers: {
    echo: server('echo'),
    grow: server('list-changing'),
    asker: server('elicit'),
    slow: server('progress'),
  },
  skills: { dirs: [skillsDir] },
  roles: { default: 'guest' },
  session: { defaultSkills: ['common'], protectedSkills: ['common'] },
  limits: { maxMessageBytes: 65_536 },
  http: {
    tokens: [
      { env: 'MYC_E2E_TOKEN_ALICE', role: 'guest', name: 'alice' },
      { env: 'MYC_E2E_TOKEN_BOB', role: 'developer', skills: ['interactive'], name: 'bob' },
    ],
    allowedOrigins: ['https://app.example.com'],
    // 100 sessions at once from two tokens (the default cap is 16 a credential).
    maxSessionsPerCredential: 64,
  },
}

const META = [
  'mycelium__list_skills',
  'mycelium__activate_skill',
  'mycelium__deactivate_skill',
  'mycelium__get_context',
  'mycelium__search_tools',
]

function text(result: { content?: unknown }): string {
  return (result.content as Array<{ text: string }>)[0]!.text
}

async function names(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name)
}

/** The JSON body of a refusal, checked to be a JSON-RPC error with id null. */
async function refusalBody(response: Response): Promise<{ code: number; message: string }> {
  expect(response.headers.get('content-type')).toMatch(/application\/json/)
  const body = (await response.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } }
  expect(body.jsonrpc).toBe('2.0')
  expect(body.id).toBeNull()
  return body.error
}

function myc(args: string[], env: Record<string, string> = {}) {
  requireBundle()
  const r = spawnSync(process.execPath, [bundle, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
    input: '',
    env: { ...(process.env as Record<string, string>), ...env },
  })
  return { code: r.status, stderr: r.stderr, stdout: r.stdout }
}

describe('myc serve --http: a team over Streamable HTTP (build/myc.cjs)', () => {
  let m: HttpMyc
  const clients: Client[] = []
  const open = async (...args: Parameters<typeof connectHttp>) => {
    const c = await connectHttp(...args)
    clients.push(c.client)
    return c
  }

  beforeAll(async () => {
    m = await startHttpMyc(writeConfig(teamConfig), { env: TOKENS })
  })
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})))
    const code = await m?.stop()
    expect(code).toBe(0)
  })

  it('each token is its own principal: two tokens see two tool sets, and a hidden tool answers as one that does not exist', async () => {
    const { client: a } = await open(m.url, { token: alice })
    const { client: b } = await open(m.url, { token: bob })
    expect(await names(a)).toEqual([...META, 'echo__echo', 'echo__log'])
    expect(await names(b)).toEqual([...META, 'echo__echo', 'echo__log', 'asker__ask', 'asker__sample', 'slow__count'])
    const hidden = await a.callTool({ name: 'asker__ask', arguments: {} }).then(
      () => 'called',
      (e: Error) => e.message.replace('asker__ask', 'NAME'),
    )
    const missing = await a.callTool({ name: 'nope__nope', arguments: {} }).then(
      () => 'called',
      (e: Error) => e.message.replace('nope__nope', 'NAME'),
    )
    expect(hidden).toMatch(/Unknown tool: NAME/)
    expect(hidden).toBe(missing)
    expect(text(await a.callTool({ name: 'echo__echo', arguments: { message: 'hi' } }))).toBe('hi')
  })

  it("one session's escalation never shows in another, even of the same token", async () => {
    let changed1 = 0
    let changed2 = 0
    const { client: b1 } = await open(m.url, {
      token: bob,
      setup: (c) => c.setNotificationHandler('notifications/tools/list_changed', () => void changed1++),
    })
    const { client: b2 } = await open(m.url, {
      token: bob,
      setup: (c) => c.setNotificationHandler('notifications/tools/list_changed', () => void changed2++),
    })
    let changedA = 0
    const { client: a } = await open(m.url, {
      token: alice,
      setup: (c) => c.setNotificationHandler('notifications/tools/list_changed', () => void changedA++),
    })
    await b1.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'writer' } })
    await waitFor(() => changed1 > 0, 5_000, 'list_changed in the escalated session')
    // The other session of the same token must hear nothing of the escalation.
    await quietWindow(200)
    expect(changed2).toBe(0)
    expect(await names(b1)).toContain('grow__grow')
    const before = changed1
    expect(text(await b1.callTool({ name: 'grow__grow', arguments: { name: 'leaf' } }))).toBe('added leaf')
    // The child's new tool is news only to the session that can see it: the others are not told (nor that grow exists).
    await waitFor(() => changed1 > before, 5_000, 'list_changed after the child grew')
    expect(await names(b1)).toContain('grow__leaf')
    // Neither b2 nor alice may hear of the new tool.
    await quietWindow(200)
    expect([changed2, changedA]).toEqual([0, 0])
    expect(await names(b2)).not.toContain('grow__grow')
    expect(await names(a)).not.toContain('grow__grow')
    await expect(b2.callTool({ name: 'grow__grow', arguments: { name: 'x' } })).rejects.toThrow(
      /Unknown tool: grow__grow/,
    )
    // Alice's guest role cannot reach the skill at all.
    const refused = await a.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'writer' } })
    expect(refused.isError).toBe(true)
  })

  it('a child that elicits during a call asks only the session whose call it is serving', async () => {
    const asked: string[] = []
    const answering = (who: string, colour: string) => (c: Client) =>
      c.setRequestHandler('elicitation/create', (request) => {
        asked.push(`${who}: ${(request.params as { message: string }).message}`)
        return { action: 'accept', content: { colour } }
      })
    const { client: a } = await open(m.url, {
      token: bob,
      capabilities: { elicitation: { form: {} } },
      setup: answering('A', 'blue'),
    })
    const { client: b } = await open(m.url, {
      token: bob,
      capabilities: { elicitation: { form: {} } },
      setup: answering('B', 'red'),
    })
    const { client: mute } = await open(m.url, { token: bob })

    // A's call is in flight when B becomes the most recently active client: the question still goes to A.
    const waiting = () => m.stderr().split('elicit: ask waits 600 ms').length - 1
    const before = waiting()
    const call = a.callTool({ name: 'asker__ask', arguments: { delayMs: 600 } })
    await waitFor(() => waiting() > before, 5_000, "A's call to reach the child")
    await b.listTools()
    expect(text(await b.callTool({ name: 'echo__echo', arguments: { message: 'busy' } }))).toBe('busy')
    expect(JSON.parse(text(await call))).toEqual({ action: 'accept', content: { colour: 'blue' } })
    expect(asked).toEqual(['A: [asker] Favourite colour?'])

    // A session that cannot answer is refused; the ones that could are not asked in its place.
    const refused = await mute.callTool({ name: 'asker__ask', arguments: {} })
    expect(text(refused)).toMatch(/refused: .*does not support elicitation \(asked by server "asker"\)/)
    expect(asked).toHaveLength(1)

    // Calls of two sessions in flight at once: the child cannot say whose question it is, so none is misrouted.
    asked.length = 0
    const [ra, rb] = await Promise.all([
      a.callTool({ name: 'asker__ask', arguments: { delayMs: 1_000 } }),
      b.callTool({ name: 'asker__ask', arguments: { delayMs: 1_000 } }),
    ])
    const outcomes = [text(ra), text(rb)]
    expect(outcomes.some((o) => /cannot tell which of 2 clients/.test(o))).toBe(true)
    if (!/refused/.test(outcomes[0]!)) expect(JSON.parse(outcomes[0]!).content).toEqual({ colour: 'blue' })
    if (!/refused/.test(outcomes[1]!)) expect(JSON.parse(outcomes[1]!).content).toEqual({ colour: 'red' })
    for (const line of asked) expect(outcomes[line.startsWith('A') ? 0 : 1]).not.toMatch(/refused/)
  })

  it("a child's log messages and progress during a call reach only the calling session", async () => {
    const logs: Record<string, unknown[]> = { A: [], B: [] }
    const logging = (who: string) => (c: Client) =>
      c.setNotificationHandler('notifications/message', (n) => void logs[who]!.push(n.params))
    const { client: a } = await open(m.url, { token: bob, setup: logging('A') })
    const { client: b } = await open(m.url, { token: bob, setup: logging('B') })
    await a.setLoggingLevel('debug')
    await b.setLoggingLevel('debug')
    expect(text(await a.callTool({ name: 'echo__log', arguments: { text: 'from A' } }))).toBe('logged')
    await waitFor(() => logs.A!.length > 0, 5_000, 'the log message in session A')
    expect(logs.A![0]).toMatchObject({ level: 'info', logger: 'echo', data: { said: 'from A' } })
    // Session B (same token) must not get A's log message.
    await quietWindow(200)
    expect(logs.B).toEqual([])

    const progress: number[] = []
    const counted = await a.callTool(
      { name: 'slow__count', arguments: { steps: 3, stepMs: 30 } },
      { onprogress: (p) => void progress.push(p.progress) },
    )
    expect(text(counted)).toBe('counted 3')
    expect(progress).toEqual([1, 2, 3])
  })

  it('100 sessions at once, each making a call', async () => {
    const many = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const { client, transport } = await connectHttp(m.url, { token: i % 2 ? alice : bob })
        const result = await client.callTool({ name: 'echo__echo', arguments: { message: `m${i}` } })
        return { client, transport, text: text(result), id: transport.sessionId }
      }),
    )
    expect(many.map((x) => x.text)).toEqual(Array.from({ length: 100 }, (_, i) => `m${i}`))
    expect(new Set(many.map((x) => x.id)).size).toBe(100)
    await Promise.all(
      many.map(async (x) => {
        await x.transport.terminateSession()
        await x.client.close()
      }),
    )
  }, 90_000)

  it('refuses what it cannot serve with the right status and a JSON-RPC error body', async () => {
    const post = (body: string, headers: Record<string, string> = {}, url = m.url) =>
      fetch(url, { method: 'POST', headers: mcpHeaders(headers), body })
    const auth = { Authorization: `Bearer ${alice}` }

    const none = await post(initializeBody)
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm="mycelium"$/)
    expect((await refusalBody(none)).message).toMatch(/Unauthorized/)
    const bad = await post(initializeBody, { Authorization: 'Bearer not-a-token' })
    expect(bad.status).toBe(401)
    expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/)
    await refusalBody(bad)
    expect(m.stderr()).not.toContain('not-a-token')
    expect(m.stderr()).not.toContain(alice)

    const evil = await post(initializeBody, { ...auth, Origin: 'https://evil.example' })
    expect(evil.status).toBe(403)
    expect((await refusalBody(evil)).message).toMatch(/Origin "https:\/\/evil.example" is not allowed/)
    expect(evil.headers.get('access-control-allow-origin')).toBeNull()
    const allowed = await rawInitialize(m.url, { ...auth, Origin: 'https://app.example.com' })
    expect(allowed.response.status).toBe(200)
    expect(allowed.response.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    expect(allowed.response.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id/)
    const preflight = await fetch(m.url, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'POST' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization/)

    const unknown = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), {
      ...auth,
      'Mcp-Session-Id': '00000000-0000-4000-8000-000000000000',
    })
    expect(unknown.status).toBe(404)
    expect(await refusalBody(unknown)).toMatchObject({ code: -32001 })
    // Another token's session does not exist for this one.
    const theirs = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), {
      Authorization: `Bearer ${bob}`,
      'Mcp-Session-Id': allowed.sessionId!,
    })
    expect(theirs.status).toBe(404)
    expect(await refusalBody(theirs)).toMatchObject({ code: -32001 })
    const noSession = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), auth)
    expect(noSession.status).toBe(400)
    await refusalBody(noSession)

    const big = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'echo__echo', arguments: { message: 'x'.repeat(70_000) } },
      }),
      { ...auth, 'Mcp-Session-Id': allowed.sessionId! },
    )
    expect(big.status).toBe(413)
    expect((await refusalBody(big)).message).toMatch(/at most 65536 bytes \(limits\.maxMessageBytes\)/)

    // Too deep, with the id last: the refusal carries the request's own id (key order does not matter).
    const deep = await post(
      `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo__echo","arguments":{"x":${'['.repeat(300)}${']'.repeat(300)}}},"id":"deep-last"}`,
      { ...auth, 'Mcp-Session-Id': allowed.sessionId! },
    )
    expect(deep.status).toBe(400)
    expect(await deep.json()).toMatchObject({ id: 'deep-last', error: { code: -32600 } })

    const garbage = await post('{"jsonrpc": "2.0", "id": 4, "method": ', {
      ...auth,
      'Mcp-Session-Id': allowed.sessionId!,
    })
    expect(garbage.status).toBe(400)
    expect(await refusalBody(garbage)).toMatchObject({ code: -32700 })
    const batch = await post(`[${initializeBody}]`, auth)
    expect(batch.status).toBe(400)
    expect(await refusalBody(batch)).toMatchObject({ code: -32600 })
    const notJson = await fetch(m.url, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'text/plain', Accept: 'application/json, text/event-stream' },
      body: 'hello',
    })
    expect(notJson.status).toBe(415)
    await refusalBody(notJson)
    const put = await fetch(m.url, { method: 'PUT', headers: auth })
    expect(put.status).toBe(405)
    expect(put.headers.get('allow')).toMatch(/POST/)
    await refusalBody(put)
    const elsewhere = await post(initializeBody, auth, `${m.base}/other`)
    expect(elsewhere.status).toBe(404)
    await refusalBody(elsewhere)
    // DNS rebinding: a page on another name that resolves here (fetch sets Host itself, so node:http).
    const rebound = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        m.url,
        { method: 'POST', headers: { ...mcpHeaders(auth), Host: 'attacker.example:80' } },
        (res) => {
          let body = ''
          res
            .setEncoding('utf8')
            .on('data', (c: string) => (body += c))
            .on('end', () => resolve({ status: res.statusCode ?? 0, body }))
        },
      )
      req.on('error', reject)
      req.end(initializeBody)
    })
    expect(rebound.status).toBe(403)
    expect(JSON.parse(rebound.body)).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: expect.stringMatching(/Invalid Host: attacker\.example/) },
    })

    // MCP-Protocol-Version is checked against the versions myc speaks.
    const version = await post(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' }), {
      ...auth,
      'Mcp-Session-Id': allowed.sessionId!,
      'MCP-Protocol-Version': '1999-01-01',
    })
    expect(version.status).toBe(400)
    expect((await refusalBody(version)).message).toMatch(/Unsupported protocol version/)

    // The session still works after all that; DELETE ends it, and its id is then unknown.
    await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), {
      ...auth,
      'Mcp-Session-Id': allowed.sessionId!,
    })
    const listed = await post(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/list' }), {
      ...auth,
      'Mcp-Session-Id': allowed.sessionId!,
    })
    expect(listed.status).toBe(200)
    expect(await listed.text()).toMatch(/echo__echo/)
    const ended = await fetch(m.url, { method: 'DELETE', headers: { ...auth, 'Mcp-Session-Id': allowed.sessionId! } })
    expect(ended.status).toBe(200)
    const after = await post(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }), {
      ...auth,
      'Mcp-Session-Id': allowed.sessionId!,
    })
    expect(after.status).toBe(404)
    await refusalBody(after)
  })

  it('GET /healthz and /readyz', async () => {
    const health = await fetch(`${m.base}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.text()).toBe('ok')
    const ready = await fetch(`${m.base}/readyz`)
    expect(ready.status).toBe(200)
    // Without the metrics credential: ready, and nothing about which servers run.
    expect(await ready.json()).toEqual({ ready: true })
  })
})

describe('myc serve --http without tokens, on loopback: limits and readiness', () => {
  let m: HttpMyc
  beforeAll(async () => {
    const config = {
      mcpServers: {
        echo: server('echo'),
        broken: { command: '/nonexistent/myc-e2e-no-such-command', restart: { maxRetries: 0 } },
      },
      http: { sessionIdleMs: 1_500, maxSessions: 2, metricsToken: { env: 'MYC_E2E_METRICS_TOKEN' } },
    }
    m = await startHttpMyc(writeConfig(config), { env: { MYC_E2E_METRICS_TOKEN: SCRAPER } })
  })
  afterAll(async () => {
    expect(await m?.stop('SIGINT')).toBe(130)
  })

  it('says at start that it serves without credentials, which only loopback allows', () => {
    expect(m.stderr()).toMatch(
      /no http\.tokens: serving without credentials, which myc allows only on a loopback address/,
    )
  })

  it('/readyz names the eager children that are not running only to the metrics token; to anyone else it says not ready, and nothing more', async () => {
    const asScraper = { headers: { Authorization: `Bearer ${SCRAPER}` } }
    const notRunning = async () =>
      JSON.stringify(
        ((await (await fetch(`${m.base}/readyz`, asScraper)).json()) as { notRunning: unknown }).notRunning,
      )
    await waitFor(
      async () => (await notRunning()) === '[{"server":"broken","state":"FAILED"}]',
      15_000,
      'echo to run and broken to fail',
    )
    const ready = await fetch(`${m.base}/readyz`, asScraper)
    expect(ready.status).toBe(503)
    expect(await ready.json()).toEqual({
      ready: false,
      starting: [],
      notRunning: [{ server: 'broken', state: 'FAILED' }],
    })
    const anyone = await fetch(`${m.base}/readyz`)
    expect(anyone.status).toBe(503)
    expect(await anyone.text()).toBe('{"ready":false}')
    const health = await fetch(`${m.base}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.text()).toBe('ok')
  })

  it('http.maxSessions: one more session is 503; idle sessions expire (404) and make room', async () => {
    const first = await rawInitialize(m.url)
    const second = await rawInitialize(m.url)
    expect(first.response.status).toBe(200)
    expect(second.response.status).toBe(200)
    const third = await fetch(m.url, { method: 'POST', headers: mcpHeaders(), body: initializeBody })
    expect(third.status).toBe(503)
    expect((await refusalBody(third)).message).toMatch(/too many sessions \(http\.maxSessions is 2\)/)

    // A session in use stays; one left idle past http.sessionIdleMs is gone.
    const list = (id: string) =>
      fetch(m.url, {
        method: 'POST',
        headers: mcpHeaders({ 'Mcp-Session-Id': id }),
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      })
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 500))
      expect((await list(second.sessionId!)).status).toBe(200)
    }
    const expired = await list(first.sessionId!)
    expect(expired.status).toBe(404)
    expect(await refusalBody(expired)).toMatchObject({ code: -32001 })
    const again = await connectHttp(m.url)
    expect(text(await again.client.callTool({ name: 'echo__echo', arguments: { message: 'back' } }))).toBe('back')
    await again.client.close()
  })
})

describe('myc serve --http: graceful shutdown', () => {
  it('SIGTERM takes no new sessions, lets the call in flight finish, then exits 0', async () => {
    const m = await startHttpMyc(writeConfig({ mcpServers: { slow: server('progress') } }))
    const { client } = await connectHttp(m.url)
    let progressed = 0
    const call = client.callTool(
      { name: 'slow__count', arguments: { steps: 8, stepMs: 100 } },
      { onprogress: () => void progressed++ },
    )
    await waitFor(() => progressed > 0, 5_000, 'the call to be running (its first progress)')
    const exit = m.stop('SIGTERM')
    await waitFor(() => m.stderr().includes('SIGTERM: taking no new sessions'), 5_000, 'the drain to start')
    const late = await fetch(m.url, { method: 'POST', headers: mcpHeaders(), body: initializeBody }).catch(
      (e: Error) => e,
    )
    if (late instanceof Response) {
      expect(late.status).toBe(503)
      await refusalBody(late)
    }
    expect(text(await call)).toBe('counted 8')
    expect(await exit).toBe(0)
    await client.close().catch(() => {})
  }, 30_000)
})

describe('myc serve --http refuses to start with a config error (exit 2)', () => {
  it('a non-loopback address without tokens', async () => {
    const port = await freePort()
    const r = myc([
      'serve',
      '--http',
      `0.0.0.0:${port}`,
      '--config',
      writeConfig({ mcpServers: { echo: server('echo') } }),
    ])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/http\.tokens: 0\.0\.0\.0:\d+ is not a loopback address/)
    expect(r.stderr).toMatch(/listen on 127\.0\.0\.1/)
  })

  it('a token whose variable is not set, a token of an unknown role, a bad address', async () => {
    const missing = myc([
      'serve',
      '--http',
      '127.0.0.1:0',
      '--config',
      writeConfig({ ...teamConfig, http: { tokens: [{ env: 'MYC_E2E_UNSET_TOKEN', role: 'guest' }] } }),
    ])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/http\.tokens\[0\]\.env: environment variable MYC_E2E_UNSET_TOKEN is not set/)
    const role = myc(
      [
        'serve',
        '--http',
        '127.0.0.1:0',
        '--config',
        writeConfig({ ...teamConfig, http: { tokens: [{ env: 'MYC_E2E_TOKEN_ALICE', role: 'root' }] } }),
      ],
      TOKENS,
    )
    expect(role.code).toBe(2)
    expect(role.stderr).toMatch(/http\.tokens\[0\]\.role: unknown role "root"; roles: developer, guest/)
    expect(role.stderr).not.toContain(alice)
    const address = myc(['serve', '--http', 'localhost', '--config', writeConfig({ mcpServers: {} })])
    expect(address.code).toBe(2)
    expect(address.stderr).toMatch(/--http: "localhost" has no port/)
  })

  it('a Redis session store with tokens but no MYC_SESSION_SECRET (the replicas could not tell whose a session is)', async () => {
    const r = myc(
      [
        'serve',
        '--http',
        '127.0.0.1:0',
        '--config',
        writeConfig({ ...teamConfig, http: { ...teamConfig.http, sessionStore: 'redis://127.0.0.1:1' } }),
      ],
      TOKENS,
    )
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/http\.sessionStore: .*set MYC_SESSION_SECRET to the same random value on every replica/)
  })
})

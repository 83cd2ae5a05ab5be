import { request as httpRequest } from 'node:http'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeConfig } from '../helpers/e2e.js'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'
import { connectHttp, freePort, mcpHeaders, startHttpMyc, type HttpMyc } from '../helpers/http.js'
import { waitFor } from '../helpers/runtime.js'

const TOKENS = {
  MYC_E2E_METRICS_ALICE: 'alice-metrics-0123456789abcdef0123456789',
  MYC_E2E_METRICS_BOB: 'bob-metrics-0123456789abcdef0123456789ab',
}
const alice = TOKENS.MYC_E2E_METRICS_ALICE
const bob = TOKENS.MYC_E2E_METRICS_BOB
const BURST = 15
const SCRAPER = 'scraper-metrics-0123456789abcdef0123456789'

const config = {
  mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } },
  skills: { dirs: [path.join(repoRoot, 'tests/fixtures/http/skills')] },
  roles: { default: 'guest' },
  session: { defaultSkills: ['common', 'reader'] },
  http: {
    tokens: [
      { env: 'MYC_E2E_METRICS_ALICE', role: 'guest', name: 'alice' },
      { env: 'MYC_E2E_METRICS_BOB', role: 'guest', name: 'bob' },
    ],
    rateLimit: { requestsPerMinute: 60, burst: BURST },
    metricsToken: { env: 'MYC_E2E_METRICS_SCRAPER' },
  },
}

/** The value of one sample of the text format (labels in any order), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`)
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m || m[1] !== name) continue
    const have = (m[2] ?? '').split(',').filter(Boolean)
    if (wanted.length === have.length && wanted.every((w) => have.includes(w))) return Number(m[3])
  }
  return undefined
}

describe('myc serve --http: GET /metrics and http.rateLimit (build/myc.cjs)', () => {
  let m: HttpMyc
  let client: Client | undefined
  const scrape = async () => {
    const response = await fetch(`${m.base}/metrics`, { headers: { Authorization: `Bearer ${SCRAPER}` } })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    return response.text()
  }

  beforeAll(async () => {
    m = await startHttpMyc(writeConfig(config), { env: { ...TOKENS, MYC_E2E_METRICS_SCRAPER: SCRAPER } })
    await waitFor(async () => (await fetch(`${m.base}/readyz`)).status === 200, 15_000, 'echo to run')
  })
  afterAll(async () => {
    await client?.close().catch(() => {})
    expect(await m?.stop()).toBe(0)
  })

  it('says where metrics are and what the rate limit is', () => {
    expect(m.stderr()).toMatch(/metrics: \/metrics \(with http\.metricsToken\)/)
    expect(m.stderr()).toMatch(/rate limit: 60 requests a minute per credential \(burst 15\)/)
  })

  it('without http.metricsToken, /metrics is 401 and names no server or tool (an MCP token is not it); /readyz names none either', async () => {
    for (const token of [undefined, alice, 'not-the-token']) {
      const response = await fetch(`${m.base}/metrics`, token ? { headers: { Authorization: `Bearer ${token}` } } : {})
      expect(response.status).toBe(401)
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="mycelium-metrics"/)
      const body = await response.text()
      expect(body).not.toMatch(/echo|myc_tool/)
      const ready = await fetch(`${m.base}/readyz`, token ? { headers: { Authorization: `Bearer ${token}` } } : {})
      expect(await ready.json()).toEqual({ ready: true })
    }
    expect(await (await fetch(`${m.base}/readyz`, { headers: { Authorization: `Bearer ${SCRAPER}` } })).json()).toEqual(
      { ready: true, starting: [], notRunning: [] },
    )
  })

  it('counts calls per server and tool, for the metrics token; the counters move with the calls', async () => {
    const before = await scrape()
    expect(sample(before, 'myc_tool_calls_total', { server: 'echo', tool: 'echo' })).toBeUndefined()
    expect(sample(before, 'myc_child_state', { server: 'echo', state: 'RUNNING' })).toBe(1)
    expect(sample(before, 'myc_child_restarts_total', { server: 'echo' })).toBe(0)
    expect(before).toContain('# TYPE process_cpu_seconds_total counter')

    ;({ client } = await connectHttp(m.url, { token: alice }))
    for (const message of ['a', 'b', 'c']) await client.callTool({ name: 'echo__echo', arguments: { message } })
    await client.callTool({ name: 'echo__add', arguments: { a: 1, b: 2 } })
    await client.callTool({ name: 'mycelium__list_skills', arguments: {} })
    await client.listTools()
    await expect(client.callTool({ name: 'echo__fail', arguments: {} })).rejects.toThrow(/Unknown tool: echo__fail/)

    const after = await scrape()
    expect(sample(after, 'myc_tool_calls_total', { server: 'echo', tool: 'echo' })).toBe(3)
    expect(sample(after, 'myc_tool_calls_total', { server: 'echo', tool: 'add' })).toBe(1)
    expect(sample(after, 'myc_tool_calls_total', { server: 'mycelium', tool: 'list_skills' })).toBe(1)
    expect(sample(after, 'myc_tool_call_duration_seconds_count', { server: 'echo', tool: 'echo' })).toBe(3)
    expect(sample(after, 'myc_tool_call_duration_seconds_bucket', { server: 'echo', tool: 'echo', le: '+Inf' })).toBe(3)
    // A hidden tool is counted as unknown, its name never a label.
    expect(sample(after, 'myc_tool_calls_unknown_total')).toBe(1)
    expect(after).not.toMatch(/tool="fail"/)
    expect(sample(after, 'myc_http_sessions_active')).toBe(1)
    expect(after).not.toContain(alice)
    // The MCP conventions' operation durations, named as OTLP's are (mcp.server.operation.duration → mcp_server_operation_duration_seconds).
    expect(
      sample(after, 'mcp_server_operation_duration_seconds_count', {
        mcp_method_name: 'tools/call',
        gen_ai_tool_name: 'echo__echo',
        error_type: '',
      }),
    ).toBe(3)
    expect(
      sample(after, 'mcp_client_operation_duration_seconds_count', {
        mcp_method_name: 'tools/call',
        gen_ai_tool_name: 'echo',
        server_address: 'echo',
        error_type: '',
      }),
    ).toBe(3)
    expect(
      sample(after, 'mcp_server_operation_duration_seconds_count', {
        mcp_method_name: 'tools/call',
        gen_ai_tool_name: 'mycelium__list_skills',
        error_type: '',
      }),
    ).toBe(1)
    // The hidden tool's call: an error, its name not a label.
    expect(
      sample(after, 'mcp_server_operation_duration_seconds_count', {
        mcp_method_name: 'tools/call',
        gen_ai_tool_name: '_OTHER',
        error_type: '-32602',
      }),
    ).toBe(1)
    expect(after).not.toMatch(/gen_ai_tool_name="echo__fail"/)
    expect(
      sample(after, 'mcp_server_operation_duration_seconds_count', {
        mcp_method_name: 'tools/list',
        gen_ai_tool_name: '',
        error_type: '',
      }),
    ).toBeGreaterThanOrEqual(1)
  })

  it('answers /metrics only to a Host it serves (DNS rebinding), like the MCP endpoint', async () => {
    const rebound = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${m.base}/metrics`,
        { headers: { Host: 'attacker.example:80', Authorization: `Bearer ${SCRAPER}` } },
        (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        },
      )
      req.on('error', reject)
      req.end()
    })
    expect(rebound).toBe(403)
  })

  it('a credential over http.rateLimit gets 429 with Retry-After and a JSON-RPC error; another is not held back', async () => {
    const post = (token: string) =>
      fetch(m.url, {
        method: 'POST',
        headers: mcpHeaders({ Authorization: `Bearer ${token}` }),
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
    let allowed = 0
    let limited: Response | undefined
    for (let i = 0; i < BURST * 3 && !limited; i++) {
      const response = await post(bob)
      if (response.status === 429) limited = response
      else {
        allowed++
        await response.body?.cancel()
      }
    }
    expect(allowed).toBeGreaterThanOrEqual(BURST)
    expect(limited).toBeDefined()
    const retryAfter = Number(limited!.headers.get('retry-after'))
    expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true)
    expect(await limited!.json()).toEqual({
      jsonrpc: '2.0',
      error: {
        code: -32000,
        message: `Too Many Requests: over 60 requests a minute for this credential; retry in ${retryAfter} s`,
      },
      id: null,
    })

    // Alice's session goes on.
    expect((await client!.callTool({ name: 'echo__echo', arguments: { message: 'still here' } })).content).toEqual([
      { type: 'text', text: 'still here' },
    ])
    expect(sample(await scrape(), 'myc_http_rate_limited_total')).toBeGreaterThanOrEqual(1)

    await new Promise((r) => setTimeout(r, retryAfter * 1_000))
    expect((await post(bob)).status).not.toBe(429)
  })
})

/**
 * `http.metricsListen`: metrics on an address of their own (no token), the
 * MCP port serving none; that address serves nothing else.
 */
describe('myc serve --http with http.metricsListen (build/myc.cjs)', () => {
  let m: HttpMyc
  let metricsBase: string

  beforeAll(async () => {
    const port = await freePort()
    metricsBase = `http://127.0.0.1:${port}`
    m = await startHttpMyc(
      writeConfig({ ...config, http: { tokens: config.http.tokens, metricsListen: `127.0.0.1:${port}` } }),
      { env: TOKENS },
    )
    await waitFor(async () => (await fetch(`${m.base}/readyz`)).status === 200, 15_000, 'echo to run')
  })
  afterAll(async () => {
    expect(await m?.stop()).toBe(0)
  })

  it('serves /metrics and /readyz details there, and says so at start; the MCP port has no /metrics', async () => {
    expect(m.stderr()).toContain(`metrics on ${metricsBase}/metrics, with /readyz details`)
    const there = await fetch(`${metricsBase}/metrics`)
    expect(there.status).toBe(200)
    expect(sample(await there.text(), 'myc_child_state', { server: 'echo', state: 'RUNNING' })).toBe(1)
    expect(await (await fetch(`${metricsBase}/readyz`)).json()).toEqual({ ready: true, starting: [], notRunning: [] })
    const onMcpPort = await fetch(`${m.base}/metrics`, { headers: { Authorization: `Bearer ${alice}` } })
    expect(onMcpPort.status).toBe(404)
    expect(await onMcpPort.text()).not.toMatch(/echo|myc_tool/)
    expect(await (await fetch(`${m.base}/readyz`)).json()).toEqual({ ready: true })
  })

  it('the metrics address is no MCP endpoint', async () => {
    expect(
      (
        await fetch(`${metricsBase}/mcp`, {
          method: 'POST',
          headers: mcpHeaders({ Authorization: `Bearer ${alice}` }),
          body: '{}',
        })
      ).status,
    ).toBe(405)
    expect((await fetch(`${metricsBase}/mcp`)).status).toBe(404)
  })
})

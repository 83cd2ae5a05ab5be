import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMetrics, type HttpMetrics } from '../../src/http/metrics.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { repoRoot } from '../helpers/fixtures.js'
import { connectClient, fixtureEntry, startRuntime, waitFor } from '../helpers/runtime.js'

/** The value of one sample line of the text format, or undefined when there is none. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`)
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m || m[1] !== name) continue
    const have = (m[2] ?? '').split(',').filter(Boolean)
    if (wanted.length === have.length && wanted.every((w) => have.includes(w))) return Number(m[3])
  }
  return undefined
}

describe('metrics: the text of GET /metrics', () => {
  let runtime: Runtime
  let metrics: HttpMetrics
  let client: Client
  const sessions = { active: 3, inFlight: 1 }

  beforeAll(async () => {
    runtime = await startRuntime({
      mcpServers: {
        echo: fixtureEntry('echo'),
        boom: fixtureEntry('crash', { restart: { initialDelayMs: 1, maxDelayMs: 5 } }),
      },
    })
    metrics = await createMetrics({ runtime, sessions: () => sessions, processMetrics: false })
    ;({ client } = await connectClient(runtime))
  })
  afterAll(async () => {
    metrics?.close()
    await client?.close()
    await runtime?.close()
  })

  it("is Prometheus text with HELP and TYPE for each of myc's metrics", async () => {
    expect(metrics.contentType).toMatch(/^text\/plain; version=0\.0\.4/)
    const text = await metrics.text()
    for (const [name, type] of [
      ['myc_tool_calls_total', 'counter'],
      ['myc_tool_call_errors_total', 'counter'],
      ['myc_tool_call_duration_seconds', 'histogram'],
      ['myc_tool_calls_unknown_total', 'counter'],
      ['myc_http_sessions_active', 'gauge'],
      ['myc_http_requests_in_flight', 'gauge'],
      ['myc_child_state', 'gauge'],
      ['myc_child_restarts_total', 'counter'],
      ['myc_http_rate_limited_total', 'counter'],
    ]) {
      expect(text).toContain(`# HELP ${name} `)
      expect(text).toContain(`# TYPE ${name} ${type}`)
    }
    expect(sample(text, 'myc_http_sessions_active')).toBe(3)
    expect(sample(text, 'myc_http_requests_in_flight')).toBe(1)
    // Process metrics were turned off for this registry.
    expect(text).not.toContain('process_cpu_seconds_total')
  })

  it('a call through a client connection increments its server and tool, and is timed', async () => {
    const before = await metrics.text()
    expect(sample(before, 'myc_tool_calls_total', { server: 'echo', tool: 'echo' })).toBeUndefined()
    await client.callTool({ name: 'echo__echo', arguments: { message: 'a' } })
    await client.callTool({ name: 'echo__echo', arguments: { message: 'b' } })
    await client.callTool({ name: 'echo__add', arguments: { a: 1, b: 2 } })
    const text = await metrics.text()
    expect(sample(text, 'myc_tool_calls_total', { server: 'echo', tool: 'echo' })).toBe(2)
    expect(sample(text, 'myc_tool_calls_total', { server: 'echo', tool: 'add' })).toBe(1)
    expect(sample(text, 'myc_tool_call_duration_seconds_count', { server: 'echo', tool: 'echo' })).toBe(2)
    expect(sample(text, 'myc_tool_call_duration_seconds_bucket', { server: 'echo', tool: 'echo', le: '+Inf' })).toBe(2)
    expect(sample(text, 'myc_tool_call_duration_seconds_sum', { server: 'echo', tool: 'echo' })).toBeGreaterThan(0)
    expect(sample(text, 'myc_tool_call_errors_total', { server: 'echo', tool: 'echo', kind: 'tool' })).toBeUndefined()
  })

  it('counts errors by kind, and calls naming no visible tool without a label from the client', async () => {
    const failed = await client.callTool({ name: 'echo__fail', arguments: {} })
    expect(failed.isError).toBe(true)
    await expect(client.callTool({ name: 'no__such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/)
    const text = await metrics.text()
    expect(sample(text, 'myc_tool_calls_total', { server: 'echo', tool: 'fail' })).toBe(1)
    expect(sample(text, 'myc_tool_call_errors_total', { server: 'echo', tool: 'fail', kind: 'tool' })).toBe(1)
    expect(sample(text, 'myc_tool_calls_unknown_total')).toBe(1)
    expect(text).not.toContain('no__such_tool')
  })

  it("children's states (one series per state) and restarts", async () => {
    let text = await metrics.text()
    expect(sample(text, 'myc_child_state', { server: 'echo', state: 'RUNNING' })).toBe(1)
    expect(sample(text, 'myc_child_state', { server: 'echo', state: 'FAILED' })).toBe(0)
    expect(sample(text, 'myc_child_state', { server: 'boom', state: 'RUNNING' })).toBe(1)
    expect(sample(text, 'myc_child_restarts_total', { server: 'echo' })).toBe(0)
    expect(sample(text, 'myc_child_restarts_total', { server: 'boom' })).toBe(0)

    // The child dies mid-call: the call fails as unavailable, and the supervisor restarts it.
    const crashed = await client.callTool({ name: 'boom__crash', arguments: {} })
    expect(crashed.isError).toBe(true)
    await waitFor(
      () =>
        runtime.supervisor.children.get('boom')!.state === 'RUNNING' &&
        (runtime.supervisor.restarts.get('boom') ?? 0) > 0,
      10_000,
      'boom to run again',
    )
    text = await metrics.text()
    expect(sample(text, 'myc_tool_call_errors_total', { server: 'boom', tool: 'crash', kind: 'unavailable' })).toBe(1)
    expect(sample(text, 'myc_child_restarts_total', { server: 'boom' })).toBe(1)
    expect(sample(text, 'myc_child_state', { server: 'boom', state: 'RUNNING' })).toBe(1)
  })

  it('counts rate-limited requests, and stops counting calls once closed', async () => {
    metrics.rateLimited()
    metrics.rateLimited()
    expect(sample(await metrics.text(), 'myc_http_rate_limited_total')).toBe(2)
    const other = await createMetrics({ runtime, sessions: () => sessions, processMetrics: false })
    other.close()
    await client.callTool({ name: 'echo__echo', arguments: { message: 'c' } })
    expect(sample(await other.text(), 'myc_tool_calls_total', { server: 'echo', tool: 'echo' })).toBeUndefined()
    expect(sample(await metrics.text(), 'myc_tool_calls_total', { server: 'echo', tool: 'echo' })).toBe(3)
  })
})

describe('OpenTelemetry is loaded for /metrics only by myc serve --http with metrics on', () => {
  /** Every module src/cli.ts reaches by static, value imports (`import type` and `import()` left out). */
  function staticGraph(entry: string): Set<string> {
    const seen = new Set<string>()
    const visit = (file: string) => {
      if (seen.has(file)) return
      seen.add(file)
      if (!file.startsWith('/')) return
      const source = readFileSync(file, 'utf8')
      for (const m of source.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
        const spec = m[1]!
        visit(spec.startsWith('.') ? path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')) : spec)
      }
    }
    visit(entry)
    return seen
  }

  it('no static import chain from the CLI, `myc serve` or the HTTP face reaches OpenTelemetry, jose, redis or src/http/metrics.ts', () => {
    for (const entry of [
      'src/cli.ts',
      'src/commands/serve.ts',
      'src/http/serve-http.ts',
      'src/http/http-settings.ts',
      'src/http/http-face.ts',
    ]) {
      const graph = staticGraph(path.join(repoRoot, entry))
      expect(graph.size, entry).toBeGreaterThan(5)
      expect(
        [...graph].filter(
          (m) => ['jose', 'redis'].includes(m) || m.startsWith('@opentelemetry/') || m.endsWith('src/http/metrics.ts'),
        ),
        entry,
      ).toEqual([])
    }
    // The walk does see a static import where there is one (metrics.ts takes the libraries from telemetry-deps.ts, which loads them on demand).
    expect(
      staticGraph(path.join(repoRoot, 'src/http/metrics.ts')).has(
        path.join(repoRoot, 'src/telemetry/telemetry-deps.ts'),
      ),
    ).toBe(true)
  })
})

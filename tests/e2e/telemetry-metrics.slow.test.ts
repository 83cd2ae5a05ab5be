import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { connectToMyc, writeConfig } from '../helpers/e2e.js'
import { connectHttp, startHttpMyc } from '../helpers/http.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { OtlpReceiver, type ReceivedPoint } from '../helpers/otlp-receiver.js'
import { quietWindow, waitFor } from '../helpers/wait-for.js'

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const CALLER_SPAN = '00f067aa0ba902b7'
/** The MCP semantic conventions' bucket boundaries for the operation durations. */
const MCP_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]

const echoConfig = () =>
  writeConfig({ mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } } })
const metaConfig = () =>
  writeConfig({ mcpServers: { probe: { command: process.execPath, args: [fixtureServer('meta-echo')] } } })

/** The point of `points` whose attributes include all of `attributes`. */
const pointWith = (points: ReceivedPoint[], attributes: Record<string, unknown>) =>
  points.find((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))

describe('OpenTelemetry metrics in the MCP semantic conventions (build/myc.cjs)', () => {
  let receiver: OtlpReceiver
  beforeEach(async () => {
    receiver = new OtlpReceiver()
    await receiver.start()
  })
  afterEach(() => receiver.close())

  it('every request served and sent is an operation duration; the children running and their restarts are observed', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_METRIC_EXPORT_INTERVAL: '200',
      OTEL_SERVICE_NAME: 'myc-metrics',
    }
    const { client } = await connectToMyc(['serve', '--config', echoConfig()], { env })
    await client.callTool({ name: 'echo__add', arguments: { a: 1, b: 2 } })
    await client.callTool({ name: 'echo__add', arguments: { a: 3, b: 4 } })
    await client.callTool({ name: 'echo__fail', arguments: {} })
    await expect(client.callTool({ name: 'nope__never', arguments: {} })).rejects.toThrow(/Unknown tool/)
    await client.getPrompt({ name: 'echo__greet', arguments: { who: 'Ada' } })
    await client.listTools()
    const served = () => receiver.latest('mcp.server.operation.duration')
    // The periodic reader exports while myc runs: no need to stop it first.
    const running = () => pointWith(receiver.latest('mycelium.children.running'), { 'mycelium.server': 'echo' })?.value
    await waitFor(
      () => served().some((p) => p.attributes['mcp.method.name'] === 'tools/list') && running() === 1,
      10_000,
      'the metrics at the receiver',
    )
    expect(receiver.metrics.findLast((m) => m.name === 'mycelium.children.running')).toMatchObject({
      type: 'sum',
      monotonic: false,
    })
    expect(receiver.metrics.findLast((m) => m.name === 'mycelium.child.restarts')).toMatchObject({
      type: 'sum',
      monotonic: true,
    })
    expect(pointWith(receiver.latest('mycelium.child.restarts'), { 'mycelium.server': 'echo' })?.value).toBe(0)
    await client.close()
    // The last export, as myc stops: its child is no longer running.
    await waitFor(() => running() === 0, 10_000, 'the child stopped')

    const server = receiver.metrics.findLast((m) => m.name === 'mcp.server.operation.duration')!
    expect(server).toMatchObject({ type: 'histogram', unit: 's', serviceName: 'myc-metrics' })
    const add = pointWith(served(), { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'echo__add' })!
    expect(add.count).toBe(2)
    expect(add.attributes['error.type']).toBeUndefined()
    expect(add.explicitBounds).toEqual(MCP_BUCKETS)
    // A failed call has its error.type: tool_error for an isError result, the JSON-RPC code for an error.
    expect(pointWith(served(), { 'gen_ai.tool.name': 'echo__fail' })?.attributes['error.type']).toBe('tool_error')
    expect(pointWith(served(), { 'gen_ai.tool.name': 'nope__never' })?.attributes['error.type']).toBe('-32602')
    expect(pointWith(served(), { 'mcp.method.name': 'prompts/get', 'gen_ai.prompt.name': 'echo__greet' })?.count).toBe(
      1,
    )
    // Bounded attributes only: never the request id, role or principal of the span.
    expect(Object.keys(add.attributes).sort()).toEqual(['gen_ai.tool.name', 'mcp.method.name', 'mcp.protocol.version'])
    expect(add.attributes['mcp.protocol.version']).toBe('2025-11-25')

    const sent = receiver.latest('mcp.client.operation.duration')
    expect(receiver.metrics.findLast((m) => m.name === 'mcp.client.operation.duration')).toMatchObject({
      type: 'histogram',
      unit: 's',
    })
    expect(
      pointWith(sent, { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'add', 'server.address': 'echo' })?.count,
    ).toBe(2)
    expect(pointWith(sent, { 'gen_ai.tool.name': 'fail', 'server.address': 'echo' })?.attributes['error.type']).toBe(
      'tool_error',
    )
    expect(pointWith(sent, { 'mcp.method.name': 'prompts/get', 'server.address': 'echo' })?.count).toBe(1)
    // A call to no child is not a client operation.
    expect(sent.some((p) => p.attributes['gen_ai.tool.name'] === 'nope__never')).toBe(false)
  })

  it('what is left is exported when myc stops, long before the next interval', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_METRIC_EXPORT_INTERVAL: '600000',
      OTEL_TRACES_EXPORTER: 'none',
    }
    const { client } = await connectToMyc(['serve', '--config', echoConfig()], { env })
    await client.callTool({ name: 'echo__add', arguments: { a: 1, b: 2 } })
    await client.close()
    await waitFor(
      () => receiver.latest('mcp.server.operation.duration').length > 0,
      10_000,
      'the metrics flushed at shutdown',
    )
    expect(
      pointWith(receiver.latest('mcp.server.operation.duration'), { 'gen_ai.tool.name': 'echo__add' })?.count,
    ).toBe(1)
  })

  it('OTEL_METRICS_EXPORTER=none: nothing reaches /v1/metrics while traces still do', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_METRIC_EXPORT_INTERVAL: '100',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_METRICS_EXPORTER: 'none',
    }
    const { client } = await connectToMyc(['serve', '--config', echoConfig()], { env })
    await client.callTool({ name: 'echo__add', arguments: { a: 1, b: 2 } })
    // Four 100 ms export intervals in which no metrics may be sent.
    await quietWindow(400)
    // Closing myc flushes whatever it holds: metrics would arrive then if they were on.
    await client.close()
    await waitFor(() => receiver.spans.length >= 2, 10_000, 'the spans')
    // The flush at shutdown must not send metrics after the spans either.
    await quietWindow(300)
    expect(receiver.requests.filter((r) => r.path === '/v1/metrics')).toEqual([])
    expect(receiver.requests.some((r) => r.path === '/v1/traces')).toBe(true)
  })

  it('OTEL_TRACES_EXPORTER=none: durations are measured, no span is exported, and the child gets the caller’s context untouched', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_METRIC_EXPORT_INTERVAL: '100',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_TRACES_EXPORTER: 'none',
    }
    const { client } = await connectToMyc(['serve', '--config', metaConfig()], { env })
    const result = await client.callTool({
      name: 'probe__meta',
      arguments: {},
      _meta: { traceparent: `00-${TRACE}-${CALLER_SPAN}-01`, tracestate: 'vendor=opaque' },
    })
    const untraced = await client.callTool({ name: 'probe__meta', arguments: {} })
    await waitFor(() => receiver.latest('mcp.client.operation.duration').length > 0, 10_000, 'the client duration')
    await client.close()
    expect(
      pointWith(receiver.latest('mcp.server.operation.duration'), { 'gen_ai.tool.name': 'probe__meta' })?.count,
    ).toBe(2)
    expect(pointWith(receiver.latest('mcp.client.operation.duration'), { 'server.address': 'probe' })?.count).toBe(2)
    expect((result.structuredContent as { meta: Record<string, unknown> }).meta).toMatchObject({
      traceparent: `00-${TRACE}-${CALLER_SPAN}-01`,
      tracestate: 'vendor=opaque',
    })
    expect((untraced.structuredContent as { meta: Record<string, unknown> }).meta.traceparent).toBeUndefined()
    // No span may be exported (the batch delay is 50 ms).
    await quietWindow(200)
    expect(receiver.requests.filter((r) => r.path === '/v1/traces')).toEqual([])
  })

  it('over HTTP, mycelium.sessions.active counts the sessions held', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_METRIC_EXPORT_INTERVAL: '100',
      OTEL_TRACES_EXPORTER: 'none',
    }
    const m = await startHttpMyc(echoConfig(), { env })
    try {
      const first = await connectHttp(m.url)
      const second = await connectHttp(m.url)
      await first.client.callTool({ name: 'echo__add', arguments: { a: 1, b: 2 } })
      await waitFor(() => receiver.latest('mycelium.sessions.active')[0]?.value === 2, 10_000, 'two sessions counted')
      await Promise.all([first.transport.terminateSession(), second.transport.terminateSession()])
      await waitFor(() => receiver.latest('mycelium.sessions.active')[0]?.value === 0, 10_000, 'no session counted')
      await Promise.all([first.client.close(), second.client.close()])
    } finally {
      await m.stop()
    }
  })
})

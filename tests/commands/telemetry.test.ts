import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { runAgentHere } from '../helpers/agent.js'
import { connectHere, startHttpHere } from '../helpers/cli.js'
import { startHttpFixture, writeConfig } from '../helpers/e2e.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { OtlpReceiver, silentEndpoint, type ReceivedSpan } from '../helpers/otlp-receiver.js'
import { quietWindow, waitFor } from '../helpers/wait-for.js'

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const CALLER_SPAN = '00f067aa0ba902b7'
// OTLP's own numbering (SPAN_KIND_SERVER, SPAN_KIND_CLIENT).
const SERVER = 2
const CLIENT = 3

const config = () =>
  writeConfig({ mcpServers: { probe: { command: process.execPath, args: [fixtureServer('meta-echo')] } } })
/** For what myc answers itself: myc starts every server of its config, and no span here is of a child. */
const bareConfig = () => writeConfig({ mcpServers: {} })

/** myc serve over stdio with the given environment; a tools/call of probe__meta with the caller's trace context; myc closed (its spans flushed). */
async function callThroughMyc(
  env: Record<string, string>,
  meta: Record<string, unknown> = { traceparent: `00-${TRACE}-${CALLER_SPAN}-01`, tracestate: 'vendor=opaque' },
) {
  const { client } = await connectHere(['serve', '--config', config()], { env })
  const result = await client.callTool({ name: 'probe__meta', arguments: {}, _meta: meta })
  await client.close()
  return (result.structuredContent as { meta: Record<string, unknown> }).meta
}

/** A trace id of its own for each case that shares one myc and one receiver: a case reads its own spans only. */
const traceOf = (n: number) => `4bf92f3577b34da6a3ce929d0e0e47${String(n).padStart(2, '0')}`

describe('OpenTelemetry: the calls of one myc serve, each a trace of its own (in process)', () => {
  const receiver = new OtlpReceiver()
  let client: Client
  // probe answers with what it got; echo has prompts, resources and completions. myc ends only after the cases.
  beforeAll(async () => {
    await receiver.start()
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'myc-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    }
    const both = writeConfig({
      mcpServers: {
        probe: { command: process.execPath, args: [fixtureServer('meta-echo')] },
        echo: { command: process.execPath, args: [fixtureServer('echo')] },
      },
    })
    ;({ client } = await connectHere(['serve', '--config', both], { env }))
  })
  afterAll(async () => {
    await client?.close()
    await receiver.close()
  })
  const spansOf = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId)

  it('a tools/call is a SERVER span under the caller’s, the child’s call a CLIENT span under it, and the child gets that span as its parent', async () => {
    const trace = traceOf(1)
    const meta = { traceparent: `00-${trace}-${CALLER_SPAN}-01`, tracestate: 'vendor=opaque' }
    const result = await client.callTool({ name: 'probe__meta', arguments: {}, _meta: meta })
    const childMeta = (result.structuredContent as { meta: Record<string, unknown> }).meta
    await waitFor(() => spansOf(trace).length >= 2, 10_000, 'the spans at the receiver')
    const server = spansOf(trace).find((s) => s.kind === SERVER) as ReceivedSpan
    const child = spansOf(trace).find((s) => s.kind === CLIENT) as ReceivedSpan
    expect(server).toMatchObject({
      name: 'tools/call probe__meta',
      traceId: trace,
      parentSpanId: CALLER_SPAN,
      serviceName: 'myc-under-test',
    })
    expect(server.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'probe__meta',
      'mycelium.server': 'probe',
      'mcp.protocol.version': '2025-11-25',
    })
    expect(child).toMatchObject({ name: 'tools/call meta', traceId: trace, parentSpanId: server.spanId })
    // The revision myc speaks with the child, on its CLIENT span.
    expect(child.attributes['mcp.protocol.version']).toMatch(/^20\d\d-\d\d-\d\d$/)
    // The child's traceparent: the same trace, its parent the CLIENT span myc exported; tracestate passed on.
    expect(childMeta.traceparent).toBe(`00-${trace}-${child.spanId}-01`)
    expect(childMeta.tracestate).toBe('vendor=opaque')
  })

  it('prompts/get, resources/read and completion/complete are SERVER spans too, each with the CLIENT span of its child under it', async () => {
    const trace = traceOf(2)
    const traceparent = `00-${trace}-${CALLER_SPAN}-01`
    await client.getPrompt({ name: 'echo__greet', arguments: { who: 'Ada' }, _meta: { traceparent } })
    await client.readResource({ uri: 'echo://static', _meta: { traceparent } })
    const completion = await client.complete({
      ref: { type: 'ref/prompt', name: 'echo__greet' },
      argument: { name: 'who', value: 'al' },
      _meta: { traceparent },
    })
    expect(completion.completion.values.length).toBeGreaterThan(0)
    await waitFor(() => spansOf(trace).length >= 6, 10_000, 'six spans')
    const named = (name: string) => spansOf(trace).find((s) => s.name === name)!
    expect(named('prompts/get echo__greet')).toMatchObject({
      kind: SERVER,
      parentSpanId: CALLER_SPAN,
      attributes: { 'mcp.method.name': 'prompts/get', 'gen_ai.prompt.name': 'echo__greet' },
    })
    expect(named('prompts/get greet')).toMatchObject({
      kind: CLIENT,
      parentSpanId: named('prompts/get echo__greet').spanId,
    })
    // Resources keep their URI at the child: both spans have the one name.
    const reads = spansOf(trace).filter((s) => s.name === 'resources/read echo://static')
    const readServer = reads.find((s) => s.kind === SERVER)!
    expect(readServer).toMatchObject({ parentSpanId: CALLER_SPAN, attributes: { 'mcp.resource.uri': 'echo://static' } })
    expect(reads.find((s) => s.kind === CLIENT)).toMatchObject({ parentSpanId: readServer.spanId })
    expect(named('completion/complete echo__greet')).toMatchObject({
      kind: SERVER,
      parentSpanId: CALLER_SPAN,
      attributes: { 'mcp.method.name': 'completion/complete' },
    })
    expect(named('completion/complete greet')).toMatchObject({
      kind: CLIENT,
      parentSpanId: named('completion/complete echo__greet').spanId,
    })
  })

  it('the lists myc answers itself are SERVER spans under the caller’s, with no child span', async () => {
    const trace = traceOf(4)
    const _meta = { traceparent: `00-${trace}-${CALLER_SPAN}-01` }
    await client.listTools({ _meta })
    await client.listPrompts({ _meta })
    await client.listResources({ _meta })
    await client.listResourceTemplates({ _meta })
    const methods = ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']
    await waitFor(() => methods.every((m) => spansOf(trace).some((s) => s.name === m)), 10_000, 'the list spans')
    for (const method of methods)
      expect(spansOf(trace).find((s) => s.name === method)).toMatchObject({
        kind: SERVER,
        parentSpanId: CALLER_SPAN,
        attributes: { 'mcp.method.name': method },
      })
    // Later spans of the trace would come in the same export: none is a child's.
    expect(spansOf(trace).filter((s) => s.kind === CLIENT)).toEqual([])
    // A 2026-07-28 client's list, served by the stateless server: the same span.
    const modern = new Client(
      { name: 'traced-2026', version: '1' },
      { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    )
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    }
    await connectHere(['serve', '--era', 'auto', '--config', bareConfig()], { env, client: modern })
    const modernTrace = '0af7651916cd43dd8448eb211c80319c'
    await modern.listTools({ _meta: { traceparent: `00-${modernTrace}-${CALLER_SPAN}-01` } }, { cacheMode: 'bypass' })
    await modern.close()
    await waitFor(() => spansOf(modernTrace).some((s) => s.name === 'tools/list'), 10_000, 'the 2026 list span')
    expect(spansOf(modernTrace).find((s) => s.name === 'tools/list')).toMatchObject({
      kind: SERVER,
      parentSpanId: CALLER_SPAN,
    })
  })

  it('a hidden or unknown tool is a span with the caller’s name and the same error, and no server', async () => {
    await expect(client.callTool({ name: 'nope__never', arguments: {} })).rejects.toThrow(/Unknown tool/)
    const named = () => receiver.spans.find((s) => s.name === 'tools/call nope__never')
    await waitFor(() => named() !== undefined, 10_000, 'the span')
    const span = named()!
    expect(span).toMatchObject({ kind: SERVER, status: { code: 2 } })
    expect(span.attributes['mycelium.server']).toBeUndefined()
    // A new trace of its own when the caller sent none.
    expect(span.parentSpanId).toBeUndefined()
    expect(receiver.spans.filter((s) => s.traceId === span.traceId)).toHaveLength(1)
  })
})

describe('OpenTelemetry: one trace from the caller through myc to the child (in process)', () => {
  let receiver: OtlpReceiver
  beforeEach(async () => {
    receiver = new OtlpReceiver()
    await receiver.start()
  })
  afterEach(() => receiver.close())

  it('over HTTP, the traceparent header is the parent when _meta names none', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    }
    const m = await startHttpHere(config(), { env })
    try {
      const transport = new StreamableHTTPClientTransport(new URL(m.url), {
        requestInit: { headers: { traceparent: `00-${TRACE}-${CALLER_SPAN}-01`, tracestate: 'from=header' } },
      })
      const client = new Client({ name: 'traced-http', version: '1' })
      await client.connect(transport)
      const result = await client.callTool({ name: 'probe__meta', arguments: {} })
      const sessionId = transport.sessionId
      await client.close()
      const childMeta = (result.structuredContent as { meta: Record<string, string> }).meta
      await waitFor(() => receiver.spans.some((s) => s.kind === CLIENT), 10_000, 'the spans')
      const server = receiver.spans.find((s) => s.kind === SERVER && s.name === 'tools/call probe__meta')!
      expect(server).toMatchObject({ traceId: TRACE, parentSpanId: CALLER_SPAN })
      // The HTTP session it belongs to, by its id.
      expect(sessionId).toBeTruthy()
      expect(server.attributes['mcp.session.id']).toBe(sessionId)
      expect(childMeta.traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`))
      expect(childMeta.tracestate).toBe('from=header')
    } finally {
      await m.stop()
    }
  })

  it('an HTTP child gets the trace context in its request headers as in _meta: myc’s CLIENT span while tracing, else the caller’s', async () => {
    const child = await startHttpFixture('meta-echo')
    try {
      const httpConfig = writeConfig({ mcpServers: { probe: { type: 'http', url: child.url } } })
      const call = async (env: Record<string, string>) => {
        const { client } = await connectHere(['serve', '--config', httpConfig], { env })
        const result = await client.callTool({
          name: 'probe__meta',
          arguments: {},
          _meta: { traceparent: `00-${TRACE}-${CALLER_SPAN}-01`, tracestate: 'vendor=opaque' },
        })
        await client.close()
        return result.structuredContent as { meta: Record<string, string>; headers: Record<string, string> }
      }
      const traced = await call({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      })
      await waitFor(() => receiver.spans.some((s) => s.kind === CLIENT), 10_000, 'the CLIENT span')
      const clientSpan = receiver.spans.find((s) => s.kind === CLIENT)!
      expect(traced.headers).toEqual({
        traceparent: `00-${TRACE}-${clientSpan.spanId}-01`,
        tracestate: 'vendor=opaque',
      })
      expect(traced.meta.traceparent).toBe(traced.headers.traceparent)
      const untraced = await call({})
      expect(untraced.headers).toEqual({ traceparent: `00-${TRACE}-${CALLER_SPAN}-01`, tracestate: 'vendor=opaque' })
    } finally {
      child.stop()
    }
  })

  it('exports OTLP/protobuf by default', async () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' }
    const { client } = await connectHere(['serve', '--config', bareConfig()], { env })
    await client.listTools()
    await client.close()
    await waitFor(() => receiver.requests.length >= 1, 10_000, 'an export')
    expect(receiver.requests[0]!.contentType).toBe('application/x-protobuf')
    expect(receiver.requests[0]!.bytes).toBeGreaterThan(50)
  })

  it('sends nothing without the variables, and the child gets the caller’s context untouched', async () => {
    const childMeta = await callThroughMyc({})
    expect(childMeta.traceparent).toBe(`00-${TRACE}-${CALLER_SPAN}-01`)
    // Without the OTEL variables, no export may reach the receiver.
    await quietWindow(300)
    expect(receiver.requests).toEqual([])
  })

  it('a dead endpoint does not slow calls: they answer while spans are dropped', async () => {
    const dead = new OtlpReceiver()
    await dead.start()
    const url = dead.url
    await dead.close()
    // An endpoint that takes the export and never answers: a call that waited on it would never answer either.
    const held = await silentEndpoint()
    const serveTo = (endpoint: string) =>
      connectHere(['serve', '--config', config()], {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '10',
          // An export gives up after half a second, retries included: what each close waits for at most.
          OTEL_EXPORTER_OTLP_TIMEOUT: '500',
        },
      })
    const [{ client }, { client: heldClient }] = await Promise.all([serveTo(url), serveTo(held.url)])
    try {
      await heldClient.callTool({ name: 'probe__meta', arguments: {} })
      await waitFor(() => held.connections() > 0, 10_000, 'an export to the endpoint that never answers')
      for (let i = 0; i < 20; i++) await heldClient.callTool({ name: 'probe__meta', arguments: {} })
      // A refused connection: the calls answer all the same.
      for (let i = 0; i < 20; i++) await client.callTool({ name: 'probe__meta', arguments: {} })
    } finally {
      // The held exports fail once the endpoint goes, so that myc's last flush on close does not wait for them.
      held.close()
    }
    // Each close waits out its last export (OTEL_EXPORTER_OTLP_TIMEOUT): both at once.
    await Promise.all([heldClient.close(), client.close()])
  })

  it('myc run is one trace: invoke_agent, a chat span per request, execute_tool, then myc’s call to the child, whose traceparent is in it', async () => {
    const fake = new FakeAnthropic()
    await fake.start()
    try {
      fake.setScript((_req, i) =>
        i === 0
          ? { content: [{ type: 'tool_use', name: 'probe__meta', input: {} }] }
          : { content: [{ type: 'text', text: 'done' }] },
      )
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      }
      const r = await runAgentHere(['run', 'look', '--config', config(), '--json'], { fake, env })
      expect(r.code, r.stderr).toBe(0)
      await waitFor(() => receiver.spans.length >= 6, 10_000, 'the spans of the run')
      const start = r.events[0] as { traceId?: string }
      const end = r.events.at(-1) as { traceId?: string }
      expect(start.traceId).toMatch(/^[0-9a-f]{32}$/)
      expect(end.traceId).toBe(start.traceId)
      const spans = receiver.spans.filter((s) => s.traceId === start.traceId)
      const byName = (name: string) => spans.filter((s) => s.name === name)
      const root = byName('invoke_agent mycelium')[0]!
      expect(root.parentSpanId).toBeUndefined()
      const chats = spans.filter((s) => s.name.startsWith('chat '))
      expect(chats).toHaveLength(2)
      for (const chat of chats)
        expect(chat).toMatchObject({
          parentSpanId: root.spanId,
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.usage.input_tokens': expect.any(Number),
            'gen_ai.usage.output_tokens': expect.any(Number),
          },
        })
      const tool = byName('execute_tool probe:meta')[0]!
      expect(tool.parentSpanId).toBe(root.spanId)
      const server = byName('tools/call probe__meta')[0]!
      expect(server.parentSpanId).toBe(tool.spanId)
      const client = byName('tools/call meta')[0]!
      expect(client.parentSpanId).toBe(server.spanId)
      // What the child got: the same trace, under myc's CLIENT span.
      const result = r.events.find((e) => e.type === 'tool_result') as { content: Array<{ text: string }> }
      expect((JSON.parse(result.content[0]!.text) as { traceparent: string }).traceparent).toBe(
        `00-${start.traceId}-${client.spanId}-01`,
      )
    } finally {
      await fake.close()
    }
  }, 30_000)

  it('a worker is an invoke_agent span under the delegate call’s execute_tool, its own chat and tool spans under it', async () => {
    const fake = new FakeAnthropic()
    await fake.start()
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-traced-workers-'))
    mkdirSync(path.join(dir, 'skills', 'probe'), { recursive: true })
    writeFileSync(
      path.join(dir, 'skills', 'probe', 'SKILL.md'),
      '---\nname: probe\ndescription: The probe skill\nallowedRoles: [dev]\nallowedTools: ["probe:*"]\n---\n',
    )
    const workersConfig = path.join(dir, 'mycelium.config.json')
    writeFileSync(
      workersConfig,
      JSON.stringify({
        mcpServers: { probe: { command: process.execPath, args: [fixtureServer('meta-echo')] } },
        roles: { default: 'dev' },
        agent: { workers: { enabled: true, max: 1, maxTurns: 3 } },
      }),
    )
    try {
      // The parent delegates; the worker (its system prompt says so) calls probe__meta, then answers; the parent ends.
      fake.setScript((req) => {
        const worker = JSON.stringify(req.body.system ?? '').includes('You are a worker')
        const last = req.body.messages.at(-1)!
        const answered = typeof last.content !== 'string'
        if (worker)
          return answered
            ? { content: [{ type: 'text', text: 'worker done' }] }
            : { content: [{ type: 'tool_use', name: 'probe__meta', input: {} }] }
        return answered
          ? { content: [{ type: 'text', text: 'done' }] }
          : { content: [{ type: 'tool_use', name: 'mycelium__delegate', input: { skill: 'probe', task: 'look' } }] }
      })
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      }
      const r = await runAgentHere(['run', 'delegate it', '--config', workersConfig, '--json'], { fake, env })
      expect(r.code, r.stderr).toBe(0)
      const traceId = (r.events[0] as { traceId: string }).traceId
      await waitFor(
        () => receiver.spans.some((s) => s.name === 'tools/call meta' && s.traceId === traceId),
        10_000,
        'the worker’s call to the child',
      )
      const spans = receiver.spans.filter((s) => s.traceId === traceId)
      const one = (name: string) => spans.find((s) => s.name === name)!
      const delegate = one('execute_tool mycelium:delegate')
      expect(delegate.parentSpanId).toBe(one('invoke_agent mycelium').spanId)
      const worker = one('invoke_agent worker')
      expect(worker.parentSpanId).toBe(delegate.spanId)
      const workerChats = spans.filter((s) => s.name.startsWith('chat ') && s.parentSpanId === worker.spanId)
      expect(workerChats).toHaveLength(2)
      expect(one('execute_tool probe:meta').parentSpanId).toBe(worker.spanId)
      expect(one('tools/call probe__meta').parentSpanId).toBe(one('execute_tool probe:meta').spanId)
    } finally {
      await fake.close()
    }
  }, 30_000)

  it('myc chat: each turn is a trace of its own, invoke_agent at its root and the turn’s chat spans under it', async () => {
    const fake = new FakeAnthropic()
    await fake.start()
    try {
      fake.setScript((_req, i) =>
        i === 0
          ? { content: [{ type: 'tool_use', name: 'probe__meta', input: {} }] }
          : { content: [{ type: 'text', text: `answer ${i}` }] },
      )
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      }
      const r = await runAgentHere(['chat', '--config', config()], { fake, env, input: 'first\nsecond\n' })
      expect(r.code, r.stderr).toBe(0)
      await waitFor(
        () =>
          receiver.spans.filter((s) => s.name === 'invoke_agent mycelium').length >= 2 &&
          receiver.spans.filter((s) => s.name.startsWith('chat ')).length >= 3,
        10_000,
        'two turns of spans',
      )
      const roots = receiver.spans.filter((s) => s.name === 'invoke_agent mycelium')
      expect(roots).toHaveLength(2)
      expect(new Set(roots.map((s) => s.traceId)).size).toBe(2)
      for (const root of roots) {
        expect(root.parentSpanId).toBeUndefined()
        expect(root.attributes).toMatchObject({
          'mycelium.mode': 'chat',
          'mycelium.end_reason': 'done',
          'gen_ai.usage.input_tokens': expect.any(Number),
        })
      }
      // Model names aside (the default model): what each turn did.
      const [first, second] = roots.map((root) =>
        receiver.spans
          .filter((s) => s.traceId === root.traceId)
          .map((s) => s.name.replace(/^chat .*/, 'chat'))
          .sort(),
      )
      expect(first).toEqual([
        'chat',
        'chat',
        'execute_tool probe:meta',
        'invoke_agent mycelium',
        'tools/call meta',
        'tools/call probe__meta',
      ])
      expect(second).toEqual(['chat', 'invoke_agent mycelium'])
    } finally {
      await fake.close()
    }
  }, 30_000)

  it('a child call that times out, or whose child goes away, is an error with an event saying which', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    }
    const failing = writeConfig({
      mcpServers: {
        crash: { command: process.execPath, args: [fixtureServer('crash')] },
        hang: { command: process.execPath, args: [fixtureServer('hang')], timeoutMs: 300 },
      },
    })
    const { client } = await connectHere(['serve', '--config', failing], { env })
    await client.callTool({ name: 'crash__crash', arguments: {} }).catch(() => undefined)
    await client.callTool({ name: 'hang__hang', arguments: {} }).catch(() => undefined)
    await client.close()
    await waitFor(
      () => ['tools/call crash', 'tools/call hang'].every((n) => receiver.spans.some((s) => s.name === n)),
      10_000,
      'the two CLIENT spans',
    )
    const crashed = receiver.spans.find((s) => s.name === 'tools/call crash')!
    expect(crashed).toMatchObject({ kind: CLIENT, status: { code: 2 }, events: ['child_gone'] })
    const hung = receiver.spans.find((s) => s.name === 'tools/call hang')!
    expect(hung).toMatchObject({ kind: CLIENT, status: { code: 2 }, events: ['timeout'] })
  }, 30_000)
})

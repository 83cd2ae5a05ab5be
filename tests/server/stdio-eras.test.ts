import { PassThrough } from 'node:stream'
import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { StdioServerStream } from '../../src/protocol/stdio-server-transport.js'
import { openView } from '../../src/principal/view.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { openingEra, StdioEraConnection, type StdioEraMode } from '../../src/server/stdio-eras.js'
import { TaskRegistry } from '../../src/eras/modern/task-registry.js'
import { clientFaces } from '../../src/eras/client-faces.js'
import { fixtureEntry, startRuntime } from '../helpers/runtime.js'
import { waitFor } from '../helpers/wait-for.js'
import { eachLine } from '../helpers/stdio-lines.js'

const MODERN = '2026-07-28'
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} }
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 'i',
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
}

describe("openingEra: the era a stdio connection's first message asks for", () => {
  it('initialize and envelope-less messages are 2025; server/discover and envelope-carrying ones 2026; a response none', () => {
    const m = (v: unknown) => v as JSONRPCMessage
    expect(openingEra(m(INITIALIZE))).toBe('legacy')
    expect(openingEra(m({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))).toBe('legacy')
    expect(openingEra(m({ jsonrpc: '2.0', method: 'notifications/initialized' }))).toBe('legacy')
    expect(openingEra(m({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: ENVELOPE } }))).toBe(
      'modern',
    )
    expect(openingEra(m({ jsonrpc: '2.0', id: 1, method: 'server/discover' }))).toBe('modern')
    expect(openingEra(m({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: ENVELOPE } }))).toBe('modern')
    // A malformed envelope or an unknown revision is the 2026 era's to refuse (-32602, -32022).
    expect(
      openingEra(
        m({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/list',
          params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 5 } },
        }),
      ),
    ).toBe('modern')
    expect(openingEra(m({ jsonrpc: '2.0', id: 1, result: {} }))).toBeUndefined()
  })
})

/** One connection over in-memory stdin/stdout: lines in, parsed answers out. */
function serve(runtime: Runtime, era: StdioEraMode = 'auto', tasks?: TaskRegistry) {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const out: Array<Record<string, unknown>> = []
  eachLine(stdout, (line) => out.push(JSON.parse(line) as Record<string, unknown>))
  const connection = new StdioEraConnection({ runtime, view: openView(), era, faces: clientFaces(tasks) })
  const closed = new Promise<void>((resolve) => (connection.onclose = resolve))
  void connection.connect(new StdioServerStream(stdin, stdout))
  const answerTo = (id: unknown) => out.find((m) => m.id === id && m.method === undefined)
  const answer = async (id: unknown) => {
    await waitFor(() => answerTo(id) !== undefined, 10_000, `the answer to ${String(id)}`)
    return answerTo(id)!
  }
  return {
    connection,
    out,
    closed,
    answer,
    send: (m: unknown) => stdin.write(`${JSON.stringify(m)}\n`),
    end: () => stdin.end(),
  }
}

describe('StdioEraConnection: one era per connection, over the stdio stream', () => {
  let runtime: Runtime
  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { echo: fixtureEntry('echo') } })
  })
  afterAll(() => runtime?.close())

  it('serves a 2026 opening statelessly, and a 2025 opening with a session', async () => {
    const modern = serve(runtime)
    modern.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: ENVELOPE } })
    expect((await modern.answer(1)).result).toMatchObject({ cacheScope: 'private', resultType: 'complete' })
    expect(modern.connection.era).toBe('modern')
    modern.end()
    await modern.closed

    const legacy = serve(runtime)
    legacy.send(INITIALIZE)
    expect((await legacy.answer('i')).result).toMatchObject({
      protocolVersion: '2025-11-25',
      serverInfo: { name: 'mycelium' },
    })
    legacy.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
    const listed = (await legacy.answer(2)).result!
    expect(listed).not.toHaveProperty('cacheScope')
    expect(legacy.connection.era).toBe('legacy')
    legacy.end()
    await legacy.closed
  })

  it('carries a large call to the child and back, in both eras, its arguments as the client wrote them', async () => {
    // Large enough for the arguments' text to be spliced (protocol/request-lines.ts), with escapes, quotes and non-ASCII.
    const message = `${'line "one"\\\ttwo\n'.repeat(4_000)}é😀\u2028`
    const call = (id: number, extra: object = {}) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'echo__echo', arguments: { message }, ...extra },
    })
    const legacy = serve(runtime)
    legacy.send(INITIALIZE)
    await legacy.answer('i')
    legacy.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    legacy.send(call(3, { _meta: { progressToken: 'p' } }))
    expect((await legacy.answer(3)).result).toMatchObject({ structuredContent: { echoed: message } })
    legacy.end()
    await legacy.closed

    const modern = serve(runtime)
    modern.send(call(4, { _meta: ENVELOPE }))
    expect((await modern.answer(4)).result).toMatchObject({ structuredContent: { echoed: message } })
    modern.end()
    await modern.closed
  })

  it('ends at once when the client leaves without a word', async () => {
    const quiet = serve(runtime)
    quiet.end()
    await quiet.closed
    expect(quiet.out).toEqual([])
    expect(quiet.connection.era).toBeUndefined()
  })

  it('--era legacy answers 2026 requests as unknown methods; --era modern refuses initialize and stays open', async () => {
    const legacy = serve(runtime, 'legacy')
    legacy.send({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: ENVELOPE } })
    expect((await legacy.answer('d')).error).toMatchObject({ code: -32601, message: 'Method not found' })
    legacy.send(INITIALIZE)
    expect((await legacy.answer('i')).result).toMatchObject({ serverInfo: { name: 'mycelium' } })
    legacy.end()
    await legacy.closed

    const modern = serve(runtime, 'modern')
    modern.send(INITIALIZE)
    expect((await modern.answer('i')).error).toMatchObject({
      code: -32022,
      data: { supported: [MODERN], requested: '2025-11-25' },
    })
    modern.send({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: ENVELOPE } })
    expect((await modern.answer('d')).result).toMatchObject({ supportedVersions: [MODERN] })
    modern.end()
    await modern.closed
  })
})

describe("StdioEraConnection: the runtime's task registry", () => {
  let runtime: Runtime
  beforeAll(async () => {
    // The both-era conformance fixture as a 2026 child: it creates tasks itself.
    runtime = await startRuntime({
      mcpServers: { conformance: fixtureEntry('conformance', { prefix: false, era: 'auto' }) },
    })
  })
  afterAll(() => runtime?.close())

  const TASKS_ENVELOPE = {
    ...ENVELOPE,
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  }

  it('keeps a task in the registry it was handed, where a later connection of the same runtime finds it', async () => {
    const tasks = new TaskRegistry()
    const first = serve(runtime, 'auto', tasks)
    first.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'slow_compute', arguments: { seconds: 5, label: 'registry' }, _meta: TASKS_ENVELOPE },
    })
    const created = (await first.answer(1)).result as { resultType?: string; taskId?: string }
    expect(created.resultType).toBe('task')
    expect(tasks.ledger.holderOf('', created.taskId!)?.child).toBe(runtime.supervisor.children.get('conformance'))
    first.end()
    await first.closed

    // The registry outlives the connection (serve-stdio and serve --http own it): the task is still found and cancelled.
    const second = serve(runtime, 'auto', tasks)
    second.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tasks/cancel',
      params: { taskId: created.taskId, _meta: TASKS_ENVELOPE },
    })
    expect((await second.answer(2)).error).toBeUndefined()
    // A connection with a registry of its own does not know it.
    const other = serve(runtime)
    other.send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tasks/get',
      params: { taskId: created.taskId, _meta: TASKS_ENVELOPE },
    })
    expect((await other.answer(3)).error).toMatchObject({ code: -32602 })
    second.end()
    other.end()
    await Promise.all([second.closed, other.closed])
  })
})

import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LARGE_LINE_BYTES } from '../../src/children/stdio-transport.js'
import { clientFaces } from '../../src/eras/client-faces.js'
import { openView } from '../../src/principal/view.js'
import { StdioServerStream } from '../../src/protocol/stdio-server-transport.js'
import { observeToolCalls, type ToolCallOutcome } from '../../src/runtime/principal-tools.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { StdioEraConnection } from '../../src/server/stdio-eras.js'
import { fixtureEntry, startRuntime } from '../helpers/runtime.js'
import { eachLine } from '../helpers/stdio-lines.js'
import { waitFor } from '../helpers/wait-for.js'

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
}

/** One stdio connection over in-memory streams: the lines it writes, as written. */
function serve(runtime: Runtime) {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const lines: string[] = []
  eachLine(stdout, (line) => lines.push(line))
  const connection = new StdioEraConnection({ runtime, view: openView(), era: 'auto', faces: clientFaces() })
  const closed = new Promise<void>((resolve) => (connection.onclose = resolve))
  void connection.connect(new StdioServerStream(stdin, stdout))
  const lineOf = (id: unknown) => lines.find((l) => (JSON.parse(l) as { id?: unknown; method?: unknown }).id === id)
  return {
    send: (m: unknown) => stdin.write(`${JSON.stringify(m)}\n`),
    answer: async (id: unknown) => {
      await waitFor(() => lineOf(id) !== undefined, 20_000, `the answer to ${String(id)}`)
      return lineOf(id)!
    },
    end: async () => {
      stdin.end()
      await closed
    },
  }
}

/** A 2025 session opened on `client`: initialize answered, then initialized. */
async function initialized(client: ReturnType<typeof serve>): Promise<void> {
  client.send({
    jsonrpc: '2.0',
    id: 'i',
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  })
  await client.answer('i')
  client.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
}

const big = (id: number, args: Record<string, unknown>, extra: object = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'bulk__big', arguments: args, ...extra },
})

describe('large answers through myc (stdio), beside small calls to another child', () => {
  let runtime: Runtime
  const outcomes: Array<[string, ToolCallOutcome]> = []
  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { bulk: fixtureEntry('big-lines'), echo: fixtureEntry('echo') } })
    observeToolCalls(runtime, { called: (r) => outcomes.push([`${r.server}:${r.tool}`, r.outcome]), unknown: () => {} })
  })
  afterAll(() => runtime?.close())

  it('relays a large answer as the child wrote it, under the client’s id, while small calls go on', async () => {
    const client = serve(runtime)
    await initialized(client)
    const bytes = 2 * LARGE_LINE_BYTES
    client.send(big(1, { bytes, char: 'é' }))
    client.send(big(2, { bytes, style: 'python', isError: true }))
    for (let id = 10; id < 20; id++)
      client.send({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'echo__echo', arguments: { message: `m${id}` } },
      })
    for (let id = 10; id < 20; id++)
      expect(JSON.parse(await client.answer(id))).toMatchObject({ result: { structuredContent: { echoed: `m${id}` } } })
    const text = JSON.stringify({ content: [{ type: 'text', text: 'é'.repeat(bytes) }] })
    expect(await client.answer(1)).toBe(`{"result":${text},"jsonrpc":"2.0","id":1}`)
    const failed = JSON.stringify({ content: [{ type: 'text', text: 'x'.repeat(bytes) }], isError: true })
    expect(await client.answer(2)).toBe(`{"jsonrpc":"2.0","id":2,"result":${failed}}`)
    // The checks read the answer as parsed: the isError one is a tool error for the observers (and the audit log, and the span).
    expect(outcomes.filter(([tool]) => tool === 'bulk:big')).toEqual([
      ['bulk:big', 'ok'],
      ['bulk:big', 'tool_error'],
    ])
    await client.end()
  })

  it('relays a 100 KiB answer (parsed on the loop) as the child wrote it, under the client’s id, and a non-UTF-8 one as text', async () => {
    const client = serve(runtime)
    await initialized(client)
    const bytes = 100 * 1024
    outcomes.length = 0
    client.send(big(4, { bytes, char: 'é', cr: true }))
    client.send(big(5, { bytes, style: 'python', isError: true }))
    client.send(big(6, { bytes, char: 'é', latin1: true }))
    const text = JSON.stringify({ content: [{ type: 'text', text: 'é'.repeat(bytes) }] })
    expect(await client.answer(4)).toBe(`{"result":${text},\r"jsonrpc":"2.0","id":4}`)
    const failed = JSON.stringify({ content: [{ type: 'text', text: 'x'.repeat(bytes) }], isError: true })
    expect(await client.answer(5)).toBe(`{"jsonrpc":"2.0","id":5,"result":${failed}}`)
    const replaced = JSON.stringify({ content: [{ type: 'text', text: '\uFFFD'.repeat(bytes) }] })
    expect(await client.answer(6)).toBe(`{"result":${replaced},"jsonrpc":"2.0","id":6}`)
    expect(outcomes.map(([, outcome]) => outcome)).toEqual(['ok', 'tool_error', 'ok'])
    await client.end()
  })

  it('gives a 2026 client the same answer, through its era’s face', async () => {
    const client = serve(runtime)
    client.send(big(3, { bytes: LARGE_LINE_BYTES, isError: true }, { _meta: ENVELOPE }))
    const answer = JSON.parse(await client.answer(3)) as {
      result: { content: Array<{ text: string }>; isError: boolean }
    }
    expect(answer.result).toMatchObject({ isError: true, resultType: 'complete' })
    expect(answer.result.content[0]!.text).toHaveLength(LARGE_LINE_BYTES)
    await client.end()
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LARGE_LINE_BYTES } from '../../src/children/stdio-transport.js'
import { observeToolCalls, type ToolCallOutcome } from '../../src/runtime/principal-tools.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { ALICE, openRawSession, serveFace, type ServedFace } from '../helpers/http-face.js'
import { mcpHeaders } from '../helpers/http.js'
import { fixtureEntry, startRuntime } from '../helpers/runtime.js'

/** One request on a 2025 session as a plain POST: the answer's SSE text as it came. */
async function post(served: ServedFace, session: string, body: Record<string, unknown> | string): Promise<string> {
  const response = await fetch(served.url, {
    method: 'POST',
    headers: mcpHeaders({
      Authorization: `Bearer ${ALICE}`,
      'Mcp-Session-Id': session,
      'MCP-Protocol-Version': '2025-11-25',
    }),
    body: typeof body === 'string' ? body : JSON.stringify({ jsonrpc: '2.0', ...body }),
  })
  expect(response.headers.get('content-type')).toBe('text/event-stream')
  return response.text()
}

/** The data of the SSE event that answers a request (the one with a result or an error), as its text. */
function answerData(sse: string): string {
  const events = sse.split('\n\n')
  // Every event ends with its blank line (an unfinished one is dropped by an SSE reader).
  expect(events.pop()).toBe('')
  const data = events
    .map((event) =>
      event
        .split('\n')
        .find((line) => line.startsWith('data: '))
        ?.slice(6),
    )
    .filter((d): d is string => d !== undefined && d !== '')
  const found = data.find((d) => 'result' in (JSON.parse(d) as object) || 'error' in (JSON.parse(d) as object))
  if (found === undefined) throw new Error(`no answer in ${sse.slice(0, 300)}`)
  return found
}

const call = (id: number, name: string, args: Record<string, unknown>) => ({
  id,
  method: 'tools/call',
  params: { name, arguments: args },
})

describe('large messages over Streamable HTTP (2025 session)', () => {
  let runtime: Runtime
  let served: ServedFace
  let session: string
  const outcomes: Array<[string, ToolCallOutcome]> = []
  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { bulk: fixtureEntry('big-lines'), echo: fixtureEntry('echo') } })
    observeToolCalls(runtime, { called: (r) => outcomes.push([`${r.server}:${r.tool}`, r.outcome]), unknown: () => {} })
    served = await serveFace(runtime)
    session = (await openRawSession(served.url, ALICE)).id!
  })
  afterAll(async () => {
    await served?.close()
    await runtime?.close()
  })

  it("sends a child's answer as the child wrote it, the client's id spliced in, small and large", async () => {
    // The echo child (the TypeScript SDK) writes its id last; myc's own serialisation would put it first.
    expect(answerData(await post(served, session, call(3, 'echo__echo', { message: 'hi' })))).toBe(
      '{"result":{"content":[{"type":"text","text":"hi"}],"structuredContent":{"echoed":"hi"}},"jsonrpc":"2.0","id":3}',
    )
    for (const [id, bytes] of [
      [4, 1000],
      [5, 2 * LARGE_LINE_BYTES],
    ] as const) {
      const text = JSON.stringify({ content: [{ type: 'text', text: 'é'.repeat(bytes) }] })
      expect(answerData(await post(served, session, call(id, 'bulk__big', { bytes, char: 'é' })))).toBe(
        `{"result":${text},"jsonrpc":"2.0","id":${id}}`,
      )
    }
    // The id second, as the Python SDK writes it: the large rest of the line follows the spliced id.
    const text = JSON.stringify({ content: [{ type: 'text', text: 'x'.repeat(LARGE_LINE_BYTES) }] })
    expect(
      answerData(await post(served, session, call(11, 'bulk__big', { bytes: LARGE_LINE_BYTES, style: 'python' }))),
    ).toBe(`{"jsonrpc":"2.0","id":11,"result":${text}}`)
  })

  it('hands a large call to the child with the value the client wrote, its text kept or serialised again', async () => {
    const message = 'é'.repeat(64 * 1024)
    const canonical = JSON.stringify({ jsonrpc: '2.0', ...call(9, 'echo__echo', { message }) })
    const spaced = `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo__echo","arguments": {"message": "\\u00e9${message}"}}}`
    expect(JSON.parse(answerData(await post(served, session, canonical)))).toMatchObject({
      id: 9,
      result: { structuredContent: { echoed: message } },
    })
    expect(JSON.parse(answerData(await post(served, session, spaced)))).toMatchObject({
      id: 10,
      result: { structuredContent: { echoed: `é${message}` } },
    })
  })

  it('reads the answer for the checks as before: an isError answer is a tool error to the observers', async () => {
    outcomes.length = 0
    const sse = await post(served, session, call(6, 'bulk__big', { bytes: LARGE_LINE_BYTES, isError: true }))
    expect(JSON.parse(answerData(sse))).toMatchObject({ id: 6, result: { isError: true } })
    expect(outcomes).toEqual([['bulk:big', 'tool_error']])
  })

  it('serialises again a line that holds a carriage return (JSON whitespace, an end of line in SSE)', async () => {
    for (const [id, bytes] of [
      [7, 10],
      [8, LARGE_LINE_BYTES],
    ] as const) {
      const data = answerData(await post(served, session, call(id, 'bulk__big', { bytes, cr: true })))
      expect(data).toBe(
        `{"jsonrpc":"2.0","id":${id},"result":${JSON.stringify({ content: [{ type: 'text', text: 'x'.repeat(bytes) }] })}}`,
      )
    }
  })
})

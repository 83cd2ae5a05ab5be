import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import { afterAll, describe, expect, it } from 'vitest'
import {
  BYTES_KEPT_FROM,
  ChildStdioTransport,
  LARGE_LINE_BYTES,
  startEarly,
} from '../../src/children/stdio-transport.js'
import { LineParser } from '../../src/protocol/line-parser.js'
import { responseLine } from '../../src/protocol/result-lines.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { waitFor } from '../helpers/wait-for.js'

const parser = new LineParser()
const opened: ChildStdioTransport[] = []
afterAll(async () => {
  await Promise.all(opened.map((t) => t.close()))
  parser.close()
})

/**
 * The big-lines fixture behind a child transport, started early so that
 * the test holds its process and hears its stdout too: a listener of the
 * test's own, added after the transport's, runs in the same turn as it.
 */
async function open(lines: LineParser | undefined) {
  const early = startEarly({
    command: process.execPath,
    args: [fixtureServer('big-lines')],
    env: { ...process.env } as Record<string, string>,
  })
  const transport = new ChildStdioTransport({ command: process.execPath, args: [], env: {}, early, lines })
  opened.push(transport)
  const got: JSONRPCMessage[] = []
  const errors: string[] = []
  transport.onmessage = (message) => got.push(message)
  transport.onerror = (error) => errors.push(error.message)
  await transport.start()
  return { early, transport, got, errors }
}

const call = (id: string, args: Record<string, unknown>) =>
  ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'big', arguments: args } }) as JSONRPCMessage

/** What a message is, in a word: a response's id, a notification's data. */
const named = (m: JSONRPCMessage) =>
  (m as { id?: string }).id ?? (m as unknown as { params: { data: string } }).params.data

describe('a large line from a child is parsed off the event loop', () => {
  it('is handed on only after the loop turned once past its last byte, and what the child wrote after it waits for it', async () => {
    const { early, transport, got, errors } = await open(parser)
    // Queued in the turn that reads the end of the large line: it runs before that line is handed on, so
    // whatever else is ready then (another child's answer, a client's request) is served meanwhile.
    let turned = false
    let queued = false
    early.process.stdout!.on('data', (chunk: Buffer | string) => {
      if (queued || !(typeof chunk === 'string' ? chunk.includes('\n') : chunk.includes(0x0a))) return
      queued = true
      setImmediate(() => (turned = true))
    })
    let turnedFirst: boolean | undefined
    transport.onmessage = (message) => {
      if (named(message) === 'myc-big') turnedFirst = turned
      got.push(message)
    }
    await transport.send(call('myc-big', { bytes: 2 * LARGE_LINE_BYTES, char: 'é' }))
    await waitFor(() => got.length === 2, 20_000, 'the answer and the notification after it')
    expect(queued).toBe(true)
    expect(turnedFirst).toBe(true)
    expect(got.map(named)).toEqual(['myc-big', 'after myc-big'])
    expect(errors).toEqual([])
    const result = (got[0] as unknown as { result: { content: Array<{ text: string }> } }).result
    expect(result.content[0]!.text).toBe('é'.repeat(2 * LARGE_LINE_BYTES))
    // Relayed as the child wrote it: its bytes, the client's id spliced in.
    const line = responseLine({ jsonrpc: '2.0', id: 7, result } as JSONRPCMessage)
    expect(Array.isArray(line)).toBe(true)
    expect(Buffer.concat(line as Buffer[]).toString()).toBe(
      `{"result":${JSON.stringify(result)},"jsonrpc":"2.0","id":7}`,
    )
  })

  it('reads the same messages, in the same order, with or without a worker: a \\r\\n line, an id second, isError', async () => {
    const args = { bytes: LARGE_LINE_BYTES + 1, crlf: true, style: 'python', isError: true }
    const seen: unknown[][] = []
    for (const lines of [parser, undefined]) {
      const { transport, got, errors } = await open(lines)
      await transport.send(call('myc-a', args))
      await transport.send(call('myc-small', { bytes: 3 }))
      await waitFor(() => got.length === 4, 20_000, 'two answers and two notifications')
      expect(errors).toEqual([])
      const answer = got[0] as { result: { isError?: boolean } }
      expect(answer.result.isError).toBe(true)
      expect(responseLine({ jsonrpc: '2.0', id: 'c', result: answer.result } as JSONRPCMessage)).toBeDefined()
      seen.push(got)
    }
    expect(seen[0]!.map((m) => named(m as JSONRPCMessage))).toEqual([
      'myc-a',
      'after myc-a',
      'myc-small',
      'after myc-small',
    ])
    expect(seen[0]).toEqual(seen[1])
  })

  it('a line the worker lost closes the connection, so that no call waits for its answer', async () => {
    const losing = new LineParser()
    // The real worker, stopped while it holds the line (as if it had died): the line is lost.
    const parse = losing.parse.bind(losing)
    losing.parse = (line) => {
      const parsed = parse(line)
      losing.close()
      return parsed
    }
    const { transport, got, errors } = await open(losing)
    let closed = false
    transport.onclose = () => (closed = true)
    await transport.send(call('myc-big', { bytes: 2 * LARGE_LINE_BYTES }))
    await waitFor(() => closed, 20_000, 'the connection to close')
    expect(got.map(named)).not.toContain('myc-big')
    expect(errors[0]).toMatch(/^a large line on stdout was lost \(closed\): the child's connection is closed$/)
  })
})

describe('a response line between BYTES_KEPT_FROM and LARGE_LINE_BYTES is parsed here and relayed as its bytes', () => {
  /** The child's answer to `args` (and what the client gets for it, under id 9), as responseLine makes it. */
  async function answerTo(args: Record<string, unknown>) {
    const { transport, got, errors } = await open(parser)
    await transport.send(call('myc-m', args))
    await waitFor(() => got.length === 2, 20_000, 'the answer and the notification after it')
    expect(errors).toEqual([])
    expect(got.map(named)).toEqual(['myc-m', 'after myc-m'])
    const result = (got[0] as unknown as { result: { content: Array<{ text: string }>; isError?: boolean } }).result
    return { result, line: responseLine({ jsonrpc: '2.0', id: 9, result } as JSONRPCMessage) }
  }
  const bytes = 100 * 1024

  it('goes out as the child wrote it, the id spliced, its bytes not copied (the id last, or second)', async () => {
    const last = await answerTo({ bytes, char: 'é', cr: true })
    const text = JSON.stringify({ content: [{ type: 'text', text: 'é'.repeat(bytes) }] })
    expect(Array.isArray(last.line)).toBe(true)
    expect(Buffer.concat(last.line as Buffer[]).toString()).toBe(`{"result":${text},\r"jsonrpc":"2.0","id":9}`)
    const second = await answerTo({ bytes, style: 'python', isError: true })
    expect(second.result.isError).toBe(true)
    const failed = JSON.stringify({ content: [{ type: 'text', text: 'x'.repeat(bytes) }], isError: true })
    expect(Array.isArray(second.line)).toBe(true)
    expect(Buffer.concat(second.line as Buffer[]).toString()).toBe(`{"jsonrpc":"2.0","id":9,"result":${failed}}`)
  })

  it('goes out as text when its bytes are not UTF-8 (the replacement characters the checks read), or it is short', async () => {
    const latin = await answerTo({ bytes, char: 'é', latin1: true })
    expect(latin.result.content[0]!.text).toBe('\uFFFD'.repeat(bytes))
    expect(typeof latin.line).toBe('string')
    expect(latin.line).toBe(`{"result":${JSON.stringify(latin.result)},"jsonrpc":"2.0","id":9}`)
    const short = await answerTo({ bytes: BYTES_KEPT_FROM - 100 })
    expect(typeof short.line).toBe('string')
    expect(short.line).toBe(`{"result":${JSON.stringify(short.result)},"jsonrpc":"2.0","id":9}`)
  })
})

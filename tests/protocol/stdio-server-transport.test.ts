import { PassThrough } from 'node:stream'
import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import { describe, expect, it } from 'vitest'
import { MIN_SPLICED_CHARS, requestLine } from '../../src/protocol/request-lines.js'
import { StdioServerStream } from '../../src/protocol/stdio-server-transport.js'
import { waitFor } from '../helpers/wait-for.js'

/** A stdio face over in-memory streams: the messages it hands on and the lines it writes back. */
async function face(maxMessageBytes?: number) {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const written: string[] = []
  stdout.setEncoding('utf8').on('data', (chunk: string) => written.push(chunk))
  const stream = new StdioServerStream(stdin, stdout, maxMessageBytes === undefined ? {} : { maxMessageBytes })
  const got: JSONRPCMessage[] = []
  stream.onmessage = (message) => got.push(message)
  await stream.start()
  return { stdin, got, written: () => written.join(''), close: () => stream.close() }
}

/** `bytes` fed in pieces of `size`. */
function feed(stdin: PassThrough, bytes: Buffer, size: number): void {
  for (let at = 0; at < bytes.length; at += size) stdin.write(bytes.subarray(at, at + size))
}

const callLine = (id: number, message: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo__echo","arguments":{"message":"${message}"}}}`

describe('the stdio face reads bytes', () => {
  it('sends a large call on with the arguments’ bytes as the client wrote them, however the chunks cut the line', async () => {
    const message = `${'é'.repeat(MIN_SPLICED_CHARS)}日本`
    const line = Buffer.from(`${callLine(1, message)}\r\n`)
    for (const size of [line.length, 4096, 1001]) {
      const { stdin, got, close } = await face()
      feed(stdin, line, size)
      await waitFor(() => got.length === 1, 5_000, 'the call')
      expect((got[0] as unknown as { params: { arguments: { message: string } } }).params.arguments.message).toBe(
        message,
      )
      const out = requestLine(got[0]!)
      // Pieces of bytes (not text): the arguments' own bytes, between the request serialized again around them.
      expect(Array.isArray(out), `pieces of ${size}`).toBe(true)
      expect(Buffer.concat(out as Buffer[]).toString()).toBe(JSON.stringify(got[0]))
      await close()
    }
  })

  it('keeps the text of a line that is not valid UTF-8: the replacement characters the checks read go on', async () => {
    const { stdin, got, close } = await face()
    const text = Buffer.from(callLine(2, 'x'.repeat(MIN_SPLICED_CHARS)))
    const at = text.indexOf('xxx')
    stdin.write(Buffer.concat([text.subarray(0, at), Buffer.from([0xff]), text.subarray(at), Buffer.from('\n')]))
    await waitFor(() => got.length === 1, 5_000, 'the call')
    const out = requestLine(got[0]!)
    expect(typeof out).toBe('string')
    expect(out).toBe(JSON.stringify(got[0]))
    expect(out).toContain('"message":"\uFFFDxxx')
    await close()
  })

  it('refuses a line over the limit with its id, a character split between chunks, and reads the next', async () => {
    const { stdin, got, written, close } = await face(64)
    const over = Buffer.from(`{"jsonrpc":"2.0","method":"ping","params":{"p":"${'é'.repeat(40)}"},"id":"late"}\n`)
    feed(stdin, over, 7)
    stdin.write('{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
    await waitFor(() => got.length === 1 && written().includes('\n'), 5_000, 'the refusal and the next request')
    expect(got[0]).toMatchObject({ id: 3, method: 'ping' })
    expect(JSON.parse(written().split('\n')[0]!)).toMatchObject({
      id: 'late',
      error: { code: -32600, message: expect.stringContaining('larger than 64 bytes') },
    })
    await close()
  })
})

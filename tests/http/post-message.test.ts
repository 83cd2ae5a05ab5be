import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readPostMessage, type ReadMessage } from '../../src/http/post-message.js'
import { inboundOf } from '../../src/http/node-bridge.js'
import { MIN_SPLICED_CHARS, requestLine } from '../../src/protocol/request-lines.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { startRuntime } from '../helpers/runtime.js'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { JSONRPCMessage } from '@modelcontextprotocol/server'

/** Posts `body` to a node:http server that reads it as myc's face does (inboundOf, then readPostMessage): the message read. */
async function read(runtime: Runtime, body: string | Buffer): Promise<JSONRPCMessage> {
  let read: Promise<ReadMessage> | undefined
  const server = createServer((req, res) => {
    read = readPostMessage(inboundOf(req, 'http://127.0.0.1'), {
      maxMessageBytes: 4 * 1024 * 1024,
      logger: runtime.logger,
      runtime,
    })
    void read.finally(() => res.end())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    })
    await response.text()
    const outcome = await read!
    if (!outcome.ok) throw new Error(`refused: ${await outcome.response.text()}`)
    return outcome.message
  } finally {
    server.close()
  }
}

describe('readPostMessage: a large call keeps its arguments text (request-lines.ts)', () => {
  let runtime: Runtime
  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: {} })
  })
  afterAll(() => runtime?.close())

  const message = 'é'.repeat(MIN_SPLICED_CHARS)
  const call = (args: string) =>
    `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo__echo","arguments":${args}}}`

  it("sends a call whose arguments are written as JSON.stringify writes them on as the body's own bytes", async () => {
    const args = JSON.stringify({ message, n: 1 })
    const parsed = await read(runtime, call(args))
    const line = requestLine(parsed)
    expect(Array.isArray(line)).toBe(true)
    expect(Buffer.concat(line as Buffer[]).toString()).toBe(JSON.stringify(parsed))
    expect(Buffer.concat(line as Buffer[]).toString()).toContain(`"arguments":${args}}`)
  })

  it('keeps the text of a body that is not valid UTF-8: the child reads the value the checks read', async () => {
    const body = Buffer.from(call(JSON.stringify({ message, tail: 'AB' })))
    body[body.lastIndexOf('AB')] = 0xff
    const parsed = await read(runtime, body)
    expect(requestLine(parsed)).toBe(JSON.stringify(parsed))
    expect(requestLine(parsed)).toContain('"tail":"\ufffdB"')
  })

  it('serialises again arguments written otherwise (spaces, a \\u escape, a number JSON.stringify writes differently)', async () => {
    for (const args of [
      `{"message": ${JSON.stringify(message)}}`,
      `{"message":"\\u00e9${message}"}`,
      `{"message":${JSON.stringify(message)},"n":1.0}`,
    ]) {
      const parsed = await read(runtime, call(args))
      expect(requestLine(parsed), args.slice(0, 30)).toBeUndefined()
      expect((parsed as JSONRPCMessage & { params: { arguments: unknown } }).params.arguments).toEqual(JSON.parse(args))
    }
  })
})

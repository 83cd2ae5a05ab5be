import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import { describe, expect, it } from 'vitest'
import { keepResponseBytes, keepResponseLine, markReusable, responseLine } from '../../src/protocol/result-lines.js'

/** A child's response line parsed as the child transport does, and kept. */
function childLine(line: string) {
  const message = JSON.parse(line) as { jsonrpc?: unknown; id?: unknown; result?: Record<string, unknown> }
  keepResponseLine(line, message)
  return message
}
const answer = (id: string | number, result: unknown) => ({ jsonrpc: '2.0', id, result }) as JSONRPCMessage

describe('relayed lines', () => {
  it('writes a TypeScript SDK response (id last) as the child wrote it, under the client’s id', () => {
    const line =
      '{"result":{"content":[{"type":"text","text":"h\\u00e9 \\"id\\":\\"myc-1\\""}],"n":12345678901234567890},"jsonrpc":"2.0","id":"myc-1"}'
    const { result } = childLine(line)
    const out = responseLine(answer(7, result)) as string
    expect(out).toBe(
      '{"result":{"content":[{"type":"text","text":"h\\u00e9 \\"id\\":\\"myc-1\\""}],"n":12345678901234567890},"jsonrpc":"2.0","id":7}',
    )
    // The same message as serializing it would give.
    expect(JSON.parse(out)).toEqual(JSON.parse(JSON.stringify(answer(7, result))))
    expect(JSON.parse(responseLine(answer('client-"x"', childLine(line).result)) as string).id).toBe('client-"x"')
  })

  it('writes a Python SDK response (jsonrpc, id, result) in place, but not when the line names another "id"', () => {
    const { result } = childLine('{"jsonrpc":"2.0","id":"myc-2","result":{"content":[]}}')
    expect(responseLine(answer('a', result))).toBe('{"jsonrpc":"2.0","id":"a","result":{"content":[]}}')
    const nested = childLine('{"jsonrpc":"2.0","id":"myc-3","result":{"structuredContent":{"id":"myc-3"}}}')
    expect(responseLine(answer('a', nested.result))).toBeUndefined()
  })

  it('keeps nothing it cannot rewrite safely: other members, other shapes, whitespace, errors, numeric ids', () => {
    const lines = [
      '{"result":{},"jsonrpc":"2.0","id":"myc-4","extra":1}',
      '{"result":{},"jsonrpc":"2.0","extra":1,"id":"myc-4"}',
      '{"result":{},"jsonrpc":"2.0","id":"myc-4"} ',
      '{"result":{},"jsonrpc":"2.0","id" : "myc-4"}',
      '{"result":{},"jsonrpc":"1.0","id":"myc-4"}',
      '{"result":[],"jsonrpc":"2.0","id":"myc-4"}',
      '{"result":{},"jsonrpc":"2.0","id":4}',
    ]
    for (const line of lines) {
      const message = childLine(line)
      if (typeof message.result === 'object' && message.result !== null)
        expect(responseLine(answer(1, message.result)), line).toBeUndefined()
    }
  })

  it('hands a child’s line out once, then lets go of it (the same result again is serialized)', () => {
    const { result } = childLine('{"result":{"n":1.50},"jsonrpc":"2.0","id":"myc-6"}')
    expect(responseLine(answer(1, result))).toBe('{"result":{"n":1.50},"jsonrpc":"2.0","id":1}')
    expect(responseLine(answer(2, result))).toBeUndefined()
    const { message } = childBytes('{"result":{"n":2.50},"jsonrpc":"2.0","id":"myc-7"}')
    expect(text(responseLine(answer(3, message.result!)))).toBe('{"result":{"n":2.50},"jsonrpc":"2.0","id":3}')
    expect(responseLine(answer(4, message.result!))).toBeUndefined()
  })

  it('serializes a result rebuilt on the way (nothing is written from a stale line)', () => {
    const { result } = childLine('{"result":{"content":[]},"jsonrpc":"2.0","id":"myc-5"}')
    expect(responseLine(answer(1, { ...result, task: { taskId: 't' } }))).toBeUndefined()
    expect(responseLine(answer(1, { content: [] }))).toBeUndefined()
    expect(responseLine({ jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } } as JSONRPCMessage)).toBeUndefined()
  })
})

/** A child's response line parsed as a worker parses a large one (protocol/line-parser.ts), and kept as its bytes. */
function childBytes(line: string) {
  const message = JSON.parse(line) as { jsonrpc?: unknown; id?: unknown; result?: Record<string, unknown> }
  const bytes = Buffer.from(line)
  keepResponseBytes(bytes, bytes.lastIndexOf('"id":'), message)
  return { message, bytes }
}
/** The text of what responseLine gives: a line, or the pieces of one. */
const text = (line: string | Buffer[] | undefined) =>
  line === undefined ? undefined : typeof line === 'string' ? line : Buffer.concat(line).toString()

describe('relayed lines kept as bytes', () => {
  it('are written as the child wrote them, under the client’s id, from the very bytes (no copy, no encoding)', () => {
    const line =
      '{"result":{"content":[{"type":"text","text":"hé \\"id\\":\\"myc-1\\""}]},"jsonrpc":"2.0","id":"myc-1"}'
    const { message, bytes } = childBytes(line)
    const pieces = responseLine(answer(7, message.result))
    expect(Array.isArray(pieces)).toBe(true)
    expect((pieces as Buffer[])[0]!.buffer).toBe(bytes.buffer)
    expect(text(pieces)).toBe(line.replace('"id":"myc-1"}', '"id":7}'))
    expect(JSON.parse(text(responseLine(answer('c-"x"', childBytes(line).message.result)))!)).toEqual({
      ...message,
      id: 'c-"x"',
    })
  })

  it('take a Python SDK response in place, but not when the line names another "id" (the last one would win)', () => {
    const { message } = childBytes('{"jsonrpc":"2.0","id":"myc-2","result":{"content":[]}}')
    expect(text(responseLine(answer('a', message.result)))).toBe('{"jsonrpc":"2.0","id":"a","result":{"content":[]}}')
    const nested = childBytes('{"jsonrpc":"2.0","id":"myc-3","result":{"structuredContent":{"id":"myc-3"}}}')
    expect(responseLine(answer('a', nested.message.result))).toBeUndefined()
    const twice = childBytes('{"jsonrpc":"2.0","id":"myc-4","result":{},"id":"myc-4" }')
    expect(responseLine(answer('a', twice.message.result))).toBeUndefined()
  })

  it('keep nothing they cannot rewrite safely, like lines kept as text', () => {
    for (const line of [
      '{"result":{},"jsonrpc":"2.0","id":"myc-5","extra":1}',
      '{"result":{},"jsonrpc":"2.0","id" : "myc-5"}',
      '{"result":{},"jsonrpc":"2.0","id":5}',
    ]) {
      const { message } = childBytes(line)
      expect(responseLine(answer(1, message.result!)), line).toBeUndefined()
    }
  })
})

describe('reusable results', () => {
  it('are serialized once, at the first send, and written under each message’s own id', () => {
    let serialized = 0
    const result = { tools: [{ name: 'a' }], toJSON: () => (serialized++, { tools: [{ name: 'a' }] }) }
    expect(responseLine(answer(1, result))).toBeUndefined()
    markReusable(result)
    expect(serialized).toBe(0)
    const first = responseLine(answer(1, result)) as string
    const second = responseLine(answer('two', result)) as string
    expect(serialized).toBe(1)
    expect(JSON.parse(first)).toEqual({ jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'a' }] } })
    expect(JSON.parse(second)).toEqual({ jsonrpc: '2.0', id: 'two', result: { tools: [{ name: 'a' }] } })
  })
})

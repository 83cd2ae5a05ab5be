import { describe, expect, it } from 'vitest'
import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import { isCanonical, keepArgumentsText, MIN_SPLICED_CHARS, requestLine } from '../../src/protocol/request-lines.js'

const pad = 'p'.repeat(MIN_SPLICED_CHARS)

/** A client's request line as it arrives, parsed; and the message the relay sends on for it (new id, the child's name). */
function relayed(line: string, bytes?: Buffer): { sent: JSONRPCMessage; params: Record<string, unknown> } {
  const request = JSON.parse(line) as { params: Record<string, unknown> }
  keepArgumentsText(line, request.params, bytes)
  const params = { ...request.params, name: 'child-tool' }
  return { sent: { jsonrpc: '2.0', id: 'myc-1', method: 'tools/call', params } as JSONRPCMessage, params }
}

/** What serializing the sent message writes, `arguments` last in its params. */
function serialized(sent: JSONRPCMessage): string {
  const { arguments: args, ...rest } = (sent as { params: Record<string, unknown> }).params
  return JSON.stringify({ ...sent, params: { ...rest, arguments: args } })
}

/** A random JSON value made of what JSON.stringify treats specially. */
function randomValue(next: () => number, depth = 0): unknown {
  const pick = next() % (depth > 3 ? 4 : 6)
  const strings = [
    'plain',
    'q"uote',
    'back\\slash',
    'line\nfeed\ttab\r\b\f',
    'ctl\u0001\u001f',
    'é😀\u2028',
    '\ud800lone',
    '',
  ]
  const numbers = [0, -1, 42, 3.25, -0.5, 1e21, 1e-7, 123456789012, -0]
  if (pick === 0) return strings[next() % strings.length]
  if (pick === 1) return numbers[next() % numbers.length]
  if (pick === 2) return [true, false, null][next() % 3]
  if (pick === 3) return strings[next() % strings.length]!.repeat(next() % 3)
  if (pick === 4) return Array.from({ length: next() % 4 }, () => randomValue(next, depth + 1))
  const keys = ['a', 'b"c', 'd\\e', '__proto__', '7', 'z', 'é']
  const object: Record<string, unknown> = {}
  for (let n = next() % 4; n > 0; n--)
    Object.defineProperty(object, keys[next() % keys.length]!, {
      value: randomValue(next, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  return object
}

/** The same run of pseudo-random numbers for the same seed. */
function numbers(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
}

describe('a large call sent on with its arguments as the client wrote them', () => {
  it('writes exactly what serializing the request writes, or leaves it to be serialized', () => {
    const next = numbers(11)
    let spliced = 0
    for (let n = 0; n < 2_000; n++) {
      const args = { value: randomValue(next), pad }
      const params = n % 2 ? { name: 'a__b', arguments: args } : { _meta: { x: 1 }, arguments: args, name: 'a__b' }
      const { sent } = relayed(JSON.stringify({ jsonrpc: '2.0', id: n, method: 'tools/call', params }))
      const line = requestLine(sent)
      if (line === undefined) continue
      spliced++
      expect(line).toBe(serialized(sent))
    }
    // Most arguments are written as JSON.stringify writes them: those are spliced.
    expect(spliced).toBeGreaterThan(1_000)
  })

  it("splices the arguments' own bytes where the line came as bytes (an HTTP body), text around them or not", () => {
    const next = numbers(5)
    let spliced = 0
    for (let n = 0; n < 500; n++) {
      const args = { value: randomValue(next), pad }
      // Characters of two, three and four bytes before and after the arguments: their bytes are found by the text's byte lengths.
      const line = JSON.stringify({
        jsonrpc: '2.0',
        method: 'tools/call',
        params: { name: 'é__😀', arguments: args, _meta: { z: '€' } },
        id: `é${n}`,
      })
      const bytes = Buffer.from(line)
      const { sent } = relayed(line, bytes)
      const pieces = requestLine(sent)
      if (pieces === undefined) continue
      spliced++
      expect(Array.isArray(pieces)).toBe(true)
      const joined = Buffer.concat(pieces as Buffer[])
      expect(joined.toString()).toBe(serialized(sent))
      // The arguments are the body's own bytes, not a copy.
      expect((pieces as Buffer[])[1]!.buffer).toBe(bytes.buffer)
    }
    expect(spliced).toBeGreaterThan(250)
  })

  it('keeps the text, not the bytes, of a body that is not valid UTF-8 (the text holds what was read)', () => {
    const bytes = Buffer.from(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'a__b', arguments: { pad, m: 'AB' } },
      }),
    )
    bytes[bytes.indexOf('AB')] = 0xff
    const line = bytes.toString('utf8')
    const { sent } = relayed(line, bytes)
    expect(requestLine(sent)).toBe(serialized(sent))
    // The child reads the replacement character the checks read.
    expect(requestLine(sent)).toContain('"m":"\ufffdB"')
  })

  it('splices whatever surrounds the arguments in the line (spaces, other members, their order)', () => {
    const line = ` { "params" : { "_meta" : { "k" : [ 1 , 2 ] } , "arguments" : {"m":"${pad}","n":[1,2.5,null]} , "name" : "a__b" } , "id" : 3 , "method" : "tools/call" , "jsonrpc" : "2.0" } `
    const { sent } = relayed(line)
    expect(requestLine(sent)).toBe(serialized(sent))
  })

  it('serializes again arguments whose text is not what JSON.stringify writes', () => {
    const variants = [
      `{"m":"${pad}", "n":1}`,
      `{"m":"${pad}","n":"\\u0041"}`,
      `{"m":"${pad}","n":"a\\/b"}`,
      `{"m":"${pad}","n":1,"n":2}`,
      `{"m":"${pad}","n":{"k":1,"k":1}}`,
      `{"m":"${pad}","7":1}`,
      `{"m":"${pad}","n":1.0}`,
      `{"m":"${pad}","n":-0}`,
      `{"m":"${pad}","n":1e5}`,
      `{"m":"${pad}","n":[1, 2]}`,
    ]
    for (const args of variants) {
      const { sent } = relayed(
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__b","arguments":${args}}}`,
      )
      expect(requestLine(sent), args).toBeUndefined()
    }
  })

  it('serializes again a request whose params or arguments the line names twice, or with an escape', () => {
    const args = `{"m":"${pad}"}`
    const lines = [
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"params":{"name":"a__b","arguments":${args}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__b","arguments":{"m":1},"arguments":${args}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","p\\u0061rams":{"name":"x"},"params":{"name":"a__b","arguments":${args}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__b","\\u0061rguments":{"m":1},"arguments":${args}}}`,
    ]
    for (const line of lines) expect(requestLine(relayed(line).sent), line).toBeUndefined()
  })

  it('serializes again arguments made of many small values (reading them would cost more)', () => {
    const numbers = JSON.stringify(Array.from({ length: 5_000 }, (_, i) => i))
    const { sent } = relayed(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__b","arguments":{"n":${numbers}}}}`,
    )
    expect(requestLine(sent)).toBeUndefined()
    const one = relayed(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__b","arguments":{"n":"${numbers}"}}}`,
    )
    expect(requestLine(one.sent)).toBe(serialized(one.sent))
  })

  it('serializes again arguments rebuilt on the way, and small calls', () => {
    const line = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__b","arguments":{"m":"${pad}"}}}`
    const { sent, params } = relayed(line)
    expect(requestLine(sent)).toBeDefined()
    const rebuilt = { ...sent, params: { ...params, arguments: { ...(params.arguments as object) } } } as JSONRPCMessage
    expect(requestLine(rebuilt)).toBeUndefined()
    const small = relayed(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__b","arguments":{"m":"x"}}}',
    )
    expect(requestLine(small.sent)).toBeUndefined()
  })

  it('takes as canonical exactly the text JSON.stringify writes', () => {
    expect(isCanonical(JSON.stringify({ a: [1, -2.5, 'x\n"\\', null, true, { b: {} }], c: 1e-7 }))).toBe(true)
    for (const text of ['{"a":1 }', '{"a":"\\u00e9"}', '{"1":1}', '{"a":1,"a":1}', '[1.50]', '{"a":1E3}'])
      expect(isCanonical(text), text).toBe(false)
  })
})

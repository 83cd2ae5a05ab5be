import { describe, expect, it } from 'vitest'
import { checkInbound, nestsDeeperThan } from '../../src/protocol/inbound.js'
import { leadingIdOfBytes, TopLevelIdScanner, topLevelId, topLevelIdOfBytes } from '../../src/protocol/top-level-id.js'
import { REQUEST_PARAMS } from '../../src/protocol/params-check.js'
import { SERVED_METHODS } from '../helpers/hostile-messages.js'

type Expect =
  | { pass: 'request' | 'notification' | 'response' }
  | { code: number; id: string | number | null; field?: RegExp }
  | 'dropped'

const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } }
const rq = (method: string, params?: unknown, id: unknown = 7) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) })

// [what is sent, what JSON-RPC 2.0 and MCP say it gets]
const table: Array<[string, string, Expect]> = [
  // not a message at all
  ['null', 'null', { code: -32600, id: null }],
  ['number', '42', { code: -32600, id: null }],
  ['huge number', '1e400', { code: -32600, id: null }],
  ['string', '"ping"', { code: -32600, id: null }],
  ['true', 'true', { code: -32600, id: null }],
  ['empty batch', '[]', { code: -32600, id: null }],
  ['batch of requests', `[${rq('ping')}]`, { code: -32600, id: null }],
  ['empty object', '{}', { code: -32600, id: null }],
  // envelope
  ['no jsonrpc', '{"id":1,"method":"ping"}', { code: -32600, id: 1 }],
  ['jsonrpc 1.0', '{"jsonrpc":"1.0","id":"x","method":"ping"}', { code: -32600, id: 'x' }],
  ['jsonrpc as number', '{"jsonrpc":2,"id":"x","method":"ping"}', { code: -32600, id: 'x' }],
  ['method a number', '{"jsonrpc":"2.0","id":3,"method":5}', { code: -32600, id: 3 }],
  ['method empty', '{"jsonrpc":"2.0","id":3,"method":""}', { code: -32600, id: 3 }],
  ['method null', '{"jsonrpc":"2.0","id":3,"method":null}', { code: -32600, id: 3 }],
  ['id null', '{"jsonrpc":"2.0","id":null,"method":"ping"}', { code: -32600, id: null }],
  ['id object', '{"jsonrpc":"2.0","id":{},"method":"ping"}', { code: -32600, id: null }],
  ['id array', '{"jsonrpc":"2.0","id":[1],"method":"ping"}', { code: -32600, id: null }],
  ['id boolean', '{"jsonrpc":"2.0","id":true,"method":"ping"}', { code: -32600, id: null }],
  ['id fraction', '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', { code: -32600, id: null }],
  [
    'id beyond safe integers',
    '{"jsonrpc":"2.0","id":123456789012345678901,"method":"ping"}',
    { code: -32600, id: null },
  ],
  ['id string', rq('ping', undefined, 'abc'), { pass: 'request' }],
  ['id empty string', rq('ping', undefined, ''), { pass: 'request' }],
  ['id negative integer', rq('ping', undefined, -4), { pass: 'request' }],
  ['id zero', rq('ping', undefined, 0), { pass: 'request' }],
  ['unknown top-level key', '{"jsonrpc":"2.0","id":1,"method":"ping","extra":true}', { pass: 'request' }],
  ['unknown method', rq('no/such/method'), { pass: 'request' }],
  ['__proto__ method', rq('__proto__'), { pass: 'request' }],
  // params of the methods myc serves
  [
    'params a string',
    rq('prompts/get', 'x'),
    { code: -32602, id: 7, field: /params must be an object \(got string\)/ },
  ],
  ['params an array', rq('tools/list', [1]), { code: -32602, id: 7, field: /params must be an object \(got array\)/ }],
  ['params null', rq('ping', null), { code: -32602, id: 7, field: /params must be an object \(got null\)/ }],
  ['_meta a number', rq('ping', { _meta: 5 }), { code: -32602, id: 7, field: /params\._meta must be an object/ }],
  [
    'progressToken a float',
    rq('tools/call', { name: 'a', _meta: { progressToken: 1.5 } }),
    { code: -32602, id: 7, field: /params\._meta\.progressToken/ },
  ],
  [
    'initialize without params',
    rq('initialize'),
    { code: -32602, id: 7, field: /params\.protocolVersion is required/ },
  ],
  [
    'initialize bad clientInfo',
    rq('initialize', { ...init, clientInfo: { name: 1, version: '1' } }),
    { code: -32602, id: 7, field: /params\.clientInfo\.name must be a string/ },
  ],
  [
    'initialize capabilities an array',
    rq('initialize', { ...init, capabilities: [] }),
    { code: -32602, id: 7, field: /params\.capabilities must be an object/ },
  ],
  ['initialize ok', rq('initialize', init), { pass: 'request' }],
  [
    'tools/call name a number',
    rq('tools/call', { name: 5 }),
    { code: -32602, id: 7, field: /params\.name must be a string \(got number\)/ },
  ],
  ['tools/call without name', rq('tools/call', {}), { code: -32602, id: 7, field: /params\.name is required/ }],
  [
    'tools/call arguments an array',
    rq('tools/call', { name: 'a', arguments: [] }),
    { code: -32602, id: 7, field: /params\.arguments must be an object/ },
  ],
  [
    'tools/call arguments null',
    rq('tools/call', { name: 'a', arguments: null }),
    { code: -32602, id: 7, field: /params\.arguments must be an object \(got null\)/ },
  ],
  [
    'tools/call task ttl a string',
    rq('tools/call', { name: 'a', task: { ttl: 'x' } }),
    { code: -32602, id: 7, field: /params\.task\.ttl must be a number/ },
  ],
  ['tools/call ok', rq('tools/call', { name: 'a', arguments: { x: [1, { y: null }] } }), { pass: 'request' }],
  [
    'tools/list cursor a number',
    rq('tools/list', { cursor: 5 }),
    { code: -32602, id: 7, field: /params\.cursor must be a string/ },
  ],
  [
    'prompts/get argument not a string',
    rq('prompts/get', { name: 'p', arguments: { a: 1 } }),
    { code: -32602, id: 7, field: /params\.arguments\["a"\] must be a string/ },
  ],
  ['resources/read without uri', rq('resources/read', {}), { code: -32602, id: 7, field: /params\.uri is required/ }],
  [
    'resources/subscribe uri a number',
    rq('resources/subscribe', { uri: 1 }),
    { code: -32602, id: 7, field: /params\.uri must be a string/ },
  ],
  [
    'completion ref unknown type',
    rq('completion/complete', { ref: { type: 'ref/x' }, argument: { name: 'a', value: 'b' } }),
    { code: -32602, id: 7, field: /params\.ref\.type must be "ref\/prompt" or "ref\/resource"/ },
  ],
  [
    'completion without argument',
    rq('completion/complete', { ref: { type: 'ref/prompt', name: 'p' } }),
    { code: -32602, id: 7, field: /params\.argument is required/ },
  ],
  [
    'completion ok',
    rq('completion/complete', { ref: { type: 'ref/resource', uri: 'x://y' }, argument: { name: 'a', value: 'b' } }),
    { pass: 'request' },
  ],
  [
    'setLevel unknown level',
    rq('logging/setLevel', { level: 'loud' }),
    { code: -32602, id: 7, field: /params\.level must be one of debug, info/ },
  ],
  [
    'tasks/get taskId a number',
    rq('tasks/get', { taskId: 3 }),
    { code: -32602, id: 7, field: /params\.taskId must be a string/ },
  ],
  ['skills/get without uri', rq('skills/get', {}), { code: -32602, id: 7, field: /params\.uri is required/ }],
  [
    'directory read cursor an object',
    rq('resources/directory/read', { uri: 'skill://x/', cursor: {} }),
    { code: -32602, id: 7, field: /params\.cursor must be a string/ },
  ],
  // notifications are never answered
  ['notification ok', '{"jsonrpc":"2.0","method":"notifications/initialized"}', { pass: 'notification' }],
  ['notification params a string', '{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}', 'dropped'],
  [
    'cancelled with an object requestId',
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}',
    'dropped',
  ],
  ['notification without jsonrpc', '{"method":"notifications/initialized"}', { code: -32600, id: null }],
  // responses (to myc's requests: elicitation, sampling, roots)
  ['result response', '{"jsonrpc":"2.0","id":0,"result":{}}', { pass: 'response' }],
  ['error response', '{"jsonrpc":"2.0","id":0,"error":{"code":-1,"message":"no"}}', { pass: 'response' }],
  [
    'result and error',
    '{"jsonrpc":"2.0","id":0,"result":{},"error":{"code":1,"message":"x"}}',
    { code: -32600, id: null },
  ],
  ['result a string', '{"jsonrpc":"2.0","id":0,"result":"x"}', { code: -32600, id: null }],
  ['error without code', '{"jsonrpc":"2.0","id":0,"error":{"message":"x"}}', { code: -32600, id: null }],
  ['neither method nor result', '{"jsonrpc":"2.0","id":9}', { code: -32600, id: 9 }],
]

describe('the answer owed to each incoming message', () => {
  it.each(table)('%s', (_name, line, expected) => {
    const inbound = checkInbound(JSON.parse(line))
    if (expected === 'dropped') {
      expect(inbound.kind).toBe('invalid')
      expect(inbound.kind === 'invalid' && inbound.reply).toBeUndefined()
    } else if ('pass' in expected) {
      expect(inbound.kind, JSON.stringify(inbound)).toBe(expected.pass)
    } else {
      expect(inbound.kind).toBe('invalid')
      if (inbound.kind !== 'invalid') return
      expect(inbound.reply).toMatchObject({ jsonrpc: '2.0', id: expected.id, error: { code: expected.code } })
      if (expected.field) expect(inbound.reply!.error.message).toMatch(expected.field)
    }
  })

  it('passes messages on rebuilt from their known fields only', () => {
    const inbound = checkInbound(
      JSON.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"extra":{"x":1}}'),
    )
    expect(inbound).toEqual({
      kind: 'request',
      id: 1,
      method: 'tools/call',
      message: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a' } },
    })
  })

  it('checks the params of every method myc serves', () => {
    // A method added to the server without a check here would reach the SDK unchecked.
    expect([...REQUEST_PARAMS.keys()].sort()).toEqual([...SERVED_METHODS].sort())
    for (const method of SERVED_METHODS) {
      const inbound = checkInbound({ jsonrpc: '2.0', id: 1, method, params: 'x' })
      expect(inbound.kind === 'invalid' && inbound.reply?.error.code, method).toBe(-32602)
    }
  })

  it('reads the top-level id of a message wherever it sits, whatever comes before it', () => {
    expect(topLevelId('{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"x"')).toBe('big-1')
    expect(topLevelId('{"jsonrpc":"2.0","id":42,"method":"tools/call"}')).toBe(42)
    expect(topLevelId('{"jsonrpc":"2.0","method":"tools/call","params":{"id":5')).toBeNull()
    expect(topLevelId('{"jsonrpc":"2.0","id":{"x":1}}')).toBeNull()
    expect(topLevelId('not json')).toBeNull()
    // After a deep or large value, and with escapes and look-alike keys on the way.
    const deep = `${'['.repeat(500)}${']'.repeat(500)}`
    expect(topLevelId(`{"jsonrpc":"2.0","method":"x","params":{"a":${deep},"id":"inner"},"id":"trailing-1"}`)).toBe(
      'trailing-1',
    )
    expect(topLevelId(`{"params":{"s":"\\"}\\"id\\":7"},"i\\u0064":"escaped-key","x":"y"}`)).toBe('escaped-key')
    expect(topLevelId('{"id":1,"id":"last"}')).toBe('last')
    for (const bad of ['{"id":1.5}', '{"id":true}', '{"id":null}', '{"id":12345678901234567890}', '["id",1]'])
      expect(topLevelId(bad), bad).toBeNull()
    expect(topLevelId('{"id":-3}')).toBe(-3)
  })

  it('finds the same id in UTF-8 bytes as in text, whatever the characters, without decoding the rest', () => {
    const deep = `${'['.repeat(500)}${']'.repeat(500)}`
    const cases = [
      '{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"x"',
      '{"jsonrpc":"2.0","id":42,"method":"tools/call"}',
      '{"jsonrpc":"2.0","method":"tools/call","params":{"id":5',
      '{"jsonrpc":"2.0","id":{"x":1}}',
      'not json',
      `{"jsonrpc":"2.0","method":"x","params":{"a":${deep},"id":"inner"},"id":"trailing-1"}`,
      `{"params":{"s":"\\"}\\"id\\":7"},"i\\u0064":"escaped-key","x":"y"}`,
      '{"id":1,"id":"last"}',
      '{"id":1.5}',
      '{"id":true}',
      '{"id":null}',
      '{"id":12345678901234567890}',
      '["id",1]',
      '{"id":-3}',
      '  {"id" : "spaced" }',
      '{"params":{"s":"ends in a backslash \\\\"},"id":"after-backslashes"}',
      '{"id":"é–😀","params":{"t":"ü\\"}"}}',
      '{"id":"Ã©"}',
      `{"id":"${'k'.repeat(1025)}"}`,
    ]
    for (const text of cases) expect(topLevelIdOfBytes(Buffer.from(text)), text).toEqual(topLevelId(text))
    expect(topLevelIdOfBytes(Buffer.from('{"id":"é"}'))).toBe('é')
    expect(topLevelIdOfBytes(Buffer.from('{"id":"é"}'))).not.toBe(topLevelIdOfBytes(Buffer.from('{"id":"Ã©"}')))
    const big = Buffer.from(JSON.stringify({ params: { blob: `"${'x'.repeat(4_000_000)}\\` }, id: 'after-4-MB' }))
    expect(topLevelIdOfBytes(big)).toBe('after-4-MB')
  })

  it("finds a leading id in a body's first bytes only when its value is whole there", () => {
    const head = (text: string) => Buffer.from(text)
    expect(leadingIdOfBytes(head('{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"a'))).toBe(77)
    expect(leadingIdOfBytes(head('{ "id" : "k\\"7", "params": {"id": 1'))).toBe('k"7')
    // Cut inside the id: 7 may be 77, "ab may be "abc".
    expect(leadingIdOfBytes(head('{"jsonrpc":"2.0","id":7'))).toBeUndefined()
    expect(leadingIdOfBytes(head('{"jsonrpc":"2.0","id":"ab'))).toBeUndefined()
    // No id yet (it may come after the large value), one only nested, or a value that is no id.
    expect(leadingIdOfBytes(head('{"jsonrpc":"2.0","params":{"blob":"xxxx'))).toBeUndefined()
    expect(leadingIdOfBytes(head('{"params":{"id":5},"method":"x"'))).toBeUndefined()
    expect(leadingIdOfBytes(head('{"id":null,"method":"x"'))).toBeUndefined()
    expect(leadingIdOfBytes(head('{"id":1.5,"method":"x"'))).toBeUndefined()
    expect(leadingIdOfBytes(head('[{"id":1},'))).toBeUndefined()
  })

  it('finds the id across pieces fed one at a time, keeping none of a huge value', () => {
    const scanner = new TopLevelIdScanner()
    scanner.feed('{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"blob":"')
    for (let i = 0; i < 100; i++) scanner.feed('x'.repeat(10_000))
    scanner.feed('"}},"id":"after-')
    scanner.feed('blob"}')
    expect(scanner.id()).toBe('after-blob')
  })
})

describe('the nesting check before parsing', () => {
  /** The check as a walk of every character (how it was written first): the fast one must agree with it. */
  const walked = (text: string, limit: number) => {
    let depth = 0
    let inString = false
    for (let i = 0; i < text.length; i++) {
      const c = text[i]
      if (inString) {
        if (c === '\\') i++
        else if (c === '"') inString = false
      } else if (c === '"') inString = true
      else if (c === '{' || c === '[') {
        if (++depth > limit) return true
      } else if (c === '}' || c === ']') depth--
    }
    return false
  }

  it('counts no bracket inside a string, however its quotes and backslashes are escaped', () => {
    const deep = (n: number, inner = '0') => '['.repeat(n) + inner + ']'.repeat(n)
    const cases = [
      deep(3),
      deep(4),
      `{"a":"[[[[[["}`,
      `{"a":"\\"[[[[[["}`,
      `{"a":"\\\\"}` + '[[[[[[',
      `{"a":"\\\\\\"[[[[[["}`,
      `{"a":"\\\\\\\\"` + ',"b":[[[[[[0]]]]]]}',
      `{"a":"x\\"` + '[[[[[[',
      `"unterminated [[[[[[`,
      deep(2, `"]]]]]]]"`) + deep(5),
      `{"a":"é😀\\u0022[[[[[["}`,
    ]
    for (const text of cases) expect(nestsDeeperThan(text, 4), text).toBe(walked(text, 4))
    expect(cases.filter((text) => nestsDeeperThan(text, 4)).length).toBeGreaterThan(2)
  })

  it('agrees with the walk on random text made of the characters that matter', () => {
    const alphabet = ['"', '\\', '[', ']', '{', '}', 'a', ',']
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
    for (let n = 0; n < 5_000; n++) {
      const text = Array.from({ length: 5 + (next() % 40) }, () => alphabet[next() % alphabet.length]).join('')
      expect(nestsDeeperThan(text, 3), text).toBe(walked(text, 3))
    }
  })
})

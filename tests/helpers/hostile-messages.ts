/**
 * A generated barrage of malformed and hostile JSON-RPC lines, each with the
 * answer JSON-RPC 2.0 owes it: an error under its own id, an error under a
 * null id (when no id can be read), or nothing (notifications, responses).
 * Deterministic: the same seed gives the same lines.
 */

type Owed = { id: string | number; code?: number } | { nullId: true } | { none: true }

export interface HostileMessage {
  /** The raw text of the line, without its newline (may hold bytes that are not UTF-8). */
  line: string | Buffer
  owed: Owed
  what: string
}

/** A small deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Every request method myc serves (the inbound check has params rules for each). */
export const SERVED_METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
  'tasks/get',
  'tasks/result',
  'tasks/cancel',
  'tasks/list',
  'skills/list',
  'skills/get',
  'resources/directory/read',
]
const HOSTILE_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'toString',
  'valueOf',
  '__defineGetter__',
  '\u0000',
  '\ud800',
  '\udfff\ud800',
  'a'.repeat(10_000),
  '../../etc/passwd',
  'echo__echo\u0000',
  '${HOME}',
  '%s%s%s',
  '\u202e',
  '💥'.repeat(100),
]
const BAD_IDS: unknown[] = [
  null,
  {},
  [],
  [1],
  true,
  false,
  1.5,
  -0.5,
  1e400,
  123456789012345678901234567890,
  { __proto__: 1 },
]
const BAD_PARAMS: unknown[] = ['x', 5, true, [], [1, 2], null]

/** At least `count` hostile lines. `nextId` hands out ids that nothing else uses. */
export function hostileMessages(
  count: number,
  seed: number,
  nextId: () => string,
  limits: { maxMessageBytes: number },
): HostileMessage[] {
  const random = prng(seed)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
  const out: HostileMessage[] = []
  const rq = (method: unknown, params: unknown, id: unknown) =>
    JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) })

  const makers: Array<() => HostileMessage> = [
    // Not JSON at all.
    () => ({
      line: pick([
        '{',
        '}',
        '{"jsonrpc":"2.0",',
        'nul',
        'undefined',
        "{'a':1}",
        '{"a":1,}',
        '[1,]',
        'NaN',
        '\u0001\u0002\u0003',
        '{"jsonrpc":"2.0","id":"x","method":"ping"}}',
        '\u0000{}',
        '{"a":"\u0007"}',
      ]),
      owed: { nullId: true },
      what: 'not JSON',
    }),
    () => ({
      line: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0xfd, 0x22, 0x3a, 0x31]),
      owed: { nullId: true },
      what: 'invalid UTF-8, not JSON',
    }),
    // (Not \n or \r: those end the line, making two messages of it.)
    () => ({
      line: `"${String.fromCharCode(...Array.from({ length: 20 }, () => pick([0, 1, 7, 8, 9, 11, 12, 27, 31])))}"`,
      owed: { nullId: true },
      what: 'raw control characters in a string',
    }),
    // JSON that is not a message.
    () => ({
      line: pick([
        'null',
        '42',
        '-0',
        '1e400',
        '123456789012345678901234567890',
        '"ping"',
        'true',
        'false',
        '[]',
        '[[]]',
        '[null]',
        '{}',
        '{"__proto__":{"jsonrpc":"2.0"}}',
      ]),
      owed: { nullId: true },
      what: 'not a message',
    }),
    () => ({
      line: `[${rq('ping', undefined, nextId())},${rq('ping', undefined, nextId())}]`,
      owed: { nullId: true },
      what: 'a batch',
    }),
    // Envelopes that are wrong, with an id that can be read.
    () => {
      const id = nextId()
      const line = pick([
        JSON.stringify({ id, method: 'ping' }),
        JSON.stringify({ jsonrpc: '1.0', id, method: 'ping' }),
        JSON.stringify({ jsonrpc: 2, id, method: 'ping' }),
        JSON.stringify({ jsonrpc: '2.0', id, method: pick([5, null, {}, [], true, '']) }),
        JSON.stringify({ jsonrpc: '2.0', id }),
      ])
      return { line, owed: { id, code: -32600 }, what: 'bad envelope' }
    },
    // Ids of every wrong type.
    () => ({
      line: `{"jsonrpc":"2.0","id":${pick(BAD_IDS.map((i) => (i === 1e400 ? '1e400' : typeof i === 'number' && !Number.isSafeInteger(i) && Math.abs(i) > 1e20 ? '123456789012345678901234567890' : JSON.stringify(i))))},"method":"${pick(SERVED_METHODS)}"}`,
      owed: { nullId: true },
      what: 'bad id',
    }),
    // Params that do not fit the method.
    () => {
      const id = nextId()
      return {
        line: rq(pick(SERVED_METHODS), pick(BAD_PARAMS), id),
        owed: { id, code: -32602 },
        what: 'params not an object',
      }
    },
    () => {
      const id = nextId()
      const [method, params] = pick<[string, unknown]>([
        ['tools/call', { name: pick([5, null, {}, [], true]) }],
        ['tools/call', { name: 'echo__echo', arguments: pick([[], 'x', 5, null]) }],
        ['tools/call', {}],
        ['prompts/get', { name: 'p', arguments: { a: pick([1, null, {}, []]) } }],
        ['resources/read', { uri: pick([1, null, {}, []]) }],
        ['completion/complete', { ref: { type: pick(['x', 5, null]) }, argument: { name: 'a', value: 'b' } }],
        ['logging/setLevel', { level: pick(['loud', 5, null, '__proto__']) }],
        ['initialize', { protocolVersion: 5, capabilities: {}, clientInfo: { name: 'x', version: '1' } }],
        ['tools/list', { cursor: pick([5, {}, [], true]) }],
        ['ping', { _meta: pick([5, 'x', [], null]) }],
        ['tools/call', { name: 'echo__echo', _meta: { progressToken: pick([1.5, {}, [], null, true]) } }],
        ['tasks/get', { taskId: pick([5, null, {}]) }],
      ])
      return { line: rq(method, params, id), owed: { id, code: -32602 }, what: `bad params for ${method}` }
    },
    // Hostile but well-formed requests: answered, under their id, like anything unknown.
    () => {
      const id = nextId()
      const name = pick(HOSTILE_NAMES)
      const [method, params] = pick<[string, unknown]>([
        [
          'tools/call',
          { name, arguments: { __proto__: { polluted: true }, constructor: { prototype: { polluted: true } } } },
        ],
        ['prompts/get', { name }],
        ['resources/read', { uri: name }],
        ['resources/subscribe', { uri: name }],
        ['completion/complete', { ref: { type: 'ref/prompt', name }, argument: { name, value: name } }],
        ['tasks/result', { taskId: name }],
        ['skills/get', { uri: `skill://${name}/SKILL.md` }],
      ])
      return { line: rq(method, params, id), owed: { id }, what: `hostile name in ${method}` }
    },
    () => {
      const id = nextId()
      return {
        line: rq(
          pick([
            '__proto__',
            'constructor',
            'toString',
            'no/such/method',
            'notifications/initialized',
            'tools/call/',
            'TOOLS/CALL',
            'sampling/createMessage',
            'roots/list',
            'elicitation/create',
          ]),
          undefined,
          id,
        ),
        owed: { id },
        what: 'method myc does not serve',
      }
    },
    // Huge numbers and deep nesting inside otherwise valid requests.
    () => {
      const id = nextId()
      return {
        line: `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"echo__echo","arguments":{"message":"n","n":1e400,"m":-1e400,"big":123456789012345678901234567890}}}`,
        owed: { id },
        what: 'huge numbers in arguments',
      }
    },
    () => {
      const id = nextId()
      const depth = 200 + Math.floor(random() * 5_000)
      return {
        line: `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"echo__echo","arguments":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}}}`,
        owed: { id, code: -32600 },
        what: 'deep nesting',
      }
    },
    // The same with the id last: key order must not decide whether the request gets its own id back.
    () => {
      const id = nextId()
      const depth = 200 + Math.floor(random() * 5_000)
      return {
        line: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo__echo","arguments":{"x":${'['.repeat(depth)}${']'.repeat(depth)},"id":"not-this"}},"id":"${id}"}`,
        owed: { id, code: -32600 },
        what: 'deep nesting, id last',
      }
    },
    () => ({ line: '['.repeat(100_000) + ']'.repeat(100_000), owed: { nullId: true }, what: 'deep nesting, no id' }),
    // Over the size cap.
    () => {
      const id = nextId()
      return {
        line: `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"echo__echo","arguments":{"message":"${'x'.repeat(limits.maxMessageBytes + 10)}"}}}`,
        owed: { id, code: -32600 },
        what: 'over the size cap',
      }
    },
    () => {
      const id = nextId()
      return {
        line: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo__echo","arguments":{"message":"${'x'.repeat(limits.maxMessageBytes + 10)}\\"id\\":1"}},"id":"${id}"}`,
        owed: { id, code: -32600 },
        what: 'over the size cap, id last',
      }
    },
    // Notifications, good or bad, are never answered.
    () => ({
      line: pick([
        '{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}',
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}',
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never-sent"}}',
        '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":"a lot"}}',
        '{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":[]}',
        '{"jsonrpc":"2.0","method":"no/such/notification"}',
        '{"jsonrpc":"2.0","method":"__proto__","params":{"__proto__":{}}}',
      ]),
      owed: { none: true },
      what: 'notification',
    }),
    // Responses to requests myc never sent: nothing to answer.
    () => ({
      line: pick([
        '{"jsonrpc":"2.0","id":999999,"result":{}}',
        '{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"}}',
        '{"jsonrpc":"2.0","id":-1,"result":{"_meta":{"__proto__":{}}}}',
      ]),
      owed: { none: true },
      what: 'stray response',
    }),
    () => ({
      line: pick([
        '{"jsonrpc":"2.0","id":1,"result":"x"}',
        '{"jsonrpc":"2.0","id":1,"error":"x"}',
        '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}',
      ]),
      owed: { nullId: true },
      what: 'malformed response',
    }),
  ]
  while (out.length < count) out.push(pick(makers)())
  return out
}

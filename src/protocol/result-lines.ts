import type { JSONRPCMessage } from '@modelcontextprotocol/client'

/**
 * Results whose text is known, so that they go out to a client (over
 * stdio, or in an SSE event: http/spliced-answers.ts) without being
 * serialized (again). Both kinds are keyed by the result
 * object: a result rebuilt on the way (a spread, a task mapped across
 * eras) is serialized as usual, and nothing mutates such a result in place.
 *
 * A child's response line is kept beside the result it parsed to and
 * written with the client's id in place of the child's. The line is always
 * parsed (that is the check that it is JSON, and how its id is found); only
 * the second half of the round trip is saved, which for a large result is
 * most of what relaying it costs. The id must be where it can be replaced
 * without parsing again: the last member (as the TypeScript SDK writes
 * responses) or the second, after `"jsonrpc":"2.0"` (as the Python SDK
 * does) when the line names no other `"id"`.
 *
 * A result myc serves again and again unchanged (a list page, see
 * pagination.ts) is serialized once, at its first send, and its text reused.
 */
const lines = new WeakMap<object, { head: string; tail: string } | KeptBytes>()

/** A child's response line kept as its bytes (a long one: children/stdio-transport.ts, protocol/line-parser.ts), and where the id goes. */
interface KeptBytes {
  bytes: Buffer
  /** The bytes before the new `"id":…` member, */
  headEnd: number
  /** and where the bytes after it start. */
  tailStart: number
}

/** The start of a response as the Python SDK writes it, before its id. */
const PYTHON_HEAD = '{"jsonrpc":"2.0",'

/** The `"id":…` member of a response whose line may be kept: a string id, and the three members a response is rebuilt from (a client's SDK may refuse others). */
function idMember(message: { jsonrpc?: unknown; id?: unknown; result?: unknown }): string | undefined {
  const { id, result } = message
  if (
    typeof id !== 'string' ||
    message.jsonrpc !== '2.0' ||
    typeof result !== 'object' ||
    result === null ||
    Array.isArray(result)
  )
    return undefined
  let members = 0
  for (const _ in message) if (++members > 3) return undefined
  return `"id":${JSON.stringify(id)}`
}

/** Remembers `line`, a response the child wrote for `message` (already parsed from it), when its id can be replaced in place. */
export function keepResponseLine(line: string, message: { jsonrpc?: unknown; id?: unknown; result?: unknown }): void {
  const member = idMember(message)
  if (member === undefined) return
  const result = message.result as object
  if (line.endsWith(`,${member}}`)) {
    lines.set(result, { head: line.slice(0, line.length - member.length - 1), tail: '}' })
    return
  }
  const opening = `${PYTHON_HEAD}${member},`
  if (line.startsWith(opening) && line.indexOf('"id":', opening.length) === -1)
    lines.set(result, { head: PYTHON_HEAD, tail: line.slice(opening.length - 1) })
}

/**
 * The same for a line kept as bytes (valid UTF-8, without its newline):
 * `lastIdAt` is where the last `"id":` in them starts (found where the line
 * was parsed). Written out, the bytes are not copied.
 */
export function keepResponseBytes(
  bytes: Buffer,
  lastIdAt: number,
  message: { jsonrpc?: unknown; id?: unknown; result?: unknown },
): void {
  const member = idMember(message)
  if (member === undefined) return
  const result = message.result as object
  const tail = Buffer.from(`,${member}}`)
  if (bytes.length > tail.length && bytes.subarray(bytes.length - tail.length).equals(tail)) {
    lines.set(result, { bytes, headEnd: bytes.length - tail.length + 1, tailStart: bytes.length - 1 })
    return
  }
  const opening = Buffer.from(`${PYTHON_HEAD}${member},`)
  if (bytes.length > opening.length && bytes.subarray(0, opening.length).equals(opening) && lastIdAt < opening.length)
    lines.set(result, { bytes, headEnd: PYTHON_HEAD.length, tailStart: opening.length - 1 })
}

/**
 * Lets go of the child's line kept beside `message`'s result: for an answer
 * that is kept a while once written (for a resumed stream, which
 * serializes it again), the line would double what it holds.
 */
export function forgetResponseLine(message: JSONRPCMessage): void {
  const result = (message as { result?: unknown }).result
  if (typeof result === 'object' && result !== null) lines.delete(result)
}

/** Results served again unchanged, and their text once it was made (at their first send). */
const reusable = new WeakMap<object, string | undefined>()

/** Marks a result that will be served again exactly as it is (nothing may change it afterwards). */
export function markReusable(result: object): void {
  if (!reusable.has(result)) reusable.set(result, undefined)
}

/**
 * The line for a response `{ result, jsonrpc, id }` whose result's text is
 * known, with this message's id: text, or the pieces of a line kept as
 * bytes; undefined for anything else. A child's line is handed out once and
 * then forgotten: the table of kept lines holds only answers on their way
 * (an entry left to the collector stays until the result is found dead, and
 * the table grew to hundreds of kilobytes that every scavenge walked).
 */
export function responseLine(message: JSONRPCMessage): string | Buffer[] | undefined {
  const result = (message as { result?: unknown }).result
  if (typeof result !== 'object' || result === null) return undefined
  const id = JSON.stringify((message as { id: unknown }).id)
  const kept = lines.get(result)
  // Used once (a child's answer answers one request): let go now, not when the collector finds the result dead.
  if (kept) lines.delete(result)
  if (kept && 'bytes' in kept)
    return [kept.bytes.subarray(0, kept.headEnd), Buffer.from(`"id":${id}`), kept.bytes.subarray(kept.tailStart)]
  if (kept) return `${kept.head}"id":${id}${kept.tail}`
  if (!reusable.has(result)) return undefined
  let text = reusable.get(result)
  if (text === undefined) reusable.set(result, (text = JSON.stringify(result)))
  return `{"result":${text},"jsonrpc":"2.0","id":${id}}`
}

import type { JSONRPCMessage } from '@modelcontextprotocol/client'

/**
 * A child's response line, kept beside the result it parsed to, so that the
 * result can go out to a stdio client without being serialized again: the
 * line is written with the client's id in place of the child's. A child's
 * line is always parsed (that is the check that it is JSON, and how its id
 * is found); only the second half of the round trip is saved, which for a
 * large result is most of what relaying it costs.
 *
 * Keyed by the result object: a result that is rebuilt on the way (a
 * spread, a task mapped across eras) has no line and is serialized as
 * usual, and nothing mutates a relayed result in place. The id must be
 * where it can be replaced without parsing again: the last member (as the
 * TypeScript SDK writes responses) or the second, after `"jsonrpc":"2.0"`
 * (as the Python SDK does) when the line names no other `"id"`.
 */
const lines = new WeakMap<object, { head: string; tail: string }>()

/** Remembers `line`, a response the child wrote for `message` (already parsed from it), when its id can be replaced in place. */
export function keepResponseLine(line: string, message: { jsonrpc?: unknown; id?: unknown; result?: unknown }): void {
  const { id, result } = message
  if (typeof id !== 'string' || message.jsonrpc !== '2.0' || typeof result !== 'object' || result === null || Array.isArray(result)) return
  // Only the three members a response is rebuilt from (a client's SDK may refuse others).
  let members = 0
  for (const _ in message) if (++members > 3) return
  const member = `"id":${JSON.stringify(id)}`
  if (line.endsWith(`,${member}}`)) {
    lines.set(result, { head: line.slice(0, line.length - member.length - 1), tail: '}' })
    return
  }
  const opening = `{"jsonrpc":"2.0",${member},`
  if (line.startsWith(opening) && line.indexOf('"id":', opening.length) === -1) lines.set(result, { head: '{"jsonrpc":"2.0",', tail: line.slice(opening.length - 1) })
}

/** The line for a response `{ jsonrpc, id, result }` whose result is a kept child line, with this message's id; undefined for anything else. */
export function relayedLine(message: JSONRPCMessage): string | undefined {
  const result = (message as { result?: unknown }).result
  if (typeof result !== 'object' || result === null) return undefined
  const kept = lines.get(result)
  if (!kept) return undefined
  return `${kept.head}"id":${JSON.stringify((message as { id: unknown }).id)}${kept.tail}`
}

import { isUtf8 } from 'node:buffer'
import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import { closingQuote } from './json-text.js'

/**
 * The text of a tools/call's `arguments` as the client wrote it, kept so
 * that the request goes to a stdio child without serializing them again:
 * only the tool's name and the request's id change on the way, so the rest
 * of the request is serialized and the arguments' text spliced in (as the
 * last member of `params`, where JSON.stringify would put the same text
 * in its own place).
 *
 * The text is kept only when it is exactly what JSON.stringify writes for
 * the object it parsed to (canonical: no whitespace, no duplicate or
 * integer-like keys, numbers and escapes as JSON.stringify writes them), so
 * the child reads the very value myc's checks read, byte for byte as
 * before. It is keyed by that object: arguments rebuilt on the way (a lazy
 * `call_tool` unwrapped, say) are serialized as usual, and nothing changes
 * an arguments object in place. Where the request came as bytes (an HTTP
 * body), the arguments' own bytes are kept instead of their text, and
 * written to the child as they are: neither copied nor encoded again.
 */
const texts = new WeakMap<object, string | Buffer>()

/** Below this many characters a request is serialized again (cheaper than reading it twice). */
export const MIN_SPLICED_CHARS = 8 * 1024

/**
 * Read a character at a time, text outside strings costs more than
 * serializing it (strings are skipped with one native search): a line with
 * more of it than this share of its length (many small values) is left to
 * be serialized, and reading it stops there.
 */
const STEPS_PER_CHAR = 1 / 16

/**
 * Remembers the text of `params.arguments` in `line`, a request parsed to
 * `params`, when it can be sent on as it is. `bytes`, when given, are the
 * UTF-8 bytes `line` was decoded from: valid UTF-8, the arguments' part of
 * them is kept in place of the text.
 */
export function keepArgumentsText(line: string, params: unknown, bytes?: Buffer): void {
  if (line.length < MIN_SPLICED_CHARS || typeof params !== 'object' || params === null) return
  const args = (params as { arguments?: unknown }).arguments
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return
  const span = argumentsSpan(line)
  if (span === undefined) return
  const text = line.slice(span.start, span.end)
  if (isCanonical(text)) texts.set(args, (bytes && argumentsBytes(line, span, bytes)) ?? text)
}

/**
 * The bytes of the arguments in `bytes`, the UTF-8 that `line` was decoded
 * from, found by the byte lengths of the short text before and after them;
 * undefined when `bytes` are not valid UTF-8 (then `line` holds a
 * replacement character where they do not: only the text is the value read).
 */
function argumentsBytes(line: string, span: { start: number; end: number }, bytes: Buffer): Buffer | undefined {
  if (!isUtf8(bytes)) return undefined
  return bytes.subarray(
    Buffer.byteLength(line.slice(0, span.start)),
    bytes.length - Buffer.byteLength(line.slice(span.end)),
  )
}

/**
 * The line of a request whose arguments' text is kept, as JSON.stringify
 * would write it (`arguments` moved last): text, or the pieces of its bytes
 * around the arguments' own; undefined for any other message.
 */
export function requestLine(message: JSONRPCMessage): string | Buffer[] | undefined {
  const params = (message as { params?: unknown }).params
  if (typeof params !== 'object' || params === null) return undefined
  const args = (params as { arguments?: unknown }).arguments
  const kept = typeof args === 'object' && args !== null ? texts.get(args) : undefined
  if (kept === undefined) return undefined
  const keys = Object.keys(message)
  if (keys[keys.length - 1] !== 'params') return undefined
  const { arguments: _spliced, ...rest } = params as Record<string, unknown>
  const head = JSON.stringify({ ...message, params: rest })
  // `params` is the last member: the head ends with its closing brace and the message's.
  const before = `${head.slice(0, -2)}${head.endsWith(':{}}') ? '' : ','}"arguments":`
  return typeof kept === 'string' ? `${before}${kept}}}` : [Buffer.from(before), kept, Buffer.from('}}')]
}

/** What the walk of a request line knows at each point. */
interface SpanWalk {
  /** Open containers, innermost last: true for an object. */
  objects: boolean[]
  expectKey: boolean
  /** The last key read in the message (depth 1) and in its params (depth 2). */
  keys: [string | undefined, string | undefined]
  /** Whether the object at depth 2 is the message's `params`. */
  inParams: boolean
  seen: { params: number; arguments: number }
  start: number
  end: number
}

/**
 * Where the value of the top-level `params.arguments` object lies in a
 * request's text (already parsed: valid JSON). Undefined when the line names
 * `params` or its `arguments` twice, or a key at those levels has an escape.
 */
function argumentsSpan(line: string): { start: number; end: number } | undefined {
  const walk: SpanWalk = {
    objects: [],
    expectKey: false,
    keys: [undefined, undefined],
    inParams: false,
    seen: { params: 0, arguments: 0 },
    start: -1,
    end: -1,
  }
  const budget = line.length * STEPS_PER_CHAR
  for (let i = 0, steps = 0; i < line.length; i++) {
    if (++steps > budget) return undefined
    const c = line.charCodeAt(i)
    if (c === QUOTE) {
      const end = closingQuote(line, i + 1)
      if (walk.expectKey && !readKey(walk, line.slice(i + 1, end))) return undefined
      i = end
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) open(walk, c === OPEN_OBJECT, i)
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      walk.objects.pop()
      if (walk.objects.length === 2 && walk.start >= 0 && walk.end < 0) walk.end = i + 1
    } else if (c === COMMA) walk.expectKey = walk.objects[walk.objects.length - 1] === true
    else if (c === COLON) walk.expectKey = false
  }
  if (walk.seen.params !== 1 || walk.seen.arguments !== 1 || walk.end < 0) return undefined
  return { start: walk.start, end: walk.end }
}

/** A key at depth 1 or 2; false when the walk must stop (a key with an escape, or a name seen twice). */
function readKey(walk: SpanWalk, raw: string): boolean {
  walk.expectKey = false
  const depth = walk.objects.length
  if (depth > 2) return true
  if (raw.includes('\\')) return false
  walk.keys[depth - 1] = raw
  if (depth === 1 && raw === 'params') return ++walk.seen.params === 1
  if (depth === 2 && walk.inParams && raw === 'arguments') return ++walk.seen.arguments === 1
  return true
}

function open(walk: SpanWalk, object: boolean, at: number): void {
  const depth = walk.objects.length
  if (depth === 1) walk.inParams = object && walk.keys[0] === 'params'
  if (depth === 2 && walk.inParams && walk.keys[1] === 'arguments' && object && walk.start < 0) walk.start = at
  walk.objects.push(object)
  walk.expectKey = object
}

const QUOTE = 0x22
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const COMMA = 0x2c
const COLON = 0x3a
/** The escapes JSON.stringify writes as two characters (`\u` ones are not taken as canonical). */
const SHORT_ESCAPES = new Set(['"', '\\', 'b', 'f', 'n', 'r', 't'])
const INTEGER_LIKE = /^(0|[1-9]\d*)$/

/**
 * Whether valid JSON text is exactly what JSON.stringify writes for the
 * value it parses to: no whitespace between tokens, each number as
 * String(number) writes it, only the short escapes in strings, and in each
 * object no key twice and none that looks like an integer (JavaScript puts
 * those first, whatever their place in the text). False too for text with
 * more to read outside strings than STEPS_PER_CHAR of its length allows.
 */
export function isCanonical(text: string): boolean {
  /** The keys of each open object (undefined for an array). */
  const keys: Array<Set<string> | undefined> = []
  let expectKey = false
  const budget = Math.max(64, text.length * STEPS_PER_CHAR)
  for (let i = 0, steps = 0; i < text.length; i++) {
    if (++steps > budget) return false
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const end = closingQuote(text, i + 1)
      if (!shortEscapesOnly(text, i + 1, end)) return false
      if (expectKey && !newKey(keys[keys.length - 1]!, text.slice(i + 1, end))) return false
      expectKey = false
      i = end
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      keys.push(c === OPEN_OBJECT ? new Set() : undefined)
      expectKey = c === OPEN_OBJECT
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) keys.pop()
    else if (c === COMMA) expectKey = keys[keys.length - 1] !== undefined
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const end = numberEnd(text, i)
      const number = text.slice(i, end)
      if (String(Number(number)) !== number) return false
      i = end - 1
    } else if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) return false
  }
  return true
}

function newKey(seen: Set<string>, raw: string): boolean {
  if (seen.has(raw) || INTEGER_LIKE.test(raw)) return false
  seen.add(raw)
  return true
}

/** Whether the string text between `from` and `to` uses only the two-character escapes. */
function shortEscapesOnly(text: string, from: number, to: number): boolean {
  let at = text.indexOf('\\', from)
  while (at !== -1 && at < to) {
    if (!SHORT_ESCAPES.has(text[at + 1]!)) return false
    at = text.indexOf('\\', at + 2)
  }
  return true
}

function numberEnd(text: string, from: number): number {
  let end = from + 1
  for (; end < text.length; end++) {
    const c = text.charCodeAt(end)
    if (!((c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2d || c === 0x2b || c === 0x65 || c === 0x45)) break
  }
  return end
}

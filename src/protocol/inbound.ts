import type { JSONRPCErrorResponse, JSONRPCMessage, RequestId } from '@modelcontextprotocol/client'
import { notificationParamsProblem, requestParamsProblem } from './params-check.js'
import { RpcCode, isObject } from './facts.js'
import { closingQuote } from './json-text.js'

/** JSON-RPC 2.0 error codes for messages that cannot be served. */
export const JsonRpcError = {
  parse: RpcCode.parseError,
  invalidRequest: RpcCode.invalidRequest,
  methodNotFound: RpcCode.methodNotFound,
  invalidParams: RpcCode.invalidParams,
} as const

/**
 * What one incoming value is. `message` is rebuilt from the known fields
 * only (the SDK rejects unknown top-level keys, so passing them on would
 * leave a request unanswered). `reply` is the error answer owed to the
 * sender; invalid notifications and responses are dropped without one.
 */
export type Inbound =
  | { kind: 'request'; id: RequestId; method: string; message: JSONRPCMessage }
  | { kind: 'notification'; method: string; message: JSONRPCMessage }
  | { kind: 'response'; message: JSONRPCMessage }
  | { kind: 'invalid'; reason: string; reply?: JSONRPCErrorResponse }

export function errorReply(id: RequestId | null, code: number, message: string): JSONRPCErrorResponse {
  return { jsonrpc: '2.0', id: id as RequestId, error: { code, message } }
}

/** Deepest nesting of arrays and objects a message may have: deeper ones are refused before parsing. */
export const MAX_NESTING = 128

/**
 * Whether JSON text nests arrays and objects deeper than `limit` (brackets
 * inside strings do not count). Checked on the text, before parsing: a value
 * nested thousands deep parses, but overflows the stack of whatever walks or
 * serializes it later (the relay, a child's SDK). A string is skipped with a
 * native search for its closing quote (a quote after an even run of
 * backslashes), not walked a character at a time: a megabyte of text in a
 * string costs a search, not a megabyte of steps (the walk was the largest
 * single cost of relaying a 1 MiB request, docs/benchmarks.md).
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  // Fewer brackets than the limit cannot nest deeper than it.
  if (text.length <= limit) return false
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34 /* " */) i = closingQuote(text, i + 1)
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > limit) return true
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--
  }
  return false
}

/** The answer to a line that is not JSON. */
export function parseErrorReply(): JSONRPCErrorResponse {
  return errorReply(null, JsonRpcError.parse, 'Parse error: the message is not valid JSON')
}

const isId = (v: unknown): v is RequestId => typeof v === 'string' || Number.isSafeInteger(v)

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return `a ${typeof value}`
}

/**
 * Classifies one parsed JSON value as MCP's JSON-RPC 2.0 sees it (no
 * batches: MCP dropped them in 2025-06-18), and checks the params of the
 * requests myc serves. Every request gets exactly one answer: either it
 * passes on, or `reply` answers it here.
 */
export function checkInbound(value: unknown): Inbound {
  if (!isObject(value)) {
    const reason = Array.isArray(value)
      ? 'Invalid Request: JSON-RPC batches (arrays) are not supported; send one message per line'
      : `Invalid Request: a JSON-RPC message must be an object, not ${describe(value)}`
    return { kind: 'invalid', reason, reply: errorReply(null, JsonRpcError.invalidRequest, reason) }
  }
  if (value.jsonrpc !== '2.0')
    return invalid(
      value,
      `Invalid Request: "jsonrpc" must be "2.0"${value.jsonrpc === undefined ? ' (it is missing)' : ''}`,
    )
  return Object.hasOwn(value, 'method') ? checkCall(value) : checkResponse(value)
}

/** The id an error can carry: only a well-formed id of something that tried to be a request. */
function replyIdOf(value: Record<string, unknown>): RequestId | null {
  const rawId = Object.hasOwn(value, 'id') ? value.id : undefined
  return isId(rawId) && !Object.hasOwn(value, 'result') && !Object.hasOwn(value, 'error') ? rawId : null
}

/**
 * The answer to a message that is not to pass: its reason, and the error
 * reply for an id that can carry one (made only here: a message that passes
 * costs no closure and no reply).
 */
function invalid(
  value: Record<string, unknown>,
  reason: string,
  id: RequestId | null = replyIdOf(value),
  code: number = JsonRpcError.invalidRequest,
): Inbound {
  return { kind: 'invalid', reason, reply: errorReply(id, code, reason) }
}

/** A request or a notification (the message has a `method`). */
function checkCall(value: Record<string, unknown>): Inbound {
  const method = value.method
  if (typeof method !== 'string' || method === '')
    return invalid(value, `Invalid Request: "method" must be a non-empty string (got ${describe(method)})`)
  const params = value.params
  if (!Object.hasOwn(value, 'id')) {
    const problem = notificationParamsProblem(method, params)
    // Notifications are never answered, whatever is wrong with them.
    if (problem) return { kind: 'invalid', reason: `Invalid notification ${method}: ${problem}` }
    return {
      kind: 'notification',
      method,
      message: (params === undefined
        ? { jsonrpc: '2.0', method }
        : { jsonrpc: '2.0', method, params }) as JSONRPCMessage,
    }
  }
  const rawId = value.id
  if (!isId(rawId))
    return invalid(
      value,
      `Invalid Request: "id" must be a string or an integer (got ${describe(rawId)}${typeof rawId === 'number' ? ' that is not a safe integer' : ''})`,
      null,
    )
  const problem = requestParamsProblem(method, params)
  if (problem) return invalid(value, `Invalid params for ${method}: ${problem}`, rawId, JsonRpcError.invalidParams)
  return {
    kind: 'request',
    id: rawId,
    method,
    message: (params === undefined
      ? { jsonrpc: '2.0', id: rawId, method }
      : { jsonrpc: '2.0', id: rawId, method, params }) as JSONRPCMessage,
  }
}

/** A response: a `result` or an `error`, never both. */
function checkResponse(value: Record<string, unknown>): Inbound {
  const hasResult = Object.hasOwn(value, 'result')
  if (hasResult === Object.hasOwn(value, 'error'))
    return invalid(
      value,
      'Invalid Request: a message needs "method" (a request or notification), or "result" or "error" (a response)',
    )
  const rawId = value.id
  if (!isId(rawId))
    return invalid(value, `Invalid response: "id" must be a string or an integer (got ${describe(rawId)})`, null)
  if (hasResult) {
    if (!isObject(value.result))
      return invalid(value, `Invalid response: "result" must be an object (got ${describe(value.result)})`, null)
    return { kind: 'response', message: { jsonrpc: '2.0', id: rawId, result: value.result } as JSONRPCMessage }
  }
  const error = value.error
  if (!isObject(error) || !Number.isSafeInteger(error.code) || typeof error.message !== 'string') {
    return invalid(
      value,
      'Invalid response: "error" must be an object with an integer "code" and a string "message"',
      null,
    )
  }
  const wireError =
    error.data === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, data: error.data }
  return { kind: 'response', message: { jsonrpc: '2.0', id: rawId, error: wireError } as JSONRPCMessage }
}

import { isJsonContentType, type JSONRPCMessage } from '@modelcontextprotocol/server'
import type { Logger } from '../logger.js'
import { checkInbound, MAX_NESTING, nestsDeeperThan } from '../protocol/inbound.js'
import { RpcCode } from '../protocol/facts.js'
import { topLevelId } from '../protocol/top-level-id.js'
import { keepArgumentsText } from '../protocol/request-lines.js'
import type { Runtime } from '../runtime/runtime.js'
import { HttpRpcCode, refusal } from './responses.js'
import type { InboundRequest } from './node-bridge.js'
import { withHeaderTraceContext } from './trace-headers.js'

/** A message read from a POST body (a request carries its `id`), or the refusal owed instead. */
export type ReadMessage =
  | { ok: true; message: JSONRPCMessage; isRequest: boolean; isInitialize: boolean; id?: string | number }
  | { ok: false; response: Response }

/**
 * Reads and checks a POST body as the stdio transport checks a line: too
 * large → 413; not JSON → 400 -32700; too deep, a batch, or not a JSON-RPC
 * message → 400 -32600 (with the request's id when it can be read);
 * params that do not fit → the -32602 answer (200, it is the request's
 * answer). Unknown top-level keys are dropped.
 */
export async function readPostMessage(
  inbound: InboundRequest,
  options: { maxMessageBytes: number; logger: Logger; runtime: Runtime },
): Promise<ReadMessage> {
  const { request } = inbound
  const fail = (response: Response): ReadMessage => ({ ok: false, response })
  if (!isJsonContentType(request.headers.get('content-type')))
    return fail(refusal(415, HttpRpcCode.server, 'Unsupported Media Type: Content-Type must be application/json'))
  const max = options.maxMessageBytes
  const body = await inbound.readBody(max)
  if (body.tooLarge)
    return fail(
      refusal(
        413,
        HttpRpcCode.invalidRequest,
        `Payload Too Large: a message may be at most ${max} bytes (limits.maxMessageBytes)`,
      ),
    )
  // Parsed already when the face read it to tell its era (within the nesting limit).
  const value = inbound.parsed ? inbound.parsed.value : parseBody(body.text)
  if (value instanceof Response) return fail(value)
  const checked = checkInbound(value)
  if (checked.kind === 'invalid') {
    options.logger.debug(`http: refused a message: ${checked.reason}`)
    const reply = checked.reply ?? {
      jsonrpc: '2.0',
      id: null,
      error: { code: HttpRpcCode.invalidRequest, message: checked.reason },
    }
    const status = reply.error.code === RpcCode.invalidParams ? 200 : 400
    return fail(new Response(JSON.stringify(reply), { status, headers: { 'Content-Type': 'application/json' } }))
  }
  // Tracing on: the traceparent header is the request's parent when its _meta names none.
  const message = options.runtime.tracing?.propagates
    ? withHeaderTraceContext(checked.message, request.headers)
    : checked.message
  const isRequest = checked.kind === 'request'
  // A large call's arguments go on to a stdio child as the client wrote them (request-lines.ts), as over stdio.
  if (isRequest && checked.method === 'tools/call')
    keepArgumentsText(body.text, (message as { params?: unknown }).params, body.bytes)
  return {
    ok: true,
    message,
    isRequest,
    isInitialize: isRequest && checked.method === 'initialize',
    ...(isRequest ? { id: (message as { id: string | number }).id } : {}),
  }
}

/** A body's JSON value, or the refusal owed: too deep (400 -32600, with the request's own id when it can be read) or not JSON (400 -32700). */
function parseBody(text: string): unknown {
  // The request's own id, wherever it sits in the body (after the deep value too), as over stdio.
  if (nestsDeeperThan(text, MAX_NESTING))
    return refusal(
      400,
      HttpRpcCode.invalidRequest,
      `Invalid Request: arrays and objects nest deeper than ${MAX_NESTING}`,
      {},
      topLevelId(text),
    )
  try {
    return JSON.parse(text) as unknown
  } catch {
    return refusal(400, HttpRpcCode.parse, 'Parse error: the body is not valid JSON')
  }
}

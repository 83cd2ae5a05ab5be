/** JSON-RPC codes of myc's HTTP refusals. */
import { RpcCode } from '../protocol/facts.js'
import type { InboundRequest } from './node-bridge.js'
export const HttpRpcCode = {
  /** A refusal of the HTTP layer (auth, origin, limits…): JSON-RPC's implementation-defined server error. */
  server: RpcCode.serverError,
  /** The session id is unknown or expired (as the SDK answers it). */
  sessionNotFound: RpcCode.sessionNotFound,
  parse: RpcCode.parseError,
  invalidRequest: RpcCode.invalidRequest,
  internal: RpcCode.internalError,
} as const

/**
 * A refusal: the HTTP status that says it, and a JSON-RPC error body with
 * `id: null` (the request it answers may not be readable), as Streamable
 * HTTP answers what it cannot serve.
 */
export function refusal(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: string | number | null = null,
): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  })
}

/** A plain-text answer of a route that is not MCP's (a person's login, their secrets), never cached. */
export function plainText(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(`${body}\n`, {
    status,
    headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers },
  })
}

/** The same response with more headers (CORS), its body untouched. */
export function withHeaders(response: Response, headers: Record<string, string>): Response {
  const keys = Object.keys(headers)
  if (keys.length === 0) return response
  const merged = new Headers(response.headers)
  for (const key of keys) merged.set(key, headers[key]!)
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers: merged })
}

/**
 * `response` as it is, with `done` called once it is over: the server that
 * writes it says when (`inbound.answered`: written to its end, or the client
 * gone), so nothing is wrapped around it. A request served another way has
 * its answer's body watched instead (onBodyDone: a stream and a Response
 * more).
 */
export function untilAnswered(inbound: InboundRequest, response: Response, done: () => void): Response {
  if (!inbound.answered) return onBodyDone(response, done)
  inbound.answered(done)
  return response
}

/**
 * The same response, calling `done` once its body has been read to the end,
 * failed, or been cancelled (the client went away): how long a request's
 * answer streams is how long it is in flight.
 */
function onBodyDone(response: Response, done: () => void): Response {
  if (!response.body) {
    done()
    return response
  }
  let called = false
  const once = () => {
    if (called) return
    called = true
    done()
  }
  const reader = response.body.getReader()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: end, value } = await reader.read()
        if (end) {
          controller.close()
          once()
        } else controller.enqueue(value)
      } catch (error) {
        controller.error(error)
        once()
      }
    },
    cancel(reason) {
      once()
      return reader.cancel(reason)
    },
  })
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
}

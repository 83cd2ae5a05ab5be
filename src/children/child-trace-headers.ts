import type { FetchLike } from '@modelcontextprotocol/client'
import { carrierOf, traceIdOf } from '../telemetry/trace-context.js'

/** Printable ASCII, at most 8 KiB: what a header may carry without a proxy or fetch refusing it. */
const HEADER_VALUE = /^[\x20-\x7e]{1,8192}$/

/**
 * A fetch for the HTTP client transports that copies the trace context of
 * each request's `params._meta` (traceparent, tracestate, baggage) into the
 * HTTP headers of the same names, so an HTTP child, or a proxy or gateway in
 * front of it, that reads W3C trace context from headers joins the same
 * trace as one that reads `_meta`. The headers mirror what the child gets in
 * `_meta`: myc's CLIENT span while tracing is on, else the caller's own
 * context as it passed through. A traceparent that is not valid W3C, or a
 * value a header cannot carry, is left out; the body is never changed.
 */
export function withTraceHeaders(fetchImpl: FetchLike): FetchLike {
  return (url, init) => {
    const body = init?.body
    // Cheap first: most requests carry no trace context, and only a POST of one JSON-RPC message can.
    if (init?.method !== 'POST' || typeof body !== 'string' || !body.includes('"traceparent"'))
      return fetchImpl(url, init)
    const carrier = carrierOf(metaOf(body))
    if (!carrier || traceIdOf(carrier.traceparent) === undefined) return fetchImpl(url, init)
    const headers = new Headers(init.headers)
    for (const key of ['traceparent', 'tracestate', 'baggage'] as const) {
      const value = carrier[key]
      if (value !== undefined && HEADER_VALUE.test(value)) headers.set(key, value)
    }
    return fetchImpl(url, { ...init, headers })
  }
}

/** The `params._meta` of a JSON-RPC request body, or undefined (a batch, a response, bad JSON). */
function metaOf(body: string): unknown {
  try {
    const message = JSON.parse(body) as unknown
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined
    const params = (message as { params?: unknown }).params
    return typeof params === 'object' && params !== null ? (params as { _meta?: unknown })._meta : undefined
  } catch {
    return undefined
  }
}

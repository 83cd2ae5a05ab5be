import { carrierOf, type Carrier } from '../telemetry/trace-context.js'

/**
 * A request's trace context from its HTTP headers (`traceparent`,
 * `tracestate`, `baggage`) put into its `params._meta` when the body
 * carries none: over HTTP a caller may send either, and `_meta` wins.
 * Used only while tracing is on; anything that is not a request with
 * params (or no header) comes back as it was.
 */
export function withHeaderTraceContext<T>(body: T, headers: Headers): T {
  const traceparent = headers.get('traceparent')
  if (!traceparent || typeof body !== 'object' || body === null || Array.isArray(body)) return body
  const message = body as { method?: unknown; params?: unknown }
  if (typeof message.method !== 'string') return body
  const params =
    typeof message.params === 'object' && message.params !== null && !Array.isArray(message.params)
      ? (message.params as Record<string, unknown>)
      : {}
  if (carrierOf(params._meta)) return body
  const carrier: Carrier = { traceparent }
  for (const key of ['tracestate', 'baggage'] as const) {
    const value = headers.get(key)
    if (value) carrier[key] = value
  }
  const meta =
    typeof params._meta === 'object' && params._meta !== null ? (params._meta as Record<string, unknown>) : {}
  return { ...message, params: { ...params, _meta: { ...meta, ...carrier } } } as T
}

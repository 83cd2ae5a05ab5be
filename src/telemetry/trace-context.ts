/**
 * W3C trace context as MCP carries it (SEP-414): `traceparent`, `tracestate`
 * and `baggage` in a request's `params._meta` (and, over HTTP, in headers of
 * the same names). Pure: no OpenTelemetry here.
 */
export interface Carrier {
  traceparent?: string
  tracestate?: string
  baggage?: string
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/** The trace id of a valid `traceparent` (version 00, ids not all zeros), else undefined. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  const m = traceparent === undefined ? null : TRACEPARENT.exec(traceparent)
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined
  return m[1]
}

/** The span id a `traceparent` names as the parent, else undefined. */
export function parentSpanIdOf(traceparent: string | undefined): string | undefined {
  return traceIdOf(traceparent) === undefined ? undefined : TRACEPARENT.exec(traceparent!)![2]
}

/** The trace context keys of a request's `_meta` (strings only; anything else is ignored). */
export function carrierOf(meta: unknown): Carrier | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined
  const m = meta as Record<string, unknown>
  const carrier: Carrier = {}
  for (const key of ['traceparent', 'tracestate', 'baggage'] as const)
    if (typeof m[key] === 'string') carrier[key] = m[key]
  return carrier.traceparent === undefined ? undefined : carrier
}

/** `meta` with the carrier's keys put in (replacing the caller's: the child's parent is myc's span). */
export function withCarrier(meta: unknown, carrier: Carrier): Record<string, unknown> {
  const base = typeof meta === 'object' && meta !== null ? { ...(meta as Record<string, unknown>) } : {}
  delete base.traceparent
  delete base.tracestate
  delete base.baggage
  return { ...base, ...carrier }
}

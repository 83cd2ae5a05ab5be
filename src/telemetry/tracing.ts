import type { Carrier } from './trace-context.js'

/** Attribute values of a span (OpenTelemetry's primitive kinds). */
export type SpanAttributes = Record<string, string | number | boolean>

/** One span while it runs. */
export interface SpanHandle {
  readonly traceId: string
  /** The context to hand on to what this span calls (a child's `_meta`, an HTTP header). */
  carrier(): Carrier
  set(attributes: SpanAttributes): void
  event(name: string, attributes?: SpanAttributes): void
  /** Ends it; with an error message, its status is an error. */
  end(error?: string): void
}

/**
 * Tracing as the rest of myc sees it, with no OpenTelemetry type in sight.
 * Absent (undefined) when tracing is off: callers test for it once, and the
 * OpenTelemetry packages are never loaded.
 */
export interface Tracing {
  /** A span under `parent` (a running span, or a caller's trace context; none: a new trace). */
  start(name: string, kind: 'server' | 'client' | 'internal', parent: SpanHandle | Carrier | undefined, attributes?: SpanAttributes): SpanHandle
  /** Exports what is left (bounded in time) and stops. */
  shutdown(): Promise<void>
}

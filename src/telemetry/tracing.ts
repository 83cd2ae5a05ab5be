import type { Carrier } from './trace-context.js'

/** Attribute values of a span (OpenTelemetry's primitive kinds). */
export type SpanAttributes = Record<string, string | number | boolean>

/** One span while it runs. */
export interface SpanHandle {
  /** Its trace id; empty when spans are not exported (metrics alone are on). */
  readonly traceId: string
  /** The context to hand on to what this span calls (a child's `_meta`, an HTTP header); empty when spans are not exported. */
  carrier(): Carrier
  set(attributes: SpanAttributes): void
  event(name: string, attributes?: SpanAttributes): void
  /**
   * Ends it; with an error message, its status is an error, and `errorType`
   * (low-cardinality: a JSON-RPC code, `tool_error`, `cancelled`) is its
   * `error.type`, on the span and on the duration metric.
   */
  end(error?: string, errorType?: string): void
}

/** A child as myc's observable instruments read it. */
export interface ChildReading {
  server: string
  running: boolean
  /** Restarts since myc started. */
  restarts: number
}

/** What myc's observable instruments read at each collection; each part optional (a face registers what it has). */
export interface TelemetrySources {
  children?(): Iterable<ChildReading>
  /** HTTP sessions held now. */
  sessions?(): number
}

/** The bucket boundaries (seconds) the MCP semantic conventions recommend for the operation durations (OTLP and Prometheus alike). */
export const MCP_DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]

/** One MCP request measured on its span: served (`server`) or sent to a child (`client`), with the span's attributes (`error.type` when it failed). */
export type OperationListener = (kind: 'server' | 'client', seconds: number, attributes: SpanAttributes) => void

/**
 * Tracing (and the metrics measured on its spans) as the rest of myc sees
 * it, with no OpenTelemetry type in sight. Absent (undefined) when both are
 * off: callers test for it once, and the OpenTelemetry packages are never
 * loaded.
 */
export interface Tracing {
  /** A span under `parent` (a running span, or a caller's trace context; none: a new trace). */
  start(
    name: string,
    kind: 'server' | 'client' | 'internal',
    parent: SpanHandle | Carrier | undefined,
    attributes?: SpanAttributes,
  ): SpanHandle
  /** Whether spans are exported and trace context is handed on (false: metrics alone are on). */
  readonly propagates: boolean
  /** Adds what the observable instruments read (no-op when metrics are off); returns the function that removes it. */
  observe(sources: TelemetrySources): () => void
  /** Hears the duration of each MCP request a span measured (the Prometheus twins of the OTLP durations); returns the function that stops it. */
  onOperation(listener: OperationListener): () => void
  /** Exports what is left (bounded in time) and stops. */
  shutdown(): Promise<void>
}

import type { Carrier } from './trace-context.js'
import type { OperationListener, SpanAttributes, SpanHandle, Tracing } from './tracing.js'

/**
 * Tracing without OpenTelemetry, for `myc serve --http` with Prometheus
 * metrics served and OTLP off: spans only time the MCP requests (a SERVER
 * or CLIENT span carrying `mcp.method.name`) for the listeners, so
 * `/metrics` has the same operation durations OTLP would. Nothing is
 * exported, no trace context is handed on, nothing is loaded.
 */
export function timingTracing(): Tracing {
  const listeners = new Set<OperationListener>()
  const unmeasured: SpanHandle = { traceId: '', carrier: () => ({}), set: () => {}, event: () => {}, end: () => {} }
  return {
    propagates: false,
    onOperation(listener) {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    start(
      _name: string,
      kind: 'server' | 'client' | 'internal',
      _parent: SpanHandle | Carrier | undefined,
      attributes?: SpanAttributes,
    ): SpanHandle {
      if (kind === 'internal' || attributes?.['mcp.method.name'] === undefined || listeners.size === 0)
        return unmeasured
      const started = performance.now()
      let kept = attributes
      return {
        traceId: '',
        carrier: () => ({}),
        set: (more) => void (kept = { ...kept, ...more }),
        event: () => {},
        end: (_error, errorType) => {
          const seconds = (performance.now() - started) / 1000
          const final = errorType === undefined ? kept : { ...kept, 'error.type': errorType }
          for (const listener of listeners) listener(kind, seconds, final)
        },
      }
    },
    observe: () => () => {},
    shutdown: async () => {},
  }
}

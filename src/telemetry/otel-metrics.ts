import type { Attributes, Histogram, Meter } from '@opentelemetry/api'
import type { Resource } from '@opentelemetry/resources'
import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics'
import type { TelemetryDeps } from './telemetry-deps.js'
import type { MetricsSettings } from './settings.js'
import { MCP_DURATION_BUCKETS, type SpanAttributes, type TelemetrySources } from './tracing.js'

/**
 * The span attributes each duration keeps, as the MCP conventions list them
 * for the metrics: bounded ones only (no URI, no request id, no principal).
 */
const KEPT = {
  server: ['mcp.method.name', 'gen_ai.tool.name', 'gen_ai.prompt.name', 'mcp.protocol.version', 'error.type'],
  client: [
    'mcp.method.name',
    'gen_ai.tool.name',
    'gen_ai.prompt.name',
    'server.address',
    'mcp.protocol.version',
    'error.type',
  ],
} as const

/** The metrics of one process, as tracing's spans feed them. */
export interface OperationMetrics {
  /** One MCP request's duration, served (`server`) or sent to a child (`client`), by the attributes of its span. */
  record(kind: 'server' | 'client', seconds: number, attributes: SpanAttributes): void
  observe(sources: TelemetrySources): () => void
  /** Exports what is left and stops (the caller bounds the wait). */
  shutdown(): Promise<void>
}

/**
 * Metrics on the official OpenTelemetry JS packages: a MeterProvider of its
 * own (nothing global is registered), a periodic reader, the OTLP/HTTP
 * exporter in JSON or protobuf. The MCP conventions' operation durations,
 * and myc's own observable instruments (children running, restarts, HTTP
 * sessions). An export that fails is said once (`warn`).
 */
export function createOtelMetrics(
  deps: TelemetryDeps,
  settings: MetricsSettings,
  resource: Resource,
  options: { version: string; warn: (message: string) => void },
): OperationMetrics {
  const { metrics } = deps
  const Exporter = settings.protocol === 'http/json' ? deps.JsonMetricExporter : deps.ProtoMetricExporter
  const inner = new Exporter({
    url: settings.metricsUrl,
    headers: settings.headers,
    timeoutMillis: settings.exporterTimeoutMillis,
  }) as unknown as PushMetricExporter
  const exporter = warnOnce(inner, deps, settings, options.warn)
  const reader = new metrics.PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: settings.exportIntervalMillis,
    exportTimeoutMillis: settings.exportTimeoutMillis,
  })
  const provider = new metrics.MeterProvider({ resource, readers: [reader] })
  const meter = provider.getMeter('mycelium', options.version)
  const advice = { explicitBucketBoundaries: MCP_DURATION_BUCKETS }
  const durations: Record<'server' | 'client', Histogram> = {
    server: meter.createHistogram('mcp.server.operation.duration', {
      unit: 's',
      description:
        'MCP request duration as observed on the receiver from the time it was received until the result is sent.',
      advice,
    }),
    client: meter.createHistogram('mcp.client.operation.duration', {
      unit: 's',
      description:
        'The duration of the MCP request as observed on the sender from the time it was sent until the response is received.',
      advice,
    }),
  }

  const sources = new Set<TelemetrySources>()
  observeSources(meter, sources)

  return {
    record(kind, seconds, attributes) {
      const kept: Attributes = {}
      for (const key of KEPT[kind]) if (attributes[key] !== undefined) kept[key] = attributes[key]
      durations[kind].record(seconds, kept)
    },
    observe(source) {
      sources.add(source)
      return () => void sources.delete(source)
    },
    shutdown: () => provider.shutdown(),
  }
}

/** The exporter, saying once on stderr that it cannot export (and why), not once per interval. */
function warnOnce(
  inner: PushMetricExporter,
  deps: TelemetryDeps,
  settings: MetricsSettings,
  warn: (message: string) => void,
): PushMetricExporter {
  const { core } = deps
  let warned = false
  return {
    export(data: ResourceMetrics, done) {
      inner.export(data, (result) => {
        if (result.code !== core.ExportResultCode.SUCCESS && !warned) {
          warned = true
          warn(
            `metrics: cannot export to ${settings.metricsUrl} (${result.error?.message ?? 'failed'}); metrics are dropped until it answers`,
          )
        }
        done(result)
      })
    },
    forceFlush: () => inner.forceFlush(),
    shutdown: () => inner.shutdown(),
    // The exporter's temporality (OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE) and aggregation stay its own.
    ...(inner.selectAggregationTemporality
      ? { selectAggregationTemporality: inner.selectAggregationTemporality.bind(inner) }
      : {}),
    ...(inner.selectAggregation ? { selectAggregation: inner.selectAggregation.bind(inner) } : {}),
  }
}

/** What the sources (a runtime, an HTTP face) report at each collection: children running, their restarts, HTTP sessions. */
function observeSources(meter: Meter, sources: Set<TelemetrySources>): void {
  const children = function* () {
    for (const source of sources) yield* source.children?.() ?? []
  }
  meter
    .createObservableUpDownCounter('mycelium.children.running', {
      unit: '{child}',
      description: 'Whether each server (mycelium.server) is running: 1 if it is, 0 if not.',
    })
    .addCallback((result) => {
      for (const child of children()) result.observe(child.running ? 1 : 0, { 'mycelium.server': child.server })
    })
  meter
    .createObservableCounter('mycelium.child.restarts', {
      unit: '{restart}',
      description: 'Restarts of each server (mycelium.server) after it failed or crashed, since myc started.',
    })
    .addCallback((result) => {
      for (const child of children()) result.observe(child.restarts, { 'mycelium.server': child.server })
    })
  meter
    .createObservableUpDownCounter('mycelium.sessions.active', {
      unit: '{session}',
      description: 'HTTP sessions this process holds.',
    })
    .addCallback((result) => {
      let total: number | undefined
      for (const source of sources) if (source.sessions) total = (total ?? 0) + source.sessions()
      if (total !== undefined) result.observe(total)
    })
}

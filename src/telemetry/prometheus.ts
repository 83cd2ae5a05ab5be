import type { Attributes, Counter, Histogram, ObservableResult } from '@opentelemetry/api'
import type { MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics'
import type { TelemetryDeps } from './telemetry-deps.js'

/** The content type of Prometheus' text format 0.0.4, which scrapers ask for. */
export const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8'

/** Reports the values of an observed instrument at a scrape: `set` once per series. */
type ReadValues = (set: (value: number, labels?: Attributes) => void) => void | Promise<void>

/**
 * Metrics for `GET /metrics`, on the OpenTelemetry metrics API: instruments
 * named as Prometheus names them, read by the Prometheus exporter's reader
 * and written by its serializer (no scope labels, no `target_info`). It
 * holds no timer, socket or server: nothing to shut down.
 */
export interface PrometheusRegistry {
  counter(name: string, help: string): Counter
  histogram(name: string, help: string, buckets: readonly number[]): Histogram
  /** A gauge read at each scrape: only the series `read` reports then are shown (a server gone leaves none). */
  gauge(name: string, help: string, read: ReadValues): void
  /** A counter whose totals are read at each scrape (restarts, CPU time). */
  observedCounter(name: string, help: string, read: ReadValues): void
  /** Runs after each scrape has read every instrument. */
  afterScrape(run: () => void): void
  /** The text of one scrape. */
  text(): Promise<string>
}

type Kind = 'counter' | 'histogram' | 'gauge'

/** One series' key: its labels in a fixed order. */
const seriesKey = (labels: Attributes | undefined) =>
  JSON.stringify(Object.entries(labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

export function createPrometheusRegistry(deps: TelemetryDeps): PrometheusRegistry {
  const { PrometheusExporter, PrometheusSerializer } = deps.prometheus
  const reader = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true, withoutTargetInfo: true })
  const serializer = new PrometheusSerializer(undefined, false, undefined, true, true)
  const provider = new deps.metrics.MeterProvider({ readers: [reader] })
  const meter = provider.getMeter('mycelium')
  /** Every instrument, in the order made: one with no series yet still gets its HELP and TYPE, as scrapers expect. */
  const declared = new Map<string, { help: string; kind: Kind }>()
  /** The series each gauge reported at the last scrape (the SDK keeps every series it ever saw). */
  const current = new Map<string, Set<string>>()
  const scraped: Array<() => void> = []

  const observe = (name: string, read: ReadValues) => async (result: ObservableResult) => {
    const seen = new Set<string>()
    await read((value, labels) => {
      result.observe(value, labels)
      seen.add(seriesKey(labels))
    })
    current.set(name, seen)
  }
  const declare = (name: string, help: string, kind: Kind) => {
    if (declared.has(name)) throw new Error(`metric ${name} is declared twice`)
    declared.set(name, { help, kind })
    return { description: help }
  }
  return {
    counter: (name, help) => meter.createCounter(name, declare(name, help, 'counter')),
    histogram: (name, help, buckets) =>
      meter.createHistogram(name, {
        ...declare(name, help, 'histogram'),
        advice: { explicitBucketBoundaries: [...buckets] },
      }),
    gauge(name, help, read) {
      meter.createObservableGauge(name, declare(name, help, 'gauge')).addCallback(observe(name, read))
    },
    observedCounter(name, help, read) {
      meter.createObservableCounter(name, declare(name, help, 'counter')).addCallback(observe(name, read))
    },
    afterScrape: (run) => void scraped.push(run),
    async text() {
      const { resourceMetrics } = await reader.collect()
      for (const run of scraped) run()
      const shown = withCurrentSeries(resourceMetrics, current)
      let text = serializer.serialize(shown)
      const named = new Set(shown.scopeMetrics.flatMap((s) => s.metrics.map((m) => m.descriptor.name)))
      for (const [name, { help, kind }] of declared)
        if (!named.has(name)) text += `# HELP ${name} ${help}\n# TYPE ${name} ${kind}\n`
      return text.replace(/^# no registered metrics\n?/, '')
    },
  }
}

/** The collected metrics with each gauge's series cut to those it reported at this scrape. */
function withCurrentSeries(collected: ResourceMetrics, current: Map<string, Set<string>>): ResourceMetrics {
  const cut = (metric: MetricData): MetricData => {
    const keep = current.get(metric.descriptor.name)
    if (!keep) return metric
    const dataPoints = (metric.dataPoints as Array<{ attributes: Attributes }>).filter((p) =>
      keep.has(seriesKey(p.attributes)),
    )
    return { ...metric, dataPoints } as MetricData
  }
  return {
    ...collected,
    scopeMetrics: collected.scopeMetrics.map((scope) => ({
      ...scope,
      metrics: scope.metrics.map(cut).filter((m) => m.dataPoints.length > 0),
    })),
  }
}

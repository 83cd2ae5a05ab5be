import { metricsSettings, tracingSettings, type TelemetryConfig } from './settings.js'
import type { Tracing } from './tracing.js'

/**
 * Tracing and metrics for this process, or undefined when both are off
 * (and nothing asked for the operation durations). Off costs one look at the
 * environment: OpenTelemetry is loaded only when one of them is on.
 */
export async function openTracing(options: {
  env: Record<string, string | undefined>
  config: TelemetryConfig | undefined
  version: string
  warn: (message: string) => void
  measureOperations?: boolean
}): Promise<Tracing | undefined> {
  const traces = tracingSettings(options.env, options.config)
  const metrics = metricsSettings(options.env, options.config)
  // Both off: nothing, or, for Prometheus's operation durations (measureOperations), spans that only time requests.
  if (!traces && !metrics)
    return options.measureOperations ? (await import('./timing-tracing.js')).timingTracing() : undefined
  const [{ loadTelemetryDeps }, { createOtelTracing, telemetryResource }, { createOtelMetrics }] = await Promise.all([
    import('./telemetry-deps.js'),
    import('./otel-tracing.js'),
    import('./otel-metrics.js'),
  ])
  const deps = await loadTelemetryDeps()
  const resource = telemetryResource(deps, (traces ?? metrics)!.serviceName, options.version)
  return createOtelTracing(
    deps,
    traces,
    metrics ? createOtelMetrics(deps, metrics, resource, options) : undefined,
    resource,
    options,
  )
}

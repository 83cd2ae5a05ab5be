import { metricsSettings, tracingSettings, type TelemetryConfig } from './settings.js'
import type { Tracing } from './tracing.js'

/**
 * Tracing and metrics for this process, or undefined when both are off. Off
 * costs one look at the environment: OpenTelemetry is loaded only when one
 * of them is on.
 */
export async function openTracing(options: { env: Record<string, string | undefined>; config: TelemetryConfig | undefined; version: string; warn: (message: string) => void }): Promise<Tracing | undefined> {
  const traces = tracingSettings(options.env, options.config)
  const metrics = metricsSettings(options.env, options.config)
  if (!traces && !metrics) return undefined
  const [{ loadTelemetryDeps }, { createOtelTracing, telemetryResource }, { createOtelMetrics }] = await Promise.all([import('./telemetry-deps.js'), import('./otel-tracing.js'), import('./otel-metrics.js')])
  const deps = await loadTelemetryDeps()
  const resource = telemetryResource(deps, (traces ?? metrics)!.serviceName, options.version)
  return createOtelTracing(deps, traces, metrics ? createOtelMetrics(deps, metrics, resource, options) : undefined, resource, options)
}

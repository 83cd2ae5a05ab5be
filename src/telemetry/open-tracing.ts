import { tracingSettings, type TelemetryConfig } from './settings.js'
import type { Tracing } from './tracing.js'

/**
 * Tracing for this process, or undefined when it is off. Off costs one look
 * at the environment: OpenTelemetry is loaded only when it is on.
 */
export async function openTracing(options: { env: Record<string, string | undefined>; config: TelemetryConfig | undefined; version: string; warn: (message: string) => void }): Promise<Tracing | undefined> {
  const settings = tracingSettings(options.env, options.config)
  if (!settings) return undefined
  const [{ loadTelemetryDeps }, { createOtelTracing }] = await Promise.all([import('./telemetry-deps.js'), import('./otel-tracing.js')])
  return createOtelTracing(await loadTelemetryDeps(), settings, options)
}

/** The `telemetry` section of the config (the standard OTEL_* variables win over it); traces and metrics share it. */
export interface TelemetryConfig {
  /** OTLP/HTTP base URL (as OTEL_EXPORTER_OTLP_ENDPOINT); traces go to `<endpoint>/v1/traces`, metrics to `<endpoint>/v1/metrics`. */
  endpoint?: string
  protocol?: 'http/protobuf' | 'http/json'
  serviceName?: string
  headers?: Record<string, string>
}

/** What tracing runs with, once it is on. */
export interface TracingSettings {
  /** The full traces URL. */
  tracesUrl: string
  protocol: 'http/protobuf' | 'http/json'
  serviceName: string
  headers: Record<string, string>
  sampler: { name: string; arg: number | undefined }
  /** OTEL_EXPORTER_OTLP_TRACES_TIMEOUT or OTEL_EXPORTER_OTLP_TIMEOUT: how long one export may take, its retries included (10 s). */
  exporterTimeoutMillis: number
  batch: { scheduledDelayMillis: number; maxQueueSize: number; maxExportBatchSize: number; exportTimeoutMillis: number }
}

const number = (v: string | undefined, fallback: number) => {
  const n = v === undefined || v.trim() === '' ? Number.NaN : Number(v)
  return Number.isFinite(n) && n >= 0 ? n : fallback
}

/** `k1=v1,k2=v2` (values percent-decoded), as OTEL_EXPORTER_OTLP_HEADERS. */
function headerList(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=')
    if (at <= 0) continue
    try {
      out[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      // a malformed pair is skipped
    }
  }
  return out
}

/**
 * The OTLP exporter's timeout, its retries included: the signal's own
 * variable, else OTEL_EXPORTER_OTLP_TIMEOUT, else 10 s (the specification's
 * default). Read from myc's environment, as every other setting is, and
 * handed to the exporter, which would otherwise read the process's.
 */
function exporterTimeout(env: Record<string, string | undefined>, own: string | undefined): number {
  return Math.max(1, number(own?.trim() ? own : env.OTEL_EXPORTER_OTLP_TIMEOUT, 10_000))
}

/** Off for every signal: OTEL_SDK_DISABLED=true. */
const disabled = (env: Record<string, string | undefined>) =>
  (env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true'

/** `<base>/v1/<signal>` from OTEL_EXPORTER_OTLP_ENDPOINT or the config's endpoint, unless the signal's own endpoint variable names the URL. */
function signalUrl(
  env: Record<string, string | undefined>,
  config: TelemetryConfig | undefined,
  own: string | undefined,
  signal: 'traces' | 'metrics',
): string | undefined {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT || config?.endpoint
  return own || (base ? `${base.replace(/\/+$/, '')}/v1/${signal}` : undefined)
}

function protocolOf(
  env: Record<string, string | undefined>,
  config: TelemetryConfig | undefined,
  own: string | undefined,
): 'http/protobuf' | 'http/json' {
  return (own || env.OTEL_EXPORTER_OTLP_PROTOCOL || config?.protocol || 'http/protobuf') === 'http/json'
    ? 'http/json'
    : 'http/protobuf'
}

function serviceNameOf(env: Record<string, string | undefined>, config: TelemetryConfig | undefined): string {
  return (
    env.OTEL_SERVICE_NAME ||
    /(?:^|,)\s*service\.name=([^,]+)/.exec(env.OTEL_RESOURCE_ATTRIBUTES ?? '')?.[1]?.trim() ||
    config?.serviceName ||
    'mycelium'
  )
}

/**
 * Whether tracing is on, and how: on when OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, or the config names an
 * endpoint; off when OTEL_SDK_DISABLED is true or OTEL_TRACES_EXPORTER is
 * `none`. The environment wins over the config. Pure: reads nothing else.
 */
export function tracingSettings(
  env: Record<string, string | undefined>,
  config: TelemetryConfig | undefined,
): TracingSettings | undefined {
  if (disabled(env)) return undefined
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() === 'none') return undefined
  const tracesUrl = signalUrl(env, config, env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, 'traces')
  if (!tracesUrl) return undefined
  const headers = {
    ...config?.headers,
    ...headerList(env.OTEL_EXPORTER_OTLP_HEADERS),
    ...headerList(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
  }
  const arg = env.OTEL_TRACES_SAMPLER_ARG === undefined ? undefined : Number(env.OTEL_TRACES_SAMPLER_ARG)
  return {
    tracesUrl,
    protocol: protocolOf(env, config, env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL),
    serviceName: serviceNameOf(env, config),
    headers,
    sampler: {
      name: (env.OTEL_TRACES_SAMPLER || 'parentbased_always_on').trim().toLowerCase(),
      arg: arg !== undefined && Number.isFinite(arg) ? arg : undefined,
    },
    exporterTimeoutMillis: exporterTimeout(env, env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT),
    batch: {
      scheduledDelayMillis: number(env.OTEL_BSP_SCHEDULE_DELAY, 5_000),
      maxQueueSize: number(env.OTEL_BSP_MAX_QUEUE_SIZE, 2_048),
      maxExportBatchSize: number(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512),
      exportTimeoutMillis: number(env.OTEL_BSP_EXPORT_TIMEOUT, 30_000),
    },
  }
}

/** What metrics export runs with, once it is on. */
export interface MetricsSettings {
  /** The full metrics URL. */
  metricsUrl: string
  protocol: 'http/protobuf' | 'http/json'
  serviceName: string
  headers: Record<string, string>
  /** OTEL_METRIC_EXPORT_INTERVAL and OTEL_METRIC_EXPORT_TIMEOUT, in milliseconds (the timeout never above the interval, as the SDK requires). */
  exportIntervalMillis: number
  exportTimeoutMillis: number
  /** OTEL_EXPORTER_OTLP_METRICS_TIMEOUT or OTEL_EXPORTER_OTLP_TIMEOUT: how long the exporter may take over one export, its retries included (10 s). */
  exporterTimeoutMillis: number
}

/**
 * Whether metrics are exported, and how: on when OTEL_EXPORTER_OTLP_ENDPOINT
 * or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is set, or the config names an
 * endpoint; off when OTEL_SDK_DISABLED is true or OTEL_METRICS_EXPORTER is
 * `none` (each signal is turned off on its own). The environment wins over
 * the config. Pure: reads nothing else.
 */
export function metricsSettings(
  env: Record<string, string | undefined>,
  config: TelemetryConfig | undefined,
): MetricsSettings | undefined {
  if (disabled(env)) return undefined
  if ((env.OTEL_METRICS_EXPORTER ?? '').trim().toLowerCase() === 'none') return undefined
  const metricsUrl = signalUrl(env, config, env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, 'metrics')
  if (!metricsUrl) return undefined
  const interval = Math.max(1, number(env.OTEL_METRIC_EXPORT_INTERVAL, 60_000))
  return {
    metricsUrl,
    protocol: protocolOf(env, config, env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL),
    serviceName: serviceNameOf(env, config),
    headers: {
      ...config?.headers,
      ...headerList(env.OTEL_EXPORTER_OTLP_HEADERS),
      ...headerList(env.OTEL_EXPORTER_OTLP_METRICS_HEADERS),
    },
    exportIntervalMillis: interval,
    exportTimeoutMillis: Math.min(interval, Math.max(1, number(env.OTEL_METRIC_EXPORT_TIMEOUT, 30_000))),
    exporterTimeoutMillis: exporterTimeout(env, env.OTEL_EXPORTER_OTLP_METRICS_TIMEOUT),
  }
}

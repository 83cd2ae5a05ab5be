/** The `telemetry` section of the config (the standard OTEL_* variables win over it). */
export interface TelemetryConfig {
  /** OTLP/HTTP base URL (as OTEL_EXPORTER_OTLP_ENDPOINT); traces go to `<endpoint>/v1/traces`. */
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
 * Whether tracing is on, and how: on when OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, or the config names an
 * endpoint; off when OTEL_SDK_DISABLED is true or OTEL_TRACES_EXPORTER is
 * `none`. The environment wins over the config. Pure: reads nothing else.
 */
export function tracingSettings(env: Record<string, string | undefined>, config: TelemetryConfig | undefined): TracingSettings | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return undefined
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() === 'none') return undefined
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT || config?.endpoint
  const tracesUrl = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined)
  if (!tracesUrl) return undefined
  const protocolText = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || config?.protocol || 'http/protobuf'
  const protocol = protocolText === 'http/json' ? 'http/json' : 'http/protobuf'
  const headers = { ...config?.headers, ...headerList(env.OTEL_EXPORTER_OTLP_HEADERS), ...headerList(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) }
  const serviceName = env.OTEL_SERVICE_NAME || /(?:^|,)\s*service\.name=([^,]+)/.exec(env.OTEL_RESOURCE_ATTRIBUTES ?? '')?.[1]?.trim() || config?.serviceName || 'mycelium'
  const arg = env.OTEL_TRACES_SAMPLER_ARG === undefined ? undefined : Number(env.OTEL_TRACES_SAMPLER_ARG)
  return {
    tracesUrl,
    protocol,
    serviceName,
    headers,
    sampler: { name: (env.OTEL_TRACES_SAMPLER || 'parentbased_always_on').trim().toLowerCase(), arg: arg !== undefined && Number.isFinite(arg) ? arg : undefined },
    batch: {
      scheduledDelayMillis: number(env.OTEL_BSP_SCHEDULE_DELAY, 5_000),
      maxQueueSize: number(env.OTEL_BSP_MAX_QUEUE_SIZE, 2_048),
      maxExportBatchSize: number(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512),
      exportTimeoutMillis: number(env.OTEL_BSP_EXPORT_TIMEOUT, 30_000),
    },
  }
}

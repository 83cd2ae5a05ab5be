import { lazyEmbedded } from '../embedded-module.js'

/** What tracing and metrics use of the OpenTelemetry JS packages. */
export interface TelemetryDeps {
  api: typeof import('@opentelemetry/api')
  core: Pick<
    typeof import('@opentelemetry/core'),
    'W3CTraceContextPropagator' | 'W3CBaggagePropagator' | 'CompositePropagator' | 'ExportResultCode'
  >
  sdk: Pick<
    typeof import('@opentelemetry/sdk-trace'),
    | 'TracerProvider'
    | 'BatchSpanProcessor'
    | 'AlwaysOnSampler'
    | 'AlwaysOffSampler'
    | 'ParentBasedSampler'
    | 'TraceIdRatioBasedSampler'
  >
  resources: Pick<
    typeof import('@opentelemetry/resources'),
    'resourceFromAttributes' | 'detectResources' | 'envDetector'
  >
  JsonTraceExporter: typeof import('@opentelemetry/exporter-trace-otlp-http').OTLPTraceExporter
  ProtoTraceExporter: typeof import('@opentelemetry/exporter-trace-otlp-proto').OTLPTraceExporter
  metrics: Pick<typeof import('@opentelemetry/sdk-metrics'), 'MeterProvider' | 'PeriodicExportingMetricReader'>
  JsonMetricExporter: typeof import('@opentelemetry/exporter-metrics-otlp-http').OTLPMetricExporter
  ProtoMetricExporter: typeof import('@opentelemetry/exporter-metrics-otlp-proto').OTLPMetricExporter
  prometheus: Pick<typeof import('@opentelemetry/exporter-prometheus'), 'PrometheusExporter' | 'PrometheusSerializer'>
}

/**
 * Loads OpenTelemetry on first use, only when tracing, metrics or `/metrics` are on. Built, it is a
 * gzipped file beside the bundle compiled only here, as the Anthropic SDK is, so a
 * start without tracing pays nothing for it.
 */
export const loadTelemetryDeps: () => Promise<TelemetryDeps> = lazyEmbedded('telemetry-deps', async () => {
  const [api, core, sdk, resources, json, proto, metrics, jsonMetrics, protoMetrics, prometheus] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/exporter-trace-otlp-proto'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/exporter-metrics-otlp-http'),
    import('@opentelemetry/exporter-metrics-otlp-proto'),
    import('@opentelemetry/exporter-prometheus'),
  ])
  return {
    api,
    core,
    sdk,
    resources,
    JsonTraceExporter: json.OTLPTraceExporter,
    ProtoTraceExporter: proto.OTLPTraceExporter,
    metrics,
    JsonMetricExporter: jsonMetrics.OTLPMetricExporter,
    ProtoMetricExporter: protoMetrics.OTLPMetricExporter,
    prometheus,
  }
})

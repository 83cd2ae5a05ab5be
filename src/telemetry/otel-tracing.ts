import type { Context, Span, Tracer } from '@opentelemetry/api'
import type { SpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace'
import type { TelemetryDeps } from './telemetry-deps.js'
import type { TracingSettings } from './settings.js'
import type { Carrier } from './trace-context.js'
import type { OperationListener, SpanAttributes, SpanHandle, Tracing } from './tracing.js'
import type { OperationMetrics } from './otel-metrics.js'
import type { Resource } from '@opentelemetry/resources'

/** How long shutdown may wait for the last export (a dead endpoint must not hold up an exit). */
const SHUTDOWN_BUDGET_MS = 3_000

/** An MCP operation being measured: its kind, start and the attributes its duration may keep. */
interface Measure {
  kind: 'server' | 'client'
  started: number
  attributes: SpanAttributes
}

/** How a carrier (`_meta`, headers) is read and written by the propagators. */
const getter = { get: (c: Carrier, k: string) => c[k as keyof Carrier], keys: (c: Carrier) => Object.keys(c) }
const setter = { set: (c: Carrier, k: string, v: string) => void (c[k as keyof Carrier] = v) }

/**
 * Tracing on the official OpenTelemetry JS packages: a TracerProvider of its
 * own (nothing global is registered), a batch processor (it never blocks a
 * call; a full queue drops spans), the OTLP/HTTP exporter in JSON or
 * protobuf, W3C trace context and baggage. An export that fails is said once
 * (`warn`), then spans are dropped quietly.
 *
 * With `metrics`, a SERVER or CLIENT span that carries `mcp.method.name`
 * records its duration when it ends (the MCP conventions' operation
 * durations), so every face that makes spans is measured. With metrics and
 * no `settings` (OTEL_TRACES_EXPORTER=none), spans are only measured: none
 * is made or exported, and no trace context is handed on.
 */
export function createOtelTracing(
  deps: TelemetryDeps,
  settings: TracingSettings | undefined,
  metrics: OperationMetrics | undefined,
  resource: Resource,
  options: { version: string; warn: (message: string) => void },
): Tracing {
  const { api, core } = deps
  const provider = settings ? tracerProvider(deps, settings, resource, options.warn) : undefined
  const tracer: Tracer | undefined = provider?.getTracer('mycelium', options.version)
  const propagator = new core.CompositePropagator({
    propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()],
  })
  const kinds = { server: api.SpanKind.SERVER, client: api.SpanKind.CLIENT, internal: api.SpanKind.INTERNAL }

  class Handle implements SpanHandle {
    constructor(
      readonly span: Span | undefined,
      readonly context: Context | undefined,
      private readonly measure: Measure | undefined,
    ) {}
    get traceId(): string {
      return this.span?.spanContext().traceId ?? ''
    }
    carrier(): Carrier {
      const out: Carrier = {}
      if (this.context) propagator.inject(this.context, out, setter)
      return out
    }
    set(attributes: SpanAttributes): void {
      this.span?.setAttributes(attributes)
      if (this.measure) this.measure.attributes = { ...this.measure.attributes, ...attributes }
    }
    event(name: string, attributes?: SpanAttributes): void {
      this.span?.addEvent(name, attributes)
    }
    end(error?: string, errorType?: string): void {
      if (this.measure) operationEnded(this.measure, errorType)
      if (!this.span) return
      if (errorType !== undefined) this.span.setAttribute('error.type', errorType)
      if (error !== undefined) this.span.setStatus({ code: api.SpanStatusCode.ERROR, message: error })
      this.span.end()
    }
  }

  const listeners = new Set<OperationListener>()
  const operationEnded = (measure: Measure, errorType: string | undefined) => {
    const seconds = (performance.now() - measure.started) / 1000
    const attributes = errorType === undefined ? measure.attributes : { ...measure.attributes, 'error.type': errorType }
    metrics?.record(measure.kind, seconds, attributes)
    for (const listener of listeners) listener(measure.kind, seconds, attributes)
  }

  return {
    propagates: tracer !== undefined,
    onOperation(listener) {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    start(name, kind, parent, attributes) {
      const measure =
        (metrics || listeners.size > 0) && kind !== 'internal' && attributes?.['mcp.method.name'] !== undefined
          ? { kind, started: performance.now(), attributes }
          : undefined
      if (!tracer) return new Handle(undefined, undefined, measure)
      const parentContext =
        parent instanceof Handle
          ? (parent.context ?? api.ROOT_CONTEXT)
          : parent
            ? propagator.extract(api.ROOT_CONTEXT, parent as Carrier, getter)
            : api.ROOT_CONTEXT
      const span = tracer.startSpan(name, { kind: kinds[kind], ...(attributes ? { attributes } : {}) }, parentContext)
      return new Handle(span, api.trace.setSpan(parentContext, span), measure)
    },
    observe: (sources) => metrics?.observe(sources) ?? (() => {}),
    shutdown: () => shutdownBoth(provider, metrics),
  }
}

/** The TracerProvider with its batch processor and the exporter that warns once. */
function tracerProvider(
  deps: TelemetryDeps,
  settings: TracingSettings,
  resource: Resource,
  warn: (message: string) => void,
) {
  const { core, sdk } = deps
  const Exporter = settings.protocol === 'http/json' ? deps.JsonTraceExporter : deps.ProtoTraceExporter
  const inner = new Exporter({
    url: settings.tracesUrl,
    headers: settings.headers,
    timeoutMillis: settings.exporterTimeoutMillis,
  }) as unknown as SpanExporter
  let warned = false
  const exporter: SpanExporter = {
    export(spans: ReadableSpan[], done) {
      inner.export(spans, (result) => {
        if (result.code !== core.ExportResultCode.SUCCESS && !warned) {
          warned = true
          warn(
            `tracing: cannot export spans to ${settings.tracesUrl} (${result.error?.message ?? 'failed'}); spans are dropped until it answers`,
          )
        }
        done(result)
      })
    },
    shutdown: () => inner.shutdown(),
    ...(inner.forceFlush ? { forceFlush: () => inner.forceFlush!() } : {}),
  }
  return new sdk.TracerProvider({
    resource,
    sampler: sampler(deps, settings),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter, ...settings.batch })],
  })
}

/** The resource both providers share: service.name and service.version, with OTEL_RESOURCE_ATTRIBUTES (service.name always the settings'). */
export function telemetryResource(deps: TelemetryDeps, serviceName: string, version: string): Resource {
  const { resources } = deps
  const detected = resources.detectResources({ detectors: [resources.envDetector] })
  return resources
    .resourceFromAttributes({ 'service.name': serviceName, 'service.version': version })
    .merge(detected)
    .merge(resources.resourceFromAttributes({ 'service.name': serviceName }))
}

/** OTEL_TRACES_SAMPLER and its argument, as the specification names them (default parentbased_always_on). */
function sampler(deps: TelemetryDeps, settings: TracingSettings) {
  const { sdk } = deps
  const ratio = () => new sdk.TraceIdRatioBasedSampler(settings.sampler.arg ?? 1)
  switch (settings.sampler.name) {
    case 'always_on':
      return new sdk.AlwaysOnSampler()
    case 'always_off':
      return new sdk.AlwaysOffSampler()
    case 'traceidratio':
      return ratio()
    case 'parentbased_always_off':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() })
    case 'parentbased_traceidratio':
      return new sdk.ParentBasedSampler({ root: ratio() })
    default:
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() })
  }
}

/** Traces and metrics flush together, within the one budget. */
async function shutdownBoth(
  provider: { shutdown(): Promise<void> } | undefined,
  metrics: OperationMetrics | undefined,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const flushed = Promise.all([provider?.shutdown().catch(() => {}), metrics?.shutdown().catch(() => {})])
  await Promise.race([
    flushed,
    new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_BUDGET_MS).unref())),
  ])
  clearTimeout(timer)
}

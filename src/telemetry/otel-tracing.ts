import type { Context, Span, Tracer } from '@opentelemetry/api'
import type { SpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace'
import type { TelemetryDeps } from './telemetry-deps.js'
import type { TracingSettings } from './settings.js'
import type { Carrier } from './trace-context.js'
import type { SpanAttributes, SpanHandle, Tracing } from './tracing.js'

/** How long shutdown may wait for the last export (a dead endpoint must not hold up an exit). */
const SHUTDOWN_BUDGET_MS = 3_000

/**
 * Tracing on the official OpenTelemetry JS packages: a TracerProvider of its
 * own (nothing global is registered), a batch processor (it never blocks a
 * call; a full queue drops spans), the OTLP/HTTP exporter in JSON or
 * protobuf, W3C trace context and baggage. An export that fails is said once
 * (`warn`), then spans are dropped quietly.
 */
export function createOtelTracing(deps: TelemetryDeps, settings: TracingSettings, options: { version: string; env: Record<string, string | undefined>; warn: (message: string) => void }): Tracing {
  const { api, core, sdk, resources } = deps
  const Exporter = settings.protocol === 'http/json' ? deps.JsonTraceExporter : deps.ProtoTraceExporter
  const inner = new Exporter({ url: settings.tracesUrl, headers: settings.headers }) as unknown as SpanExporter
  let warned = false
  const exporter: SpanExporter = {
    export(spans: ReadableSpan[], done) {
      inner.export(spans, (result) => {
        if (result.code !== core.ExportResultCode.SUCCESS && !warned) {
          warned = true
          options.warn(`tracing: cannot export spans to ${settings.tracesUrl} (${result.error?.message ?? 'failed'}); spans are dropped until it answers`)
        }
        done(result)
      })
    },
    shutdown: () => inner.shutdown(),
    ...(inner.forceFlush ? { forceFlush: () => inner.forceFlush!() } : {}),
  }
  const detected = resources.detectResources({ detectors: [resources.envDetector] })
  const resource = resources.resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': options.version }).merge(detected).merge(resources.resourceFromAttributes({ 'service.name': settings.serviceName }))
  const provider = new sdk.TracerProvider({ resource, sampler: sampler(deps, settings), spanProcessors: [new sdk.BatchSpanProcessor({ exporter, ...settings.batch })] })
  const tracer: Tracer = provider.getTracer('mycelium', options.version)
  const propagator = new core.CompositePropagator({ propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()] })
  const getter = { get: (c: Carrier, k: string) => c[k as keyof Carrier], keys: (c: Carrier) => Object.keys(c) }
  const setter = { set: (c: Carrier, k: string, v: string) => void (c[k as keyof Carrier] = v) }
  const kinds = { server: api.SpanKind.SERVER, client: api.SpanKind.CLIENT, internal: api.SpanKind.INTERNAL }

  class Handle implements SpanHandle {
    constructor(
      readonly span: Span,
      readonly context: Context,
    ) {}
    get traceId(): string {
      return this.span.spanContext().traceId
    }
    carrier(): Carrier {
      const out: Carrier = {}
      propagator.inject(this.context, out, setter)
      return out
    }
    set(attributes: SpanAttributes): void {
      this.span.setAttributes(attributes)
    }
    event(name: string, attributes?: SpanAttributes): void {
      this.span.addEvent(name, attributes)
    }
    end(error?: string): void {
      if (error !== undefined) this.span.setStatus({ code: api.SpanStatusCode.ERROR, message: error })
      this.span.end()
    }
  }

  return {
    start(name, kind, parent, attributes) {
      const parentContext = parent instanceof Handle ? parent.context : parent ? propagator.extract(api.ROOT_CONTEXT, parent as Carrier, getter) : api.ROOT_CONTEXT
      const span = tracer.startSpan(name, { kind: kinds[kind], ...(attributes ? { attributes } : {}) }, parentContext)
      return new Handle(span, api.trace.setSpan(parentContext, span))
    },
    async shutdown() {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([provider.shutdown().catch(() => {}), new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_BUDGET_MS).unref()))])
      clearTimeout(timer)
    },
  }
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

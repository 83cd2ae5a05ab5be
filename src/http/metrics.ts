// Loaded only by `myc serve --http` with `http.metrics` on (a dynamic import in
// serve-http.ts): OpenTelemetry is never evaluated for it over stdio or by other commands.
import type { ChildState } from '../children/child.js'
import { observeToolCalls, type ToolCallOutcome } from '../runtime/principal-tools.js'
import type { Runtime } from '../runtime/runtime.js'
import { observeProcess } from '../telemetry/process-metrics.js'
import { createPrometheusRegistry, PROMETHEUS_TEXT, type PrometheusRegistry } from '../telemetry/prometheus.js'
import { loadTelemetryDeps } from '../telemetry/telemetry-deps.js'
import { MCP_DURATION_BUCKETS } from '../telemetry/tracing.js'
import { scopeOf } from '../config/server-schema.js'

/** What the HTTP face needs of the metrics: the text of `GET /metrics`, and word of a rate-limited request. */
export interface MetricsEndpoint {
  readonly contentType: string
  text(): Promise<string>
  rateLimited(): void
}

export interface HttpMetrics extends MetricsEndpoint {
  /** Stops counting tool calls. */
  close(): void
}

export interface MetricsSources {
  runtime: Runtime
  /** The HTTP sessions this process holds now, the requests they have in flight, and the subscriptions/listen streams of 2026 clients open. */
  sessions(): { active: number; inFlight: number; listenStreams?: number }
  /** Process and Node.js metrics (`process_*`, `nodejs_*`) besides myc's own; default true. */
  processMetrics?: boolean
}

const CHILD_STATES: readonly ChildState[] = ['STOPPED', 'INITIALIZING', 'RUNNING', 'FAILED']

/** Tool calls take from under a millisecond (a local echo) to minutes (a build). */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]

/** The `kind` label of an error, by how a call ended (ok and cancelled calls are not errors). */
const ERROR_KIND: Partial<Record<ToolCallOutcome, string>> = {
  tool_error: 'tool',
  protocol_error: 'protocol',
  timeout: 'timeout',
  unavailable: 'unavailable',
}

/**
 * myc's metrics for `GET /metrics`, on the OpenTelemetry metrics API with
 * its Prometheus exporter (one registry per call, nothing global): tool
 * calls, errors and latency per server and tool through every face, calls
 * naming no visible tool, HTTP sessions, each child's state and restarts,
 * rate-limited requests, the MCP conventions' operation durations, and the
 * process. Labels come from the config and the catalogue only, never from
 * what a client sends (an unknown tool's name is not a label), so their
 * number stays bounded.
 */
export async function createMetrics(sources: MetricsSources): Promise<HttpMetrics> {
  const registry = createPrometheusRegistry(await loadTelemetryDeps())
  const stopProcess = (sources.processMetrics ?? true) ? observeProcess(registry) : undefined
  const stopCalls = countToolCalls(registry, sources.runtime)
  const rateLimited = registry.counter(
    'myc_http_rate_limited_total',
    'HTTP requests refused with 429 by http.rateLimit.',
  )
  rateLimited.add(0)
  observeSessions(registry, sources)
  observeChildren(registry, sources.runtime)
  const stopTiming = timeOperations(registry, sources.runtime)
  return {
    contentType: PROMETHEUS_TEXT,
    text: () => registry.text(),
    rateLimited: () => rateLimited.add(1),
    close: () => {
      stopCalls()
      stopTiming?.()
      stopProcess?.()
    },
  }
}

/** Tool calls, their errors by kind and their durations, and calls naming no tool the caller sees. */
function countToolCalls(registry: PrometheusRegistry, runtime: Runtime): () => void {
  const calls = registry.counter(
    'myc_tool_calls_total',
    'Tool calls that reached a tool, by server and tool (cancelled ones included).',
  )
  const errors = registry.counter(
    'myc_tool_call_errors_total',
    'Tool calls that failed, by server, tool and kind: tool (an isError result), protocol (a JSON-RPC error), timeout, unavailable (the server was not running or went away).',
  )
  const duration = registry.histogram(
    'myc_tool_call_duration_seconds',
    'How long tool calls took, by server and tool (cancelled ones left out).',
    DURATION_BUCKETS,
  )
  const unknown = registry.counter(
    'myc_tool_calls_unknown_total',
    'Tool calls naming no tool the caller sees (unknown or hidden).',
  )
  unknown.add(0)
  return observeToolCalls(runtime, {
    called({ server, tool, outcome, seconds }) {
      calls.add(1, { server, tool })
      const kind = ERROR_KIND[outcome]
      if (kind) errors.add(1, { server, tool, kind })
      if (outcome !== 'cancelled') duration.record(seconds, { server, tool })
    },
    unknown: () => unknown.add(1),
  })
}

/** The HTTP sessions held, their requests in flight, and the listen streams of 2026 clients. */
function observeSessions(registry: PrometheusRegistry, sources: MetricsSources): void {
  registry.gauge('myc_http_sessions_active', 'HTTP sessions this process holds.', (set) =>
    set(sources.sessions().active),
  )
  registry.gauge('myc_http_requests_in_flight', 'Requests of HTTP sessions being answered now.', (set) =>
    set(sources.sessions().inFlight),
  )
  registry.gauge(
    'myc_http_listen_streams_active',
    'subscriptions/listen streams of 2026-07-28 clients open now.',
    (set) => set(sources.sessions().listenStreams ?? 0),
  )
}

/** Each server's state (a server a reload removed leaves no series), its instances when scoped, and its restarts. */
function observeChildren(registry: PrometheusRegistry, runtime: Runtime): void {
  registry.gauge('myc_child_state', "Each server's state: 1 for the state it is in, 0 for the others.", (set) => {
    for (const child of runtime.supervisor.children.values())
      for (const state of CHILD_STATES) set(child.state === state ? 1 : 0, { server: child.key, state })
  })
  registry.gauge(
    'myc_child_instances',
    'Instances each scoped server runs now, one per person or session (docs/team.md), besides its own process.',
    (set) => {
      const { supervisor } = runtime
      for (const [server, count] of supervisor.instanceCounts()) {
        const child = supervisor.children.get(server)
        if (child) set(count, { server, scope: scopeOf(child.config) })
      }
    },
  )
  registry.observedCounter(
    'myc_child_restarts_total',
    'Restarts of each server after it failed or crashed, since myc started.',
    (set) => {
      const { supervisor } = runtime
      for (const server of new Set([...supervisor.children.keys(), ...supervisor.restarts.keys()]))
        set(supervisor.restarts.get(server) ?? 0, { server })
    },
  )
}

/** The MCP conventions' operation durations, named as OTLP's are in Prometheus (mcp.server.operation.duration → mcp_server_operation_duration_seconds). */
function timeOperations(registry: PrometheusRegistry, runtime: Runtime): (() => void) | undefined {
  const operations = {
    server: registry.histogram(
      'mcp_server_operation_duration_seconds',
      'MCP requests myc served, from receipt to answer, by method, tool and error type (the MCP semantic conventions).',
      MCP_DURATION_BUCKETS,
    ),
    client: registry.histogram(
      'mcp_client_operation_duration_seconds',
      'MCP requests myc sent its children, from sending to answer, by method, tool, server and error type.',
      MCP_DURATION_BUCKETS,
    ),
  }
  return runtime.tracing?.onOperation((kind, seconds, attributes) => {
    const tool = attributes['gen_ai.tool.name']
    const ownTool = `mycelium${runtime.loaded.config.namespace.separator}`
    // A tool's name is a label only once the call reached it (forwarded to its server, or one of myc's own): a name a caller made up, or one it does not see, is `_OTHER`.
    const reached = kind === 'client' || attributes['mycelium.server'] !== undefined || String(tool).startsWith(ownTool)
    const labels: Record<string, string> = {
      mcp_method_name: String(attributes['mcp.method.name']),
      gen_ai_tool_name: tool === undefined ? '' : reached ? String(tool) : '_OTHER',
      error_type: String(attributes['error.type'] ?? ''),
    }
    if (kind === 'client') labels.server_address = String(attributes['server.address'] ?? '')
    operations[kind].record(seconds, labels)
  })
}

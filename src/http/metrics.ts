// Loaded only by `myc serve --http` with `http.metrics` on (a dynamic import in
// serve-http.ts): prom-client is never evaluated over stdio or by other commands.
import { loadHttpDeps } from './http-deps.js'
import type { ChildState } from '../children/child.js'
import { observeToolCalls, type ToolCallOutcome } from '../runtime/principal-tools.js'
import type { Runtime } from '../runtime/runtime.js'
import { MCP_DURATION_BUCKETS } from '../telemetry/tracing.js'
import { scopeOf } from '../config/schema.js'

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
 * myc's metrics in a registry of their own (not prom-client's global one):
 * tool calls, errors and latency per server and tool through every face,
 * calls naming no visible tool, HTTP sessions, each child's state and
 * restarts, and rate-limited requests. Labels come from the config and the
 * catalogue only, never from what a client sends (an unknown tool's name is
 * not a label), so their number stays bounded.
 */
export async function createMetrics(sources: MetricsSources): Promise<HttpMetrics> {
  const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = (await loadHttpDeps()).promClient
  const { runtime } = sources
  const registry = new Registry()
  if (sources.processMetrics ?? true) collectDefaultMetrics({ register: registry })
  const registers = [registry]

  const calls = new Counter({
    name: 'myc_tool_calls_total',
    help: 'Tool calls that reached a tool, by server and tool (cancelled ones included).',
    labelNames: ['server', 'tool'] as const,
    registers,
  })
  const errors = new Counter({
    name: 'myc_tool_call_errors_total',
    help: 'Tool calls that failed, by server, tool and kind: tool (an isError result), protocol (a JSON-RPC error), timeout, unavailable (the server was not running or went away).',
    labelNames: ['server', 'tool', 'kind'] as const,
    registers,
  })
  const duration = new Histogram({
    name: 'myc_tool_call_duration_seconds',
    help: 'How long tool calls took, by server and tool (cancelled ones left out).',
    labelNames: ['server', 'tool'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  })
  const unknown = new Counter({
    name: 'myc_tool_calls_unknown_total',
    help: 'Tool calls naming no tool the caller sees (unknown or hidden).',
    registers,
  })
  const rateLimited = new Counter({
    name: 'myc_http_rate_limited_total',
    help: 'HTTP requests refused with 429 by http.rateLimit.',
    registers,
  })

  new Gauge({
    name: 'myc_http_sessions_active',
    help: 'HTTP sessions this process holds.',
    registers,
    collect() {
      this.set(sources.sessions().active)
    },
  })
  new Gauge({
    name: 'myc_http_requests_in_flight',
    help: 'Requests of HTTP sessions being answered now.',
    registers,
    collect() {
      this.set(sources.sessions().inFlight)
    },
  })
  new Gauge({
    name: 'myc_http_listen_streams_active',
    help: 'subscriptions/listen streams of 2026-07-28 clients open now.',
    registers,
    collect() {
      this.set(sources.sessions().listenStreams ?? 0)
    },
  })
  new Gauge({
    name: 'myc_child_state',
    help: "Each server's state: 1 for the state it is in, 0 for the others.",
    labelNames: ['server', 'state'] as const,
    registers,
    collect() {
      // Reset first: a server a reload removed leaves no stale series.
      this.reset()
      for (const child of runtime.supervisor.children.values())
        for (const state of CHILD_STATES) this.set({ server: child.key, state }, child.state === state ? 1 : 0)
    },
  })
  new Gauge({
    name: 'myc_child_instances',
    help: 'Instances each scoped server runs now, one per person or session (docs/team.md), besides its own process.',
    labelNames: ['server', 'scope'] as const,
    registers,
    collect() {
      this.reset()
      const { supervisor } = runtime
      for (const [server, count] of supervisor.instanceCounts()) {
        const child = supervisor.children.get(server)
        if (child) this.set({ server, scope: scopeOf(child.config) }, count)
      }
    },
  })
  new Counter({
    name: 'myc_child_restarts_total',
    help: 'Restarts of each server after it failed or crashed, since myc started.',
    labelNames: ['server'] as const,
    registers,
    collect() {
      const { supervisor } = runtime
      this.reset()
      for (const server of new Set([...supervisor.children.keys(), ...supervisor.restarts.keys()]))
        this.inc({ server }, supervisor.restarts.get(server) ?? 0)
    },
  })

  // The MCP conventions' operation durations, as OTLP exports them (mcp.server.operation.duration → mcp_server_operation_duration_seconds).
  const operationLabels = ['mcp_method_name', 'gen_ai_tool_name', 'error_type'] as const
  const operations = {
    server: new Histogram({
      name: 'mcp_server_operation_duration_seconds',
      help: 'MCP requests myc served, from receipt to answer, by method, tool and error type (the MCP semantic conventions).',
      labelNames: operationLabels,
      buckets: MCP_DURATION_BUCKETS,
      registers,
    }),
    client: new Histogram({
      name: 'mcp_client_operation_duration_seconds',
      help: 'MCP requests myc sent its children, from sending to answer, by method, tool, server and error type.',
      labelNames: [...operationLabels, 'server_address'] as const,
      buckets: MCP_DURATION_BUCKETS,
      registers,
    }),
  }
  const stopTiming = runtime.tracing?.onOperation((kind, seconds, attributes) => {
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
    operations[kind].observe(labels, seconds)
  })

  const stopObserving = observeToolCalls(runtime, {
    called({ server, tool, outcome, seconds }) {
      calls.inc({ server, tool })
      const kind = ERROR_KIND[outcome]
      if (kind) errors.inc({ server, tool, kind })
      if (outcome !== 'cancelled') duration.observe({ server, tool }, seconds)
    },
    unknown: () => unknown.inc(),
  })

  return {
    contentType: registry.contentType,
    text: () => registry.metrics(),
    rateLimited: () => rateLimited.inc(),
    close: () => {
      stopObserving()
      stopTiming?.()
    },
  }
}

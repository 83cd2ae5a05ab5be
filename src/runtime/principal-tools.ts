import { randomUUID } from 'node:crypto'
import type { CallToolResult, Tool } from '@modelcontextprotocol/client'
import type { PrincipalView } from '../principal/view.js'
import { RelayErrorCode, relayCause, type RelayOutcome } from '../protocol/request-relay.js'
import { mycCodeOf } from '../errors.js'
import type { Runtime } from './runtime.js'
import type { InnerCall, ToolCallContext } from './call-context.js'
import { runCode } from './code-calls.js'
import type { SpanHandle, Tracing } from '../telemetry/tracing.js'
import { callerAttributes, endSpan, forwardTraced, instanceAttributes, serverSpan } from './request-spans.js'
import type { ChildConnection } from '../children/child.js'
import { scopeOf } from '../config/server-schema.js'
import type { InstanceInfo } from '../children/instances.js'
import type { AuditInstance } from '../audit.js'
import { LOCAL_PRINCIPAL } from '../oauth/token-store.js'
import { RpcCode } from '../protocol/facts.js'
import type { ToolEntry } from '../registry/catalogue.js'
import { childForCaller, loginHint, ownConnections, type Reached } from './caller-child.js'
import { describeDown, downOutcome } from './child-unavailable.js'

/** JSON-RPC code for an unknown tool, prompt or resource (MCP: invalid params). */

/**
 * The answer for a tool that does not exist, and so also for one that is
 * hidden: every face (the MCP server, the agent) goes through this one
 * function, so the answers cannot differ.
 */
export function unknownTool(name: unknown): RelayOutcome {
  return {
    ok: false,
    error: {
      code: RpcCode.invalidParams,
      message: `Unknown tool: ${typeof name === 'string' ? name : JSON.stringify(name)}`,
    },
  }
}

/** One tool a principal sees: its wire name, canonical id and the definition as a client gets it. */
export interface VisibleTool {
  wireName: string
  id: string
  def: Tool
}

/** The tools a principal sees now, in the order a client lists them: built-ins first, then the children's in config order. */
export function visibleTools(runtime: Runtime, view: PrincipalView): VisibleTool[] {
  const separator = runtime.loaded.config.namespace.separator
  const builtins = view.builtinTools().map((def) => ({
    wireName: def.name,
    id: `mycelium:${def.name.startsWith(`mycelium${separator}`) ? def.name.slice(`mycelium${separator}`.length) : def.name}`,
    def,
  }))
  if (view.listsChildTools === false) return builtins
  const children = runtime.catalogue
    .tools()
    .filter((e) => view.toolVisible(e))
    .map((e) => ({ wireName: e.wireName, id: e.id, def: e.wire }))
  return [...builtins, ...children]
}

/** Lists already made for a view, until its principal or the catalogue changes (a 2026 credential's view outlives requests; a 2025 session's, its connection). */
const toolLists = new WeakMap<PrincipalView, { revision: unknown; catalogue: number; tools: readonly unknown[] }>()

/** The wire tool definitions a principal sees, as every face lists them: made once per principal revision and catalogue revision. */
export function listedTools(runtime: Runtime, view: PrincipalView): readonly unknown[] {
  const revision = view.revision?.()
  const catalogue = runtime.catalogue.revision.tools
  const cached = toolLists.get(view)
  if (cached && cached.revision === revision && cached.catalogue === catalogue) return cached.tools
  const tools = visibleTools(runtime, view).map((t) => t.def)
  toolLists.set(view, { revision, catalogue, tools })
  return tools
}

/** How one tools/call ended, for whoever counts them (metrics). */
export type ToolCallOutcome = 'ok' | 'tool_error' | 'protocol_error' | 'timeout' | 'unavailable' | 'cancelled'

/** One tools/call that reached a tool: the server (`mycelium` for a built-in), the tool's own name, how it ended and how long it took. */
interface ToolCallRecord {
  server: string
  tool: string
  outcome: ToolCallOutcome
  seconds: number
}

/** Who hears of every tools/call a runtime decides: a record per call that reached a tool, `unknown` per call naming none the principal sees. */
export interface ToolCallObserver {
  called(record: ToolCallRecord): void
  unknown(): void
}

/** The observers of each runtime (kept beside it, not in it: most runs have none). */
const observers = new WeakMap<Runtime, Set<ToolCallObserver>>()

/**
 * Makes `observer` hear of every tools/call decided for `runtime`, through
 * every face (stdio, HTTP, the agent): they all call callVisibleTool.
 * Returns the function that stops it.
 */
export function observeToolCalls(runtime: Runtime, observer: ToolCallObserver): () => void {
  let set = observers.get(runtime)
  if (!set) observers.set(runtime, (set = new Set()))
  set.add(observer)
  return () => void set.delete(observer)
}

function outcomeOf(outcome: RelayOutcome | undefined): ToolCallOutcome {
  if (!outcome) return 'cancelled'
  if (outcome.ok) return (outcome.result as { isError?: boolean }).isError ? 'tool_error' : 'ok'
  if (outcome.error.code === RelayErrorCode.connectionClosed) return 'unavailable'
  if (outcome.error.code === RelayErrorCode.timeout) return 'timeout'
  if (outcome.error.code === RelayErrorCode.cancelled) return 'cancelled'
  return 'protocol_error'
}

export type { ToolCallContext } from './call-context.js'

/**
 * How a tools/call was answered: the outcome, the server that answered (none
 * for a built-in or an unknown tool), and `down` when its server was not
 * running or went away during the call (a failure of the server, not of the
 * call: an agent run with one does not end ok).
 */
export interface CalledTool {
  outcome: RelayOutcome
  server?: string
  /** The connection that answered (a scoped server's: the caller's instance), where a child did. */
  child?: ChildConnection
  down?: true
}

/**
 * Calls a tool by wire name as the principal: a visible built-in, else a
 * visible child tool (its own name restored, the rest of `params` as sent),
 * else the answer of a tool that does not exist. The audit log hears of each
 * call. A child that is down is a failed call the caller can read, not a
 * protocol error. Resolves undefined when cancelled.
 */
export function callVisibleTool(
  runtime: Runtime,
  view: PrincipalView,
  params: Record<string, unknown>,
  ctx: ToolCallContext,
): Promise<CalledTool | undefined> {
  const tracing = runtime.tracing
  if (tracing !== undefined) return tracedCall(tracing, runtime, view, params, ctx)
  // Tracing off: not one more step on the hot path. `call` is no async function (see there), so what it throws is a rejection here, as before.
  try {
    return call(runtime, view, params, ctx, undefined)
  } catch (error) {
    return Promise.reject(error)
  }
}

/**
 * A tools/call as an OpenTelemetry SERVER span (`tools/call <name as the
 * caller sent it>`, the MCP semantic conventions' name), child of the
 * caller's `_meta.traceparent`. A hidden tool is recorded exactly as one
 * that does not exist: the caller's name, no server, the same error.
 */
async function tracedCall(
  tracing: Tracing,
  runtime: Runtime,
  view: PrincipalView,
  params: Record<string, unknown>,
  ctx: ToolCallContext,
): Promise<CalledTool | undefined> {
  const name = typeof params.name === 'string' ? params.name : ''
  const span = serverSpan(tracing, 'tools/call', name, params, {
    'gen_ai.tool.name': name,
    'gen_ai.operation.name': 'execute_tool',
    ...callerAttributes(view, ctx),
  })
  try {
    const called = await call(runtime, view, params, ctx, span)
    endSpan(span, called?.outcome)
    return called
  } catch (error) {
    span.end(error instanceof Error ? error.message : String(error), '_OTHER')
    throw error
  }
}

/** One call on its way, as the audit log and the observers hear of it. */
interface CallRecord {
  name: string
  args: Record<string, unknown>
  /** When it began (0 when nothing measures it: no audit log, no observer). */
  started: number
  observed: Set<ToolCallObserver> | undefined
  /** Whether the view keeps an audit log (policy mode). */
  audited: boolean
  runId?: string | undefined
}

/**
 * One call, on every relayed tools/call: a plain function returning the
 * promise of the step that answers (a built-in's, or the child's), not an
 * async one, so a call to a child costs no async frame of its own and no
 * extra turns of the microtask queue to hand its answer up. It may throw:
 * callers turn that into a rejection.
 */
function call(
  runtime: Runtime,
  view: PrincipalView,
  params: Record<string, unknown>,
  ctx: ToolCallContext,
  span: SpanHandle | undefined,
): Promise<CalledTool | undefined> {
  const name = params.name
  const watching = observers.get(runtime)
  const observed = watching !== undefined && watching.size > 0 ? watching : undefined
  if (typeof name !== 'string') {
    observed?.forEach((o) => o.unknown())
    return Promise.resolve({ outcome: unknownTool(name) })
  }
  const args = (params.arguments ?? {}) as Record<string, unknown>
  // Lazy open mode's call_tool: the call it stands for goes the same way as one sent directly.
  const unwrapped = view.unwrapCall?.(name, args)
  if (unwrapped)
    return 'error' in unwrapped
      ? Promise.resolve({
          outcome: { ok: true, result: { content: [{ type: 'text', text: unwrapped.error }], isError: true } },
        })
      : call(runtime, view, { ...params, name: unwrapped.name, arguments: unwrapped.arguments }, ctx, span)
  // The audit log, where the view keeps one (policy mode), and the observers: nothing is measured without either (every relayed call passes here, so no closures either).
  const audited = view.recordCall !== undefined
  const started = audited || observed ? performance.now() : 0
  const rec: CallRecord = { name, args, started, observed, audited }
  // Code mode's run_code runs here, on the call path: each of its inner calls comes back through it (code-calls.ts).
  const code = view.codeMode
  const runId = code !== undefined && name === code.wireName ? randomUUID() : undefined
  const builtin =
    runId !== undefined
      ? runCode({
          runtime,
          view,
          code: code!,
          args,
          ctx,
          span,
          runId,
          call: ctx.innerCall ?? innerCallOf(runtime, view),
        })
      : view.callBuiltin(name, args, ctx.builtin)
  if (builtin)
    return builtin.then((result) => builtinAnswer(runtime, view, ctx, { ...rec, runId: runId ?? ctx.runId }, result))
  return callChildTool(runtime, view, params, ctx, span, rec)
}

/** A built-in's answer, audited (with its run_code run, if any) and told to the observers as the server `mycelium`'s. */
function builtinAnswer(
  runtime: Runtime,
  view: PrincipalView,
  ctx: ToolCallContext,
  rec: CallRecord,
  result: CallToolResult,
): CalledTool {
  const { name, args, started, observed } = rec
  if (rec.audited) record(view, name, args, started, result.isError ? 'error' : 'ok', rec.runId)
  if (observed) {
    const separator = runtime.loaded.config.namespace.separator
    observe(
      observed,
      started,
      'mycelium',
      name.startsWith(`mycelium${separator}`) ? name.slice(`mycelium${separator}`.length) : name,
      ctx.cancellation.aborted ? undefined : { ok: true, result: result as Record<string, unknown> },
    )
  }
  return { outcome: { ok: true, result: result as Record<string, unknown> } }
}

/**
 * A child's tool, if the principal sees it: forwarded on the connection the
 * caller reaches (the shared one, or its own), and the answer audited and
 * observed; a hidden or unknown name answers as a tool that does not exist.
 * No async frame: the answer is handed on in one promise reaction.
 */
function callChildTool(
  runtime: Runtime,
  view: PrincipalView,
  params: Record<string, unknown>,
  ctx: ToolCallContext,
  span: SpanHandle | undefined,
  rec: CallRecord,
): Promise<CalledTool | undefined> {
  const entry = runtime.catalogue.toolByWire(rec.name)
  const shared = entry && view.toolVisible(entry) ? runtime.supervisor.children.get(entry.server) : undefined
  if (!entry || !shared) return Promise.resolve(notReached(runtime, view, entry, { ...rec, runId: ctx.runId }))
  // A server logged in per person, or scoped: the caller's own connection, or why there is none.
  // No owner nor session (stdio, the agent), or a plain server: the shared connection, with no extra step on the hot path.
  const viaShared = (ctx.owner === undefined && ctx.sessionId === undefined) || !ownConnections(shared.config)
  if (!viaShared) {
    const own: OwnCall = { runtime, view, params, ctx, span, rec, entry, shared }
    return childForCaller(runtime, entry.server, ctx).then((reached) => reachedChild(own, reached))
  }
  if (shared.state !== 'RUNNING') return Promise.resolve(serverDown(runtime, view, entry, { ...rec, runId: ctx.runId }))
  return forwardCall(runtime, shared, entry, params, ctx, span).then((outcome) =>
    childAnswer(runtime, view, ctx, rec, entry, shared, undefined, outcome),
  )
}

/** A call to a per-person or scoped server, while the caller's own connection to it is found. */
interface OwnCall {
  runtime: Runtime
  view: PrincipalView
  params: Record<string, unknown>
  ctx: ToolCallContext
  span: SpanHandle | undefined
  rec: CallRecord
  entry: ToolEntry
  shared: ChildConnection
}

/** The caller's own connection to a per-person or scoped server, once found: the call forwarded on it, or why there is none. */
function reachedChild(own: OwnCall, reached: Reached): CalledTool | Promise<CalledTool | undefined> {
  const { runtime, view, params, ctx, span, rec, entry, shared } = own
  if ('outcome' in reached) {
    if (rec.audited) record(view, rec.name, rec.args, rec.started, 'error', ctx.runId)
    return { outcome: reached.outcome, server: entry.server }
  }
  const { child, instance } = reached
  if (instance) span?.set(instanceAttributes(instance, child))
  return forwardCall(runtime, child, entry, params, ctx, span).then((outcome) => {
    // The person's login went away (logged out, refused on refresh): the way to log in again, as before the first.
    if (child !== shared && !outcome.ok && mycCodeOf(outcome.error[relayCause]) === 'needs_login')
      outcome = loginHint(entry.server, ctx.owner!)
    return childAnswer(runtime, view, ctx, rec, entry, child, instance, outcome)
  })
}

/** A child's answer to a forwarded call, told to the caller's `answered`, the observers and the audit log. */
function childAnswer(
  runtime: Runtime,
  view: PrincipalView,
  ctx: ToolCallContext,
  rec: CallRecord,
  entry: ToolEntry,
  child: ChildConnection,
  instance: InstanceInfo | undefined,
  outcome: RelayOutcome,
): CalledTool | undefined {
  const { name, args, started, observed } = rec
  if (outcome.ok) ctx.answered?.(child, outcome.result)
  if (observed) observe(observed, started, entry.server, entry.name, ctx.cancellation.aborted ? undefined : outcome)
  if (ctx.cancellation.aborted) return undefined
  if (rec.audited)
    record(
      view,
      name,
      args,
      started,
      outcome.ok && !(outcome.result as { isError?: boolean }).isError ? 'ok' : 'error',
      ctx.runId,
      servedBy(child, instance),
    )
  if (!outcome.ok && outcome.error.code === RelayErrorCode.connectionClosed)
    return {
      outcome: { ok: true, result: { content: [{ type: 'text', text: outcome.error.message }], isError: true } },
      server: entry.server,
      down: true,
    }
  return { outcome, server: entry.server, child }
}

/**
 * A name the principal does not reach now: a tool it would see whose server
 * is down (told so, retryable), else the answer of a tool that does not
 * exist (audited as denied).
 */
function notReached(runtime: Runtime, view: PrincipalView, entry: ToolEntry | undefined, rec: CallRecord): CalledTool {
  const known = entry ? undefined : runtime.catalogue.lastKnownTool(rec.name)
  if (known && view.toolVisible(known) && runtime.supervisor.children.has(known.server))
    return serverDown(runtime, view, known, rec)
  if (rec.audited) record(view, rec.name, rec.args, rec.started, 'denied', rec.runId)
  rec.observed?.forEach((o) => o.unknown())
  return { outcome: unknownTool(rec.name) }
}

/** The call sent to the child that serves it, under its own name (as a CLIENT span while tracing). */
function forwardCall(
  runtime: Runtime,
  child: ChildConnection,
  entry: ToolEntry,
  params: Record<string, unknown>,
  ctx: ToolCallContext,
  span: SpanHandle | undefined,
): Promise<RelayOutcome> {
  if (!span) return child.forward('tools/call', { ...params, name: entry.name }, ctx)
  return forwardTraced(
    span,
    runtime.tracing!,
    child,
    {
      server: entry.server,
      method: 'tools/call',
      target: entry.name,
      params: { ...params, name: entry.name },
      attributes: { 'gen_ai.tool.name': entry.name },
    },
    ctx,
  )
}

/**
 * The answer to a call of a visible tool whose server is not running
 * (starting, restarting, failed): a tool error naming the server, its state
 * and when it starts again; nothing is sent. Audited as an error, observed
 * as `unavailable`.
 */
function serverDown(runtime: Runtime, view: PrincipalView, entry: ToolEntry, call: CallRecord): CalledTool {
  const outcome = downOutcome(describeDown(runtime.supervisor, entry.server))
  if (view.recordCall !== undefined) record(view, call.name, call.args, call.started, 'error', call.runId)
  if (call.observed) observe(call.observed, call.started, entry.server, entry.name, outcome, 'unavailable')
  return { outcome, server: entry.server, down: true }
}

/** One call into the view's audit log (with the run_code run it belongs to, if any). */
function record(
  view: PrincipalView,
  name: string,
  args: Record<string, unknown>,
  started: number,
  outcome: 'ok' | 'error' | 'denied',
  runId: string | undefined,
  instance?: AuditInstance,
): void {
  view.recordCall?.({
    name,
    outcome,
    durationMs: Math.round(performance.now() - started),
    argumentKeys: Object.keys(args),
    ...(runId !== undefined ? { runId } : {}),
    ...(instance ? { instance } : {}),
  })
}

/** The instance that served a call, for the audit log: a scoped server's (its own process is the local person's), else none. */
function servedBy(child: ChildConnection, instance: InstanceInfo | undefined): AuditInstance | undefined {
  const scope = scopeOf(child.config)
  if (scope === 'shared') return undefined
  const info: Omit<InstanceInfo, 'server'> = instance ?? { scope, person: LOCAL_PRINCIPAL }
  return {
    scope: info.scope,
    principal: info.person,
    ...(info.session !== undefined ? { session: info.session } : {}),
    ...(child.pid !== undefined ? { pid: child.pid } : {}),
  }
}

/** A session's own inner calls: through callVisibleTool, with the same view, at the moment of each call. */
function innerCallOf(runtime: Runtime, view: PrincipalView): InnerCall {
  return (params, ctx) => callVisibleTool(runtime, view, params, ctx)
}

/** One call that reached a tool, told to the observers. */
function observe(
  observed: Set<ToolCallObserver>,
  started: number,
  server: string,
  tool: string,
  outcome: RelayOutcome | undefined,
  as?: ToolCallOutcome,
): void {
  const call: ToolCallRecord = {
    server,
    tool,
    outcome: as ?? outcomeOf(outcome),
    seconds: (performance.now() - started) / 1000,
  }
  observed.forEach((o) => o.called(call))
}

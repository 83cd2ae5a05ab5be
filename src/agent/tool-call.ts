import type { CallToolResult, Tool } from '@modelcontextprotocol/client'
import type { CodeModeHandle, PrincipalView } from '../principal/view.js'
import type { Cancellation } from '../protocol/cancellation.js'
import { BUILTIN_SERVER } from '../policy/policy.js'
import { RpcCode } from '../protocol/facts.js'
import type { RelayOutcome, WireError } from '../protocol/request-relay.js'
import type { InnerCall } from '../runtime/call-context.js'
import { toolTable } from '../runtime/code-calls.js'
import { callVisibleTool, visibleTools } from '../runtime/principal-tools.js'
import type { Runtime } from '../runtime/runtime.js'
import { AgentCall, type ChildAnswers } from './child-questions.js'

/*
 * The one door of every tool call an agent makes (run, workflow, adhoc,
 * chat, workers; a direct call, a `call_tool`, whatever comes later): each
 * is decided when it is made, by the tool it reaches at that moment, never
 * by a list drawn up earlier. `scripts/check-tool-calls.mjs` holds that no
 * other file of the agent reaches a tool around it.
 */

/** One tool an agent can reach now. */
export interface OfferedTool {
  /** The name on the wire (what a client of `myc serve` sees). */
  wireName: string
  /** The canonical id, `server:tool`. */
  id: string
  def: Tool
}

/**
 * How a call that was sent ended: the tool's result, or the error a client of
 * `myc serve` would get. `down` names the server when it was not running or
 * went away during the call (a failure of the server, not of the call).
 */
export type ToolOutcome = { ok: true; result: CallToolResult; down?: string } | { ok: false; error: WireError }

/** One tool call as it is made: by the model, a worker's model, or (later) a script. */
export interface ToolCall {
  wireName: string
  args: Record<string, unknown>
  callId: string
  cancellation: Cancellation
  /**
   * Called once the call may run, just before it is sent; returns its
   * `_meta` (trace context). The engine starts the call's span and clock
   * here: a refused call has neither, and a person's time is not the tool's.
   */
  sending?: () => Record<string, unknown> | undefined
  /** The run_code run this call is made in (an inner call): the audit log's `runId`, and no run inside a run. */
  runId?: string
  /**
   * A run_code call: how its caller sees each inner call the door makes for
   * it (the engine's events, span and denials). `send` makes the call,
   * through the door; without it each is made as it comes.
   */
  watchInner?: (call: ToolCall, send: (call: ToolCall) => Promise<DoorOutcome>) => Promise<DoorOutcome>
}

/** One call the code of a run_code call makes, as the door takes it back (src/runtime/code-calls.ts hands it over). */
interface InnerToolCall {
  wireName: string
  args: Record<string, unknown>
  cancellation: Cancellation
  runId: string
  /** Its trace context (the run's span), for the inner call's own. */
  meta?: Record<string, unknown> | undefined
}

/** How a source makes the inner calls of a run_code call: back through the door, each decided when it is made. */
export type InnerCalls = (call: InnerToolCall) => Promise<ToolOutcome>

/**
 * What a call by one name reaches at this moment: the tool named, and the
 * tool whose approval decides the call, with the arguments it gets (for
 * `call_tool`, the tool it calls). No target: nothing would run (a
 * `call_tool` with bad arguments, or naming a tool that does not exist).
 */
export interface Reached {
  tool: OfferedTool
  target?: { tool: OfferedTool; input: Record<string, unknown> }
}

/**
 * Where an agent's tools come from: a principal's view ({@link viewSource}),
 * a workflow's own tools, the workers' delegate. `ungated` runs a call with
 * no approval and runs at most `target` (nothing when it is undefined): only
 * {@link ToolDoor} calls it. A run_code call's code calls tools only through
 * `inner`, which takes each call back through the door.
 */
export interface ToolSource {
  list(): readonly OfferedTool[]
  /** The ids of every tool a call may reach now, listed or not, when more than `list` (code mode: what the code sees). */
  callable?(): readonly string[]
  /** The tool a call by this name reaches now, listed or not; undefined when this source has none by that name. */
  reach(wireName: string, args: Record<string, unknown>): Reached | undefined
  ungated(
    call: ToolCall,
    target: OfferedTool | undefined,
    meta: Record<string, unknown> | undefined,
    inner: InnerCalls,
  ): Promise<ToolOutcome>
}

/** The approval policy of a run: the tool's risk, the threshold, the answers so far (ApprovalGate, approvals.ts). */
export interface CallApprovals {
  check(
    callId: string,
    tool: OfferedTool,
    input: Record<string, unknown>,
  ): Promise<{ allow: true } | { allow: false; reason: string }>
}

/** A call refused before it was sent (the reason, for the model), or sent and how it ended. */
export type DoorOutcome = { sent: false; reason: string } | { sent: true; outcome: ToolOutcome }

/**
 * The agent's tools and the one way to call them. `call` resolves the
 * target from the sources as they are at that moment, decides it by
 * `approvals` (none: every call may run, as in `myc run`), and only then
 * sends it, to exactly the tool decided on. It knows nothing of turns, so a
 * script's inner calls can come through it as the model's do.
 */
export class ToolDoor {
  readonly #sources: readonly ToolSource[]
  readonly #approvals: CallApprovals | undefined

  /** The first source answers a name that none of them has (the view: the answer of a tool that does not exist). */
  constructor(sources: readonly [ToolSource, ...ToolSource[]], approvals?: CallApprovals) {
    this.#sources = sources
    this.#approvals = approvals
  }

  /** The tools to offer now. */
  list(): OfferedTool[] {
    return this.#sources.flatMap((s) => s.list())
  }

  /** The ids of every tool a call may reach now, listed or not (in code mode, what the code sees too): what a skill adds or removes. */
  callable(): Set<string> {
    return new Set(this.#sources.flatMap((s) => s.callable?.() ?? s.list().map((t) => t.id)))
  }

  /** The tool a name stands for now (for labels and events), listed or not. */
  named(wireName: string): OfferedTool | undefined {
    return this.#reach(wireName, {}).reached?.tool
  }

  call(call: ToolCall): Promise<DoorOutcome> {
    return this.#call(call, this.#sources)
  }

  async #call(call: ToolCall, sources: readonly ToolSource[]): Promise<DoorOutcome> {
    const { source, reached } = this.#reach(call.wireName, call.args, sources)
    const target = reached?.target
    if (target && this.#approvals) {
      const decision = await this.#approvals.check(call.callId, target.tool, target.input)
      if (!decision.allow) return { sent: false, reason: decision.reason }
    }
    const outcome = await source.ungated(call, target?.tool, call.sending?.(), this.#inner(call, source))
    return { sent: true, outcome }
  }

  /**
   * The inner calls of `outer` when it is a run_code call: each comes back
   * here as a call of its own (`<outer id>.<n>`), decided by the approvals
   * when it is made, exactly as the model's calls are, and reaches only the
   * tools of `source`, the one the code sees. A refused one is a tool error
   * with the reason, which the code gets as an Error.
   */
  #inner(outer: ToolCall, source: ToolSource): InnerCalls {
    let made = 0
    const watch = outer.watchInner ?? ((call, send) => send(call))
    return async (inner) => {
      const call: ToolCall = {
        wireName: inner.wireName,
        args: inner.args,
        callId: `${outer.callId}.${++made}`,
        cancellation: inner.cancellation,
        runId: inner.runId,
        sending: () => inner.meta,
      }
      const done = await watch(call, (c) => this.#call(c, [source]))
      return done.sent
        ? done.outcome
        : { ok: true, result: { content: [{ type: 'text', text: done.reason }], isError: true } }
    }
  }

  #reach(
    wireName: string,
    args: Record<string, unknown>,
    sources = this.#sources,
  ): { source: ToolSource; reached?: Reached } {
    for (const source of sources) {
      const reached = source.reach(wireName, args)
      if (reached) return { source, reached }
    }
    return { source: sources[0]! }
  }
}

/**
 * A principal's tools as `myc serve` lists them, called through the very
 * same path (runtime/principal-tools.ts: built-ins first, then the
 * catalogue, hidden and unknown tools answered alike, the audit log told of
 * each call). With `answers`, each call is a connection of the runtime while
 * it runs, so what a child asks during it is answered by the agent
 * (child-questions.ts).
 */
export function viewSource(runtime: Runtime, view: PrincipalView, answers?: ChildAnswers): ToolSource {
  let calls = 0
  const code = view.codeMode
  return {
    list: () => visibleTools(runtime, view),
    ...(code ? { callable: () => codeCallable(runtime, view, code) } : {}),
    reach: (wireName, args) => reachInView(runtime, view, wireName, args),
    async ungated(call, target, meta, inner) {
      const asker = answers ? new AgentCall(view, answers, call.callId || `call-${++calls}`) : undefined
      if (asker) runtime.addConnection(asker)
      // run_code runs on the view's call path with the whole view (its code sees what the view shows), and its code calls nothing but through `inner`.
      const runsCode = code !== undefined && target?.wireName === code.wireName && call.wireName === code.wireName
      try {
        const called = await callVisibleTool(
          runtime,
          runsCode ? view : onlyTool(view, target?.wireName),
          { name: call.wireName, arguments: call.args, ...(meta ? { _meta: meta } : {}) },
          {
            cancellation: call.cancellation,
            builtin: () => ({ signal: call.cancellation.signal }),
            ...(call.runId !== undefined ? { runId: call.runId } : {}),
            ...(runsCode ? { innerCall: innerThroughDoor(inner) } : {}),
            ...(asker
              ? {
                  caller: asker.origin,
                  callerEra: { era: 'legacy' as const, clientCapabilities: asker.clientCapabilities },
                }
              : {}),
          },
        )
        if (!called) return { ok: false, error: { code: RpcCode.requestCancelled, message: 'Request cancelled' } }
        const { outcome } = called
        if (!outcome.ok) return outcome
        const result = outcome.result as unknown as CallToolResult
        return called.down && called.server !== undefined
          ? { ok: true, result, down: called.server }
          : { ok: true, result }
      } finally {
        if (asker) runtime.removeConnection(asker)
      }
    },
  }
}

/** A run_code run's inner calls (runtime/code-calls.ts), each handed to the door as the InnerToolCall it is. */
function innerThroughDoor(inner: InnerCalls): InnerCall {
  return async (params, ctx) => ({
    outcome: (await inner({
      wireName: params.name,
      args: params.arguments,
      cancellation: ctx.cancellation,
      runId: ctx.runId ?? '',
      meta: params._meta,
    })) as RelayOutcome,
  })
}

/** A built-in's own name from its wire name (`mycelium__exec` → `exec`). */
function builtinName(runtime: Runtime, wireName: string): string {
  const prefix = `${BUILTIN_SERVER}${runtime.loaded.config.namespace.separator}`
  return wireName.startsWith(prefix) ? wireName.slice(prefix.length) : wireName
}

/** Every tool a code-mode view's calls may reach now: what it lists, and what its code sees (`tools.<server>.<tool>`). */
function codeCallable(runtime: Runtime, view: PrincipalView, code: CodeModeHandle): string[] {
  const ids = visibleTools(runtime, view).map((t) => t.id)
  for (const [server, tools] of toolTable(runtime, view, code))
    for (const [tool] of tools) ids.push(`${server}:${tool}`)
  return [...new Set(ids)]
}

/** What a call by `wireName` reaches in the view now: a built-in or a visible child tool, listed or not (lazy mode); through a wrapper (`call_tool`), the tool it calls. */
function reachInView(
  runtime: Runtime,
  view: PrincipalView,
  wireName: string,
  args: Record<string, unknown>,
): Reached | undefined {
  const tool = toolInView(runtime, view, wireName)
  if (!tool) return undefined
  const inner = view.unwrapCall?.(wireName, args)
  if (!inner) return { tool, target: { tool, input: args } }
  if ('error' in inner) return { tool }
  const target = reachInView(runtime, view, inner.name, inner.arguments)?.target
  return target ? { tool, target } : { tool }
}

function toolInView(runtime: Runtime, view: PrincipalView, wireName: string): OfferedTool | undefined {
  const listed = visibleTools(runtime, view).find((t) => t.wireName === wireName)
  if (listed) return listed
  // Code mode: a built-in it does not list (exec, the memory tools…) is still callable by name, and from the code.
  const builtin = view.codeMode?.builtins().find((t) => t.name === wireName)
  if (builtin) return { wireName, id: `${BUILTIN_SERVER}:${builtinName(runtime, wireName)}`, def: builtin }
  // A tool of a server that is down now is still reached (and decided): the call is told the server is down.
  const entry = runtime.catalogue.toolByWire(wireName) ?? runtime.catalogue.lastKnownTool(wireName)
  return entry && view.toolVisible(entry)
    ? { wireName: entry.wireName, id: entry.id, def: entry.wire as Tool }
    : undefined
}

/**
 * The view with one tool left in it, the one decided on (or none): what
 * callVisibleTool can then run is at most that tool, even through a wrapper
 * this file does not know. Answers, audit and spans stay the view's own.
 */
function onlyTool(view: PrincipalView, wireName: string | undefined): PrincipalView {
  const narrowed: PrincipalView = {
    toolVisible: (entry) => entry.wireName === wireName && view.toolVisible(entry),
    promptVisible: () => false,
    serverVisible: (server) => view.serverVisible(server),
    builtinTools: () => view.builtinTools().filter((t) => t.name === wireName),
    callBuiltin: (name, args, ctx) => (name === wireName ? view.callBuiltin(name, args, ctx) : undefined),
    onChange: (listener) => view.onChange(listener),
  }
  if (view.unwrapCall) narrowed.unwrapCall = (name, args) => view.unwrapCall!(name, args)
  if (view.recordCall) narrowed.recordCall = (record) => view.recordCall!(record)
  if (view.describe) narrowed.describe = () => view.describe!()
  return narrowed
}

import type { CallToolResult, Tool } from '@modelcontextprotocol/client'
import type { PrincipalView } from '../principal/view.js'
import type { Cancellation } from '../protocol/cancellation.js'
import { RpcCode } from '../protocol/facts.js'
import type { WireError } from '../protocol/request-relay.js'
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

/** How a call that was sent ended: the tool's result, or the error a client of `myc serve` would get. */
export type ToolOutcome = { ok: true; result: CallToolResult } | { ok: false; error: WireError }

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
}

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
 * {@link ToolDoor} calls it.
 */
export interface ToolSource {
  list(): readonly OfferedTool[]
  /** The tool a call by this name reaches now, listed or not; undefined when this source has none by that name. */
  reach(wireName: string, args: Record<string, unknown>): Reached | undefined
  ungated(call: ToolCall, target: OfferedTool | undefined, meta?: Record<string, unknown>): Promise<ToolOutcome>
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

  /** The tool a name stands for now (for labels and events), listed or not. */
  named(wireName: string): OfferedTool | undefined {
    return this.#reach(wireName, {}).reached?.tool
  }

  async call(call: ToolCall): Promise<DoorOutcome> {
    const { source, reached } = this.#reach(call.wireName, call.args)
    const target = reached?.target
    if (target && this.#approvals) {
      const decision = await this.#approvals.check(call.callId, target.tool, target.input)
      if (!decision.allow) return { sent: false, reason: decision.reason }
    }
    return { sent: true, outcome: await source.ungated(call, target?.tool, call.sending?.()) }
  }

  #reach(wireName: string, args: Record<string, unknown>): { source: ToolSource; reached?: Reached } {
    for (const source of this.#sources) {
      const reached = source.reach(wireName, args)
      if (reached) return { source, reached }
    }
    return { source: this.#sources[0]! }
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
  return {
    list: () => visibleTools(runtime, view),
    reach: (wireName, args) => reachInView(runtime, view, wireName, args),
    async ungated(call, target, meta) {
      const asker = answers ? new AgentCall(view, answers, call.callId || `call-${++calls}`) : undefined
      if (asker) runtime.addConnection(asker)
      try {
        const called = await callVisibleTool(
          runtime,
          onlyTool(view, target?.wireName),
          { name: call.wireName, arguments: call.args, ...(meta ? { _meta: meta } : {}) },
          {
            cancellation: call.cancellation,
            builtin: () => ({ signal: call.cancellation.signal }),
            ...(asker
              ? { caller: asker.origin, callerEra: { modern: false, clientCapabilities: asker.clientCapabilities } }
              : {}),
          },
        )
        if (!called) return { ok: false, error: { code: RpcCode.requestCancelled, message: 'Request cancelled' } }
        const { outcome } = called
        return outcome.ok ? { ok: true, result: outcome.result as unknown as CallToolResult } : outcome
      } finally {
        if (asker) runtime.removeConnection(asker)
      }
    },
  }
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
  const entry = runtime.catalogue.toolByWire(wireName)
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

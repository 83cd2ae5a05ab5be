import type { Tool } from '@modelcontextprotocol/client'
import type { BuiltinCallContext, PrincipalView } from '../principal/view.js'
import type { Cancellation } from '../protocol/cancellation.js'
import { RelayErrorCode, type ProgressParams, type RelayOutcome } from '../protocol/request-relay.js'
import type { Runtime } from './runtime.js'

/** JSON-RPC code for an unknown tool, prompt or resource (MCP: invalid params). */
export const INVALID_PARAMS = -32602

/**
 * The answer for a tool that does not exist, and so also for one that is
 * hidden: every face (the MCP server, the agent) goes through this one
 * function, so the answers cannot differ.
 */
export function unknownTool(name: unknown): RelayOutcome {
  return { ok: false, error: { code: INVALID_PARAMS, message: `Unknown tool: ${typeof name === 'string' ? name : JSON.stringify(name)}` } }
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
  const builtins = view.builtinTools().map((def) => ({ wireName: def.name, id: `mycelium:${def.name.startsWith(`mycelium${separator}`) ? def.name.slice(`mycelium${separator}`.length) : def.name}`, def }))
  const children = runtime.catalogue
    .tools()
    .filter((e) => view.toolVisible(e))
    .map((e) => ({ wireName: e.wireName, id: e.id, def: e.wire }))
  return [...builtins, ...children]
}

export interface ToolCallContext {
  cancellation: Cancellation
  onProgress?: (progress: ProgressParams) => void
  /** What a built-in may need (a signal, elicitation); asked only by a built-in. */
  builtin: () => BuiltinCallContext
}

/**
 * Calls a tool by wire name as the principal: a visible built-in, else a
 * visible child tool (its own name restored, the rest of `params` as sent),
 * else the answer of a tool that does not exist. The audit log hears of each
 * call. A child that is down is a failed call the caller can read, not a
 * protocol error. Resolves undefined when cancelled.
 */
export async function callVisibleTool(runtime: Runtime, view: PrincipalView, params: Record<string, unknown>, ctx: ToolCallContext): Promise<{ outcome: RelayOutcome; server?: string } | undefined> {
  const name = params.name
  if (typeof name !== 'string') return { outcome: unknownTool(name) }
  const args = (params.arguments ?? {}) as Record<string, unknown>
  // The audit log, where the view keeps one (policy mode): nothing is measured without it.
  const audit = view.recordCall?.bind(view)
  const started = audit ? performance.now() : 0
  const record = (outcome: 'ok' | 'error' | 'denied') => audit?.({ name, outcome, durationMs: Math.round(performance.now() - started), argumentKeys: Object.keys(args) })
  const builtin = view.callBuiltin(name, args, ctx.builtin)
  if (builtin) {
    const result = await builtin
    record(result.isError ? 'error' : 'ok')
    return { outcome: { ok: true, result: result as Record<string, unknown> } }
  }
  const entry = runtime.catalogue.toolByWire(name)
  const child = entry && view.toolVisible(entry) ? runtime.supervisor.children.get(entry.server) : undefined
  if (!entry || !child) {
    record('denied')
    return { outcome: unknownTool(name) }
  }
  const outcome = await child.forward('tools/call', { ...params, name: entry.name }, ctx)
  if (ctx.cancellation.aborted) return undefined
  record(outcome.ok && !(outcome.result as { isError?: boolean }).isError ? 'ok' : 'error')
  if (!outcome.ok && outcome.error.code === RelayErrorCode.connectionClosed) return { outcome: { ok: true, result: { content: [{ type: 'text', text: outcome.error.message }], isError: true } }, server: entry.server }
  return { outcome, server: entry.server }
}

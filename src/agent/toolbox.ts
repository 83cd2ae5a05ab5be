import type { CallToolResult } from '@modelcontextprotocol/client'
import type { Runtime } from '../runtime/runtime.js'
import type { PrincipalView } from '../server/view.js'
import type { Cancellation } from '../protocol/cancellation.js'
import { RelayErrorCode } from '../protocol/request-relay.js'
import type { AgentToolbox, OfferedTool } from './engine.js'

/** The canonical id of a built-in from its wire name (`mycelium__exec` → `mycelium:exec`). */
function builtinId(wireName: string, separator: string): string {
  return `mycelium:${wireName.startsWith(`mycelium${separator}`) ? wireName.slice(`mycelium${separator}`.length) : wireName}`
}

/**
 * The agent's toolbox over a runtime and one principal's view: the same
 * tools, in the same order, that `myc serve` lists for that principal, and
 * calls that take the same path (built-ins first, then the catalogue, hidden
 * and unknown tools answered alike, the audit log told of each call).
 */
export function viewToolbox(runtime: Runtime, view: PrincipalView): AgentToolbox {
  const separator = runtime.loaded.config.namespace.separator
  return {
    list(): OfferedTool[] {
      const builtins = view.builtinTools().map((def) => ({ wireName: def.name, id: builtinId(def.name, separator), def }))
      const children = runtime.catalogue
        .tools()
        .filter((e) => view.toolVisible(e))
        .map((e) => ({ wireName: e.wireName, id: e.id, def: e.wire }))
      return [...builtins, ...children]
    },
    async call(wireName, args, cancellation: Cancellation) {
      const started = performance.now()
      const record = (outcome: 'ok' | 'error' | 'denied') => view.recordCall?.({ name: wireName, outcome, durationMs: Math.round(performance.now() - started), argumentKeys: Object.keys(args) })
      const builtin = view.callBuiltin(wireName, args, () => ({ signal: cancellation.signal }))
      if (builtin) {
        const result = await builtin
        record(result.isError ? 'error' : 'ok')
        return { ok: true, result }
      }
      const entry = runtime.catalogue.toolByWire(wireName)
      const child = entry && view.toolVisible(entry) ? runtime.supervisor.children.get(entry.server) : undefined
      if (!entry || !child) {
        record('denied')
        // The same answer `myc serve` gives: a hidden tool does not exist.
        return { ok: false, error: { code: -32602, message: `Unknown tool: ${wireName}` } }
      }
      const outcome = await child.forward('tools/call', { name: entry.name, arguments: args }, { cancellation })
      if (!outcome.ok) {
        record('error')
        // A child that is down is a failed call the model can read.
        if (outcome.error.code === RelayErrorCode.connectionClosed) return { ok: true, result: { content: [{ type: 'text', text: outcome.error.message }], isError: true } }
        return outcome
      }
      const result = outcome.result as unknown as CallToolResult
      record(result.isError ? 'error' : 'ok')
      return { ok: true, result }
    },
  }
}

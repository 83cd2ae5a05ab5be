import type { CallToolResult } from '@modelcontextprotocol/client'
import type { PrincipalView } from '../principal/view.js'
import { callVisibleTool, visibleTools } from '../runtime/principal-tools.js'
import type { Runtime } from '../runtime/runtime.js'
import type { AgentToolbox } from './engine.js'

/**
 * The agent's toolbox over a runtime and one principal's view: the tools
 * `myc serve` lists for that principal, in the same order, and calls that
 * take the very same path (runtime/principal-tools.ts): built-ins first,
 * then the catalogue, hidden and unknown tools answered alike, the audit
 * log told of each call.
 */
export function viewToolbox(runtime: Runtime, view: PrincipalView): AgentToolbox {
  return {
    list: () => visibleTools(runtime, view),
    async call(wireName, args, cancellation) {
      const called = await callVisibleTool(runtime, view, { name: wireName, arguments: args }, { cancellation, builtin: () => ({ signal: cancellation.signal }) })
      if (!called) return { ok: false, error: { code: -32800, message: 'Request cancelled' } }
      const { outcome } = called
      return outcome.ok ? { ok: true, result: outcome.result as unknown as CallToolResult } : outcome
    },
  }
}

import type { CallToolResult } from '@modelcontextprotocol/client'
import type { PrincipalView } from '../principal/view.js'
import { callVisibleTool, visibleTools } from '../runtime/principal-tools.js'
import type { Runtime } from '../runtime/runtime.js'
import { AgentCall, type ChildAnswers } from './child-questions.js'
import type { AgentToolbox, OfferedTool } from './engine.js'
import { RpcCode } from '../protocol/facts.js'

/**
 * The agent's toolbox over a runtime and one principal's view: the tools
 * `myc serve` lists for that principal, in the same order, and calls that
 * take the very same path (runtime/principal-tools.ts): built-ins first,
 * then the catalogue, hidden and unknown tools answered alike, the audit
 * log told of each call. With `answers`, each call is a connection of the
 * runtime while it runs, so what a child asks during it (sampling,
 * elicitation, roots; a modern child's input_required) is answered by the
 * agent (child-questions.ts).
 */
export function viewToolbox(runtime: Runtime, view: PrincipalView, answers?: ChildAnswers): AgentToolbox {
  let calls = 0
  return {
    list: () => visibleTools(runtime, view),
    resolve(wireName, args) {
      const inner = view.unwrapCall?.(wireName, args)
      if (!inner || 'error' in inner) return undefined
      const entry = runtime.catalogue.toolByWire(inner.name)
      if (!entry || !view.toolVisible(entry)) return undefined
      return {
        tool: { wireName: entry.wireName, id: entry.id, def: entry.wire as OfferedTool['def'] },
        input: inner.arguments,
      }
    },
    async call(wireName, args, cancellation, callId, meta) {
      const asker = answers ? new AgentCall(view, answers, callId ?? `call-${++calls}`) : undefined
      if (asker) runtime.addConnection(asker)
      try {
        const called = await callVisibleTool(
          runtime,
          view,
          { name: wireName, arguments: args, ...(meta ? { _meta: meta } : {}) },
          {
            cancellation,
            builtin: () => ({ signal: cancellation.signal }),
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

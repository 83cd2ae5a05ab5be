import type { SpanHandle, Tracing } from '../telemetry/tracing.js'

/**
 * The root of an agent run's trace (a chat turn's too): `invoke_agent
 * mycelium`, as the GenAI conventions name it, with the tracing it belongs
 * to (the shape of AgentOptions.tracing: the run's chat and execute_tool
 * spans go under it). Undefined when tracing is off.
 */
export function startRunSpan(
  tracing: Tracing | undefined,
  model: string,
  mode: string,
): { tracing: Tracing; span: SpanHandle } | undefined {
  if (!tracing) return undefined
  return {
    tracing,
    span: tracing.start('invoke_agent mycelium', 'internal', undefined, {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'mycelium',
      'gen_ai.system': 'anthropic',
      'gen_ai.request.model': model,
      'mycelium.mode': mode,
    }),
  }
}

/** Ends a run's root span with what the run used and how it ended (an error status unless `done`). */
export function endRunSpan(
  span: SpanHandle,
  outcome: {
    reason: string
    usage?: { inputTokens: number; outputTokens: number } | undefined
    error?: { message: string } | undefined
  },
): void {
  span.set({
    'gen_ai.usage.input_tokens': outcome.usage?.inputTokens ?? 0,
    'gen_ai.usage.output_tokens': outcome.usage?.outputTokens ?? 0,
    'mycelium.end_reason': outcome.reason,
  })
  span.end(outcome.reason === 'done' ? undefined : (outcome.error?.message ?? outcome.reason))
}

import type Anthropic from '@anthropic-ai/sdk'
import { redactUrl, redactUrls } from '../redact.js'
import type {
  BetaContentBlockParam,
  BetaMessageParam,
  BetaTextBlockParam,
  BetaToolResultBlockParam,
  BetaToolUnion,
} from '@anthropic-ai/sdk/resources/beta/messages/messages'
import type { CallToolResult, Tool } from '@modelcontextprotocol/client'
import { Cancellation } from '../protocol/cancellation.js'
import type { WireError } from '../protocol/request-relay.js'
import type { AnthropicSdk } from './anthropic-sdk.js'
import { apiToolNames } from './api-names.js'
import type { AgentEventBody, EndReason, TokenUsage } from './events.js'
import { estimateTokens, type Budget } from './budget.js'
import { toolResultContent } from './tool-content.js'
import type { SpanHandle, Tracing } from '../telemetry/tracing.js'
import { RpcCode } from '../protocol/facts.js'

/** One tool the principal sees now. */
export interface OfferedTool {
  /** The name on the wire (what a client of `myc serve` sees). */
  wireName: string
  /** The canonical id, `server:tool`. */
  id: string
  def: Tool
}

/**
 * What the agent may do, through the same per-principal view that `myc
 * serve` answers from: list the tools the principal sees now, and call one.
 * A call of a tool the view hides gets exactly the error of a tool that
 * never existed.
 */
export interface AgentToolbox {
  list(): readonly OfferedTool[]
  /** The tool and arguments a call stands for when the tool wraps another (lazy open mode's call_tool): what approvals decide on. */
  resolve?(
    wireName: string,
    args: Record<string, unknown>,
  ): { tool: OfferedTool; input: Record<string, unknown> } | undefined
  /** `meta`: the call's `_meta` (trace context, when tracing). */
  call(
    wireName: string,
    args: Record<string, unknown>,
    cancellation: Cancellation,
    callId?: string,
    meta?: Record<string, unknown>,
  ): Promise<{ ok: true; result: CallToolResult } | { ok: false; error: WireError }>
}

export interface AgentOptions {
  client: Pick<Anthropic, 'beta'>
  /** The SDK's MCP helpers, for tool results. */
  sdk: Pick<AnthropicSdk, 'mcpContent' | 'UnsupportedMCPValueError'>
  model: string
  maxTokens: number
  maxTurns: number
  system: string
  toolbox: AgentToolbox
  emit: (event: AgentEventBody) => void
  /** Aborting ends the current request; the run ends `interrupted`. */
  signal?: AbortSignal
  /** Emit `text_delta` events as text streams in. */
  includePartial?: boolean
  /** The conversation so far (a chat's earlier turns); the run appends its own messages to it. */
  conversation?: BetaMessageParam[]
  /** Asked after each tool call: true ends the run as `failed` (a workflow's script failed). */
  failed?: () => boolean
  /** Headless runs: a refused approval makes a run that ends well end `denied` (exit 3), its last text kept. */
  deniedFails?: boolean
  /** Tracing, when on: a `chat {model}` span per request and an `execute_tool {tool}` span per call, under `span` (the run's `invoke_agent`). */
  tracing?: { tracing: Tracing; span: SpanHandle }
  /** Decides, before a call is sent, whether it may run (adhoc's approvals). */
  approve?: (
    callId: string,
    tool: OfferedTool,
    input: Record<string, unknown>,
  ) => Promise<{ allow: true } | { allow: false; reason: string }>
  /** The run's caps and meter: a request that would pass a cap is not sent, and the run ends `budget` (src/agent/budget.ts). */
  budget?: Budget
}

/** How a run ended. */
export interface AgentOutcome {
  reason: EndReason
  turns: number
  usage: TokenUsage
  /** The last text the model wrote. */
  text: string
  permissionDenials: Array<{ tool: string; id: string; reason: string }>
  error?: { code: string; message: string; status?: number | undefined }
}

const META_ACTIVATE = 'mycelium:activate_skill'
const META_DEACTIVATE = 'mycelium:deactivate_skill'

/**
 * The agent loop: one streamed Messages API request per turn, offering
 * exactly the tools the principal's view lists at that moment (re-read after
 * every call, so an escalation shows on the next request), tool calls run
 * one at a time through the toolbox, their MCP results turned into
 * tool_result content. Ends when the model stops asking for tools, at
 * `maxTurns`, on an API error, or when aborted.
 */
export async function runAgent(task: string, options: AgentOptions): Promise<AgentOutcome> {
  const { emit } = options
  const usage: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }
  const permissionDenials: AgentOutcome['permissionDenials'] = []
  const messages: BetaMessageParam[] = options.conversation ?? []
  messages.push({ role: 'user', content: task })
  const system: BetaTextBlockParam[] = [{ type: 'text', text: options.system, cache_control: { type: 'ephemeral' } }]
  let text = ''
  let turns = 0
  /** An approval refused during the run: with `deniedFails`, a run that then ends well ends `denied`, not `done`. */
  let approvalDenied = false
  const end = (reason: EndReason, error?: AgentOutcome['error']): AgentOutcome => ({
    reason: reason === 'done' && approvalDenied && options.deniedFails ? 'denied' : reason,
    turns,
    usage,
    text,
    permissionDenials,
    ...(error ? { error } : {}),
  })

  while (turns < options.maxTurns) {
    if (options.signal?.aborted) return end('interrupted')
    turns++
    const offered = options.toolbox.list()
    const names = apiToolNames(offered.map((t) => t.wireName))
    const byWire = new Map(offered.map((t) => [t.wireName, t]))
    const tools: BetaToolUnion[] = offered.map((t, i) => ({
      name: names.toApi.get(t.wireName)!,
      description: t.def.description ?? '',
      input_schema: t.def.inputSchema as BetaToolUnion extends { input_schema: infer S } ? S : never,
      // The tool list is the same from turn to turn until an escalation: cache it with the system prompt.
      ...(i === offered.length - 1 ? { cache_control: { type: 'ephemeral' as const } } : {}),
    }))
    // The budget's rule: this request's estimated input and its max_tokens on top of the spend so far must stay under every cap.
    const refused = options.budget?.capped
      ? options.budget.refuse(estimateTokens({ system, messages, tools }), options.maxTokens)
      : undefined
    if (refused !== undefined) {
      turns--
      return end('budget', { code: 'budget_reached', message: refused })
    }
    let message
    const chat = options.tracing?.tracing.start(`chat ${options.model}`, 'client', options.tracing.span, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'anthropic',
      'gen_ai.request.model': options.model,
      'gen_ai.request.max_tokens': options.maxTokens,
    })
    try {
      const stream = options.client.beta.messages.stream(
        {
          model: options.model,
          max_tokens: options.maxTokens,
          system,
          messages,
          ...(tools.length > 0 ? { tools } : {}),
        },
        options.signal ? { signal: options.signal } : {},
      )
      if (options.includePartial) stream.on('text', (delta) => emit({ type: 'text_delta', text: delta }))
      message = await stream.finalMessage()
    } catch (error) {
      chat?.end(options.signal?.aborted ? 'interrupted' : describeApiError(error).message)
      if (options.signal?.aborted) return end('interrupted')
      return end('error', describeApiError(error))
    }
    chat?.set({
      'gen_ai.response.model': message.model,
      'gen_ai.usage.input_tokens': message.usage.input_tokens,
      'gen_ai.usage.output_tokens': message.usage.output_tokens,
      ...(message.stop_reason ? { 'gen_ai.response.finish_reasons': message.stop_reason } : {}),
    })
    chat?.end()
    options.budget?.add(message.usage)
    // Usage once per API call (not per content block).
    usage.inputTokens += message.usage.input_tokens
    usage.outputTokens += message.usage.output_tokens
    usage.cacheReadInputTokens += message.usage.cache_read_input_tokens ?? 0
    usage.cacheCreationInputTokens += message.usage.cache_creation_input_tokens ?? 0
    for (const block of message.content) {
      if (block.type === 'text') {
        text = block.text
        emit({ type: 'text', text: block.text })
      }
    }
    messages.push({ role: 'assistant', content: message.content as BetaContentBlockParam[] })
    const calls = message.content.filter((b) => b.type === 'tool_use')
    if (message.stop_reason !== 'tool_use' || calls.length === 0) return end('done')

    const results: BetaToolResultBlockParam[] = []
    // One at a time, in order: an escalation by one call changes what the next may use.
    for (const call of calls) {
      const wire = names.fromApi.get(call.name)
      const tool = wire === undefined ? undefined : byWire.get(wire)
      const label = tool?.id ?? call.name
      const input = (call.input ?? {}) as Record<string, unknown>
      emit({ type: 'tool_call', id: call.id, tool: label, input })
      // The decision comes before the call reaches the child: a denied call never runs.
      // A call_tool is approved as the tool it calls, never as itself.
      const target =
        tool && options.approve ? (options.toolbox.resolve?.(tool.wireName, input) ?? { tool, input }) : undefined
      const approval =
        target && options.approve ? await options.approve(call.id, target.tool, target.input) : { allow: true as const }
      // The call's duration starts after the person answered: their time is not the tool's.
      const started = performance.now()
      if (!approval.allow) {
        options.tracing?.span.event('approval_denied', { 'gen_ai.tool.name': label })
        approvalDenied = true
        permissionDenials.push({ tool: label, id: call.id, reason: approval.reason })
        emit({
          type: 'tool_result',
          id: call.id,
          tool: label,
          ok: false,
          durationMs: 0,
          content: [{ type: 'text', text: approval.reason }],
        })
        results.push({
          type: 'tool_result',
          tool_use_id: call.id,
          is_error: true,
          content: [{ type: 'text', text: approval.reason }],
        })
        continue
      }
      const before =
        tool && (tool.id === META_ACTIVATE || tool.id === META_DEACTIVATE)
          ? new Set(options.toolbox.list().map((t) => t.id))
          : undefined
      // A name the model made up reaches the toolbox as it is: it gets the answer of a tool that does not exist.
      // Ctrl-C reaches a call in flight (a worker, a child's tool) too.
      const cancellation = new Cancellation()
      const onAbort = () => cancellation.cancel(options.signal!.reason)
      options.signal?.addEventListener('abort', onAbort, { once: true })
      const toolSpan = options.tracing?.tracing.start(`execute_tool ${label}`, 'internal', options.tracing.span, {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': label,
        'gen_ai.tool.call.id': call.id,
      })
      const outcome = await options.toolbox
        .call(wire ?? call.name, input, cancellation, call.id, toolSpan ? { ...toolSpan.carrier() } : undefined)
        .finally(() => options.signal?.removeEventListener('abort', onAbort))
      toolSpan?.end(
        outcome.ok ? (outcome.result.isError ? 'the tool answered isError' : undefined) : outcome.error.message,
      )
      const durationMs = Math.round(performance.now() - started)
      if (!outcome.ok) {
        if (outcome.error.code === RpcCode.invalidParams)
          permissionDenials.push({ tool: label, id: call.id, reason: outcome.error.message })
        emit({
          type: 'tool_result',
          id: call.id,
          tool: label,
          ok: false,
          durationMs,
          content: [{ type: 'text', text: outcome.error.message }],
        })
        results.push({
          type: 'tool_result',
          tool_use_id: call.id,
          is_error: true,
          content: [{ type: 'text', text: outcome.error.message }],
        })
        continue
      }
      const ok = outcome.result.isError !== true
      const blocked = (
        outcome.result.structuredContent as { error?: { code?: string; rule?: string; message?: string } } | undefined
      )?.error
      if (blocked?.code === 'guard_blocked')
        emit({
          type: 'guard_blocked',
          id: call.id,
          tool: label,
          rule: blocked.rule ?? '',
          message: blocked.message ?? '',
        })
      emit({ type: 'tool_result', id: call.id, tool: label, ok, durationMs, content: outcome.result.content ?? [] })
      results.push({
        type: 'tool_result',
        tool_use_id: call.id,
        ...(ok ? {} : { is_error: true }),
        content: toolResultContent(outcome.result, options.sdk),
      })
      if (before && ok) {
        const after = new Set(options.toolbox.list().map((t) => t.id))
        const toolsAdded = [...after].filter((t) => !before.has(t))
        const toolsRemoved = [...before].filter((t) => !after.has(t))
        const skill = typeof input.name === 'string' ? input.name : ''
        if (toolsAdded.length > 0 || toolsRemoved.length > 0 || tool?.id === META_ACTIVATE) {
          emit({
            type: tool?.id === META_ACTIVATE ? 'skill_activated' : 'skill_deactivated',
            skill,
            by: 'model',
            toolsAdded,
            toolsRemoved,
          })
        }
      }
    }
    messages.push({ role: 'user', content: results })
    if (options.failed?.()) return end('failed')
  }
  return end('max_turns')
}

/** One line a person can act on, from what the SDK threw; a URL in it without its secrets ({@link redactUrls}). */
function describeApiError(error: unknown): NonNullable<AgentOutcome['error']> {
  const described = describeApiErrorAsIs(error)
  return { ...described, message: redactUrls(described.message) }
}

function describeApiErrorAsIs(error: unknown): NonNullable<AgentOutcome['error']> {
  const e = error as {
    status?: number
    message?: string
    name?: string
    error?: { error?: { type?: string; message?: string } }
  }
  const detail = e.error?.error?.message ?? e.message ?? String(error)
  if (e.status === 401)
    return {
      code: 'api_key_rejected',
      status: 401,
      message: `the Anthropic API rejected the key (${detail}): check ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN`,
    }
  if (e.status === 403)
    return { code: 'api_forbidden', status: 403, message: `the Anthropic API refused the request (${detail})` }
  if (e.status === 404)
    return {
      code: 'api_not_found',
      status: 404,
      message: `the Anthropic API answered 404 (${detail}): check the model name and ANTHROPIC_BASE_URL`,
    }
  if (e.status === undefined)
    return {
      code: 'api_unreachable',
      message: `cannot reach the Anthropic API at ${process.env.ANTHROPIC_BASE_URL ? redactUrl(process.env.ANTHROPIC_BASE_URL) : 'https://api.anthropic.com'} (${detail}): check the network or ANTHROPIC_BASE_URL`,
    }
  return {
    code: e.error?.error?.type ?? 'api_error',
    status: e.status,
    message: `the Anthropic API answered ${e.status}: ${detail}`,
  }
}

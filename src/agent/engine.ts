import type Anthropic from '@anthropic-ai/sdk'
import { redactUrl, redactUrls } from '../redact.js'
import type {
  BetaContentBlockParam,
  BetaMessage,
  BetaMessageParam,
  BetaTextBlockParam,
  BetaToolResultBlockParam,
  BetaToolUnion,
} from '@anthropic-ai/sdk/resources/beta/messages/messages'
import { Cancellation } from '../protocol/cancellation.js'
import type { ToolDoor } from './tool-call.js'
import type { AnthropicSdk } from './anthropic-sdk.js'
import { apiToolNames } from './api-names.js'
import type { AgentEventBody, EndReason, TokenUsage } from './events.js'
import { estimateTokens, type Budget } from './budget.js'
import { toolResultContent } from './tool-content.js'
import type { SpanHandle, Tracing } from '../telemetry/tracing.js'
import { RpcCode } from '../protocol/facts.js'

export interface AgentOptions {
  client: Pick<Anthropic, 'beta'>
  /** The SDK's MCP helpers, for tool results. */
  sdk: Pick<AnthropicSdk, 'mcpContent' | 'UnsupportedMCPValueError'>
  model: string
  maxTokens: number
  maxTurns: number
  system: string
  /** The tools, and the one way to call them: every call is decided there when it is made (tool-call.ts). */
  tools: ToolDoor
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
 * one at a time through the tool door (each decided there when it is made),
 * their MCP results turned into tool_result content. Ends when the model
 * stops asking for tools, at `maxTurns`, on an API error, or when aborted.
 */
export async function runAgent(task: string, options: AgentOptions): Promise<AgentOutcome> {
  const { emit } = options
  const usage: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }
  const run: RunRecord = { permissionDenials: [], approvalDenied: false }
  const messages: BetaMessageParam[] = options.conversation ?? []
  messages.push({ role: 'user', content: task })
  const system: BetaTextBlockParam[] = [{ type: 'text', text: options.system, cache_control: { type: 'ephemeral' } }]
  let text = ''
  let turns = 0
  const end = (reason: EndReason, error?: AgentOutcome['error']): AgentOutcome => ({
    reason: reason === 'done' && run.approvalDenied && options.deniedFails ? 'denied' : reason,
    turns,
    usage,
    text,
    permissionDenials: run.permissionDenials,
    ...(error ? { error } : {}),
  })

  while (turns < options.maxTurns) {
    if (options.signal?.aborted) return end('interrupted')
    turns++
    const offered = options.tools.list()
    const names = apiToolNames(offered.map((t) => t.wireName))
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
    const asked = await askModel(options, { system, messages, tools })
    if (!asked.ok) return asked.error ? end('error', asked.error) : end('interrupted')
    const { message } = asked
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
    for (const call of calls) results.push(await useTool(call, names.fromApi.get(call.name) ?? call.name, options, run))
    messages.push({ role: 'user', content: results })
    if (options.failed?.()) return end('failed')
  }
  return end('max_turns')
}

/** One streamed Messages API request, a `chat {model}` span when tracing: the reply, or the error (none: interrupted). */
async function askModel(
  options: AgentOptions,
  request: { system: BetaTextBlockParam[]; messages: BetaMessageParam[]; tools: BetaToolUnion[] },
): Promise<{ ok: true; message: BetaMessage } | { ok: false; error?: AgentOutcome['error'] }> {
  const chat = options.tracing?.tracing.start(`chat ${options.model}`, 'client', options.tracing.span, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': 'anthropic',
    'gen_ai.request.model': options.model,
    'gen_ai.request.max_tokens': options.maxTokens,
  })
  let message: BetaMessage
  try {
    const stream = options.client.beta.messages.stream(
      {
        model: options.model,
        max_tokens: options.maxTokens,
        system: request.system,
        messages: request.messages,
        ...(request.tools.length > 0 ? { tools: request.tools } : {}),
      },
      options.signal ? { signal: options.signal } : {},
    )
    if (options.includePartial) stream.on('text', (delta) => options.emit({ type: 'text_delta', text: delta }))
    message = await stream.finalMessage()
  } catch (error) {
    chat?.end(options.signal?.aborted ? 'interrupted' : describeApiError(error).message)
    return options.signal?.aborted ? { ok: false } : { ok: false, error: describeApiError(error) }
  }
  chat?.set({
    'gen_ai.response.model': message.model,
    'gen_ai.usage.input_tokens': message.usage.input_tokens,
    'gen_ai.usage.output_tokens': message.usage.output_tokens,
    ...(message.stop_reason ? { 'gen_ai.response.finish_reasons': message.stop_reason } : {}),
  })
  chat?.end()
  return { ok: true, message }
}

/** What the run keeps of its calls: the denied ones, and whether an approval was refused (with `deniedFails`, a run that then ends well ends `denied`, not `done`). */
interface RunRecord {
  permissionDenials: AgentOutcome['permissionDenials']
  approvalDenied: boolean
}

/**
 * One tool_use block of a reply: its events and its tool_result. The call
 * goes through the door, which decides it before it is sent (a denied call
 * never runs); a name the model made up gets the answer of a tool that does
 * not exist; Ctrl-C reaches a call in flight (a worker, a child's tool).
 */
async function useTool(
  call: { id: string; name: string; input: unknown },
  wireName: string,
  options: AgentOptions,
  run: RunRecord,
): Promise<BetaToolResultBlockParam> {
  const { emit, tools } = options
  const tool = tools.named(wireName)
  const label = tool?.id ?? call.name
  const input = (call.input ?? {}) as Record<string, unknown>
  emit({ type: 'tool_call', id: call.id, tool: label, input })
  const skills = tool?.id === META_ACTIVATE || tool?.id === META_DEACTIVATE ? toolIds(tools) : undefined
  const cancellation = new Cancellation()
  const onAbort = () => cancellation.cancel(options.signal!.reason)
  options.signal?.addEventListener('abort', onAbort, { once: true })
  let started = 0
  let span: SpanHandle | undefined
  const sending = () => {
    started = performance.now()
    span = options.tracing?.tracing.start(`execute_tool ${label}`, 'internal', options.tracing.span, {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': label,
      'gen_ai.tool.call.id': call.id,
    })
    return span ? { ...span.carrier() } : undefined
  }
  const done = await tools
    .call({ wireName, args: input, callId: call.id, cancellation, sending })
    .finally(() => options.signal?.removeEventListener('abort', onAbort))
  if (!done.sent) {
    options.tracing?.span.event('approval_denied', { 'gen_ai.tool.name': label })
    run.approvalDenied = true
    run.permissionDenials.push({ tool: label, id: call.id, reason: done.reason })
    return failedResult(emit, call.id, label, 0, done.reason)
  }
  const { outcome } = done
  span?.end(outcome.ok ? (outcome.result.isError ? 'the tool answered isError' : undefined) : outcome.error.message)
  const durationMs = Math.round(performance.now() - started)
  if (!outcome.ok) {
    if (outcome.error.code === RpcCode.invalidParams)
      run.permissionDenials.push({ tool: label, id: call.id, reason: outcome.error.message })
    return failedResult(emit, call.id, label, durationMs, outcome.error.message)
  }
  const ok = outcome.result.isError !== true
  const blocked = (
    outcome.result.structuredContent as { error?: { code?: string; rule?: string; message?: string } } | undefined
  )?.error
  if (blocked?.code === 'guard_blocked')
    emit({ type: 'guard_blocked', id: call.id, tool: label, rule: blocked.rule ?? '', message: blocked.message ?? '' })
  emit({ type: 'tool_result', id: call.id, tool: label, ok, durationMs, content: outcome.result.content ?? [] })
  if (skills && ok) skillChanged(emit, tool!.id, input, skills, toolIds(tools))
  return {
    type: 'tool_result',
    tool_use_id: call.id,
    ...(ok ? {} : { is_error: true }),
    content: toolResultContent(outcome.result, options.sdk),
  }
}

const toolIds = (tools: ToolDoor) => new Set(tools.list().map((t) => t.id))

/** A call that did not run or failed before the tool answered: its event and its tool_result, the reason as text. */
function failedResult(
  emit: AgentOptions['emit'],
  id: string,
  tool: string,
  durationMs: number,
  reason: string,
): BetaToolResultBlockParam {
  emit({ type: 'tool_result', id, tool, ok: false, durationMs, content: [{ type: 'text', text: reason }] })
  return { type: 'tool_result', tool_use_id: id, is_error: true, content: [{ type: 'text', text: reason }] }
}

/** The model's activate_skill or deactivate_skill went through: the event names the tools that came and went. */
function skillChanged(
  emit: AgentOptions['emit'],
  id: string,
  input: Record<string, unknown>,
  before: ReadonlySet<string>,
  after: ReadonlySet<string>,
): void {
  const toolsAdded = [...after].filter((t) => !before.has(t))
  const toolsRemoved = [...before].filter((t) => !after.has(t))
  if (toolsAdded.length === 0 && toolsRemoved.length === 0 && id !== META_ACTIVATE) return
  emit({
    type: id === META_ACTIVATE ? 'skill_activated' : 'skill_deactivated',
    skill: typeof input.name === 'string' ? input.name : '',
    by: 'model',
    toolsAdded,
    toolsRemoved,
  })
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

import type Anthropic from '@anthropic-ai/sdk'
import type { CallToolResult } from '@modelcontextprotocol/client'
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
import type { DoorOutcome, OfferedTool, ToolCall, ToolDoor } from './tool-call.js'
import type { AnthropicSdk } from './anthropic-sdk.js'
import { apiToolNames } from './api-names.js'
import type { AgentEventBody, EndReason, TokenUsage } from './events.js'
import { estimateTokens, type Budget } from './budget.js'
import { toolResultContent } from './tool-content.js'
import type { SpanHandle, Tracing } from '../telemetry/tracing.js'
import { carrierOf, type Carrier } from '../telemetry/trace-context.js'
import { RpcCode } from '../protocol/facts.js'

export interface AgentOptions {
  client: Pick<Anthropic, 'beta' | 'baseURL'>
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
  /**
   * Headless runs: a run that ends well ends `denied` (exit 3) after a
   * refused approval, else `unavailable` (exit 1) after a call whose server
   * was not running (an outcome with `down`) that no later call of that tool
   * made good; its last text kept.
   */
  headless?: boolean
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
  const run: RunRecord = { permissionDenials: [], approvalDenied: false, downCalls: new Map() }
  const messages: BetaMessageParam[] = options.conversation ?? []
  messages.push({ role: 'user', content: task })
  const system: BetaTextBlockParam[] = [{ type: 'text', text: options.system, cache_control: { type: 'ephemeral' } }]
  let text = ''
  let turns = 0
  const end = (reason: EndReason, error?: AgentOutcome['error']): AgentOutcome => {
    const finalReason = reason === 'done' && options.headless ? strictReason(run) : reason
    const downError = finalReason === 'unavailable' && reason === 'done' ? unavailableError(run.downCalls) : undefined
    return {
      reason: finalReason,
      turns,
      usage,
      text,
      permissionDenials: run.permissionDenials,
      ...(error ? { error } : downError ? { error: downError } : {}),
    }
  }

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
    chat?.end(options.signal?.aborted ? 'interrupted' : describeApiError(error, options.client.baseURL).message)
    return options.signal?.aborted
      ? { ok: false }
      : { ok: false, error: describeApiError(error, options.client.baseURL) }
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

/**
 * What the run keeps of its calls: the denied ones, whether an approval was
 * refused, and the tools (by id) whose last call found their server down,
 * with that server (headless, a run that then ends well ends `denied` or
 * `unavailable`, not `done`: strictReason).
 */
interface RunRecord {
  permissionDenials: AgentOutcome['permissionDenials']
  approvalDenied: boolean
  downCalls: Map<string, string>
}

/** How a headless run that ended well ends: `denied` after a refused approval, `unavailable` after a call its server could not answer, else `done`. */
function strictReason(run: RunRecord): EndReason {
  if (run.approvalDenied) return 'denied'
  return run.downCalls.size > 0 ? 'unavailable' : 'done'
}

/** The error of a run that ends `unavailable`: which tools failed because which servers were down. */
function unavailableError(downCalls: ReadonlyMap<string, string>): NonNullable<AgentOutcome['error']> {
  const servers = [...new Set(downCalls.values())].map((s) => `"${s}"`).join(', ')
  return {
    code: 'server_unavailable',
    message: `calls to ${[...downCalls.keys()].join(', ')} failed because their server (${servers}) was not running, and were not made good by a later call: the result may be incomplete; \`myc status\` shows the servers (run again once they are up)`,
  }
}

/**
 * One tool_use block of a reply: its events and its tool_result. The call
 * goes through the door, which decides it before it is sent (a denied call
 * never runs); a name the model made up gets the answer of a tool that does
 * not exist; Ctrl-C reaches a call in flight (a worker, a child's tool, a
 * run_code run and its inner calls).
 */
async function useTool(
  call: { id: string; name: string; input: unknown },
  wireName: string,
  options: AgentOptions,
  run: RunRecord,
): Promise<BetaToolResultBlockParam> {
  const tool = options.tools.named(wireName)
  const watched = watchedCall(
    options,
    call.id,
    tool?.id ?? call.name,
    tool,
    (call.input ?? {}) as Record<string, unknown>,
  )
  const cancellation = new Cancellation()
  const onAbort = () => cancellation.cancel(options.signal!.reason)
  options.signal?.addEventListener('abort', onAbort, { once: true })
  const clock = toolClock(options, watched)
  const done = await options.tools
    .call({
      wireName,
      args: watched.input,
      callId: call.id,
      cancellation,
      sending: () => clock.start(options.tracing?.span),
      watchInner: watchInner(options, run, call.id, clock),
    })
    .finally(() => options.signal?.removeEventListener('abort', onAbort))
  const settled = settle(options, run, watched, done, clock)
  if (!settled.ok)
    return {
      type: 'tool_result',
      tool_use_id: call.id,
      is_error: true,
      content: [{ type: 'text', text: settled.reason }],
    }
  return {
    type: 'tool_result',
    tool_use_id: call.id,
    ...(settled.result.isError === true ? { is_error: true } : {}),
    content: toolResultContent(settled.result, options.sdk),
  }
}

/** One call as the engine follows it: its id and label (`server:tool`), the tool it names, its input, the run_code call it was made in, and the tools callable before it when it may change them (a skill tool). */
interface WatchedCall {
  id: string
  label: string
  tool: OfferedTool | undefined
  input: Record<string, unknown>
  parentId?: string
  skillsBefore?: ReadonlySet<string>
}

/** A call about to be made: its tool_call event, and what it may change noted. */
function watchedCall(
  options: AgentOptions,
  id: string,
  label: string,
  tool: OfferedTool | undefined,
  input: Record<string, unknown>,
  parentId?: string,
): WatchedCall {
  options.emit({ type: 'tool_call', id, tool: label, input, ...(parentId !== undefined ? { parentId } : {}) })
  const skills = tool?.id === META_ACTIVATE || tool?.id === META_DEACTIVATE
  return {
    id,
    label,
    tool,
    input,
    ...(parentId !== undefined ? { parentId } : {}),
    ...(skills ? { skillsBefore: options.tools.callable() } : {}),
  }
}

/** A call's clock and execute_tool span: both start when the call may run (a refused call has neither, and a person's time is not the tool's). */
interface ToolClock {
  started: number
  span: SpanHandle | undefined
  /** Starts them, the span under `parent`; the call's `_meta` (the span's trace context). */
  start(parent: SpanHandle | Carrier | undefined): Record<string, unknown> | undefined
}

function toolClock(options: AgentOptions, call: WatchedCall): ToolClock {
  const clock: ToolClock = {
    started: 0,
    span: undefined,
    start(parent) {
      clock.started = performance.now()
      clock.span = options.tracing?.tracing.start(`execute_tool ${call.label}`, 'internal', parent, {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.label,
        'gen_ai.tool.call.id': call.id,
      })
      return clock.span ? { ...clock.span.carrier() } : undefined
    },
  }
  return clock
}

/**
 * How the engine follows the inner calls of a run_code call (`parentId`, its
 * tool_use id), which the door makes: each has its tool_call and tool_result
 * events, an execute_tool span under the run's, and a refused or unknown one
 * is a permission denial of the run, as the model's own call would be.
 */
function watchInner(
  options: AgentOptions,
  run: RunRecord,
  parentId: string,
  outer: ToolClock,
): NonNullable<ToolCall['watchInner']> {
  return async (call, send) => {
    const tool = options.tools.named(call.wireName)
    const watched = watchedCall(options, call.callId, tool?.id ?? call.wireName, tool, call.args, parentId)
    const clock = toolClock(options, watched)
    // Under the run's own span: its `tools/call` span where the runtime traces, else its execute_tool span.
    const sending = () => clock.start(carrierOf(call.sending?.()) ?? outer.span ?? options.tracing?.span)
    const done = await send({ ...call, sending })
    settle(options, run, watched, done, clock)
    return done
  }
}

/**
 * How a call that went through the door ended, told: its span ended, its
 * tool_result (and guard_blocked, skill_activated) events, a refused or
 * unknown tool recorded as a permission denial. The result, or the reason
 * the model is given.
 */
function settle(
  options: AgentOptions,
  run: RunRecord,
  call: WatchedCall,
  done: DoorOutcome,
  clock: ToolClock,
): { ok: true; result: CallToolResult } | { ok: false; reason: string } {
  const { emit } = options
  const parent = call.parentId !== undefined ? { parentId: call.parentId } : {}
  const failed = (durationMs: number, reason: string) => {
    emit({
      type: 'tool_result',
      id: call.id,
      tool: call.label,
      ok: false,
      durationMs,
      content: [{ type: 'text', text: reason }],
      ...parent,
    })
    return { ok: false as const, reason }
  }
  if (!done.sent) {
    options.tracing?.span.event('approval_denied', { 'gen_ai.tool.name': call.label })
    run.approvalDenied = true
    run.permissionDenials.push({ tool: call.label, id: call.id, reason: done.reason })
    return failed(0, done.reason)
  }
  const { outcome } = done
  clock.span?.end(
    outcome.ok ? (outcome.result.isError ? 'the tool answered isError' : undefined) : outcome.error.message,
  )
  const durationMs = Math.round(performance.now() - clock.started)
  if (!outcome.ok) {
    if (outcome.error.code === RpcCode.invalidParams)
      run.permissionDenials.push({ tool: call.label, id: call.id, reason: outcome.error.message })
    return failed(durationMs, outcome.error.message)
  }
  const ok = outcome.result.isError !== true
  if (outcome.down !== undefined) run.downCalls.set(call.label, outcome.down)
  else if (ok) run.downCalls.delete(call.label)
  const blocked = (
    outcome.result.structuredContent as { error?: { code?: string; rule?: string; message?: string } } | undefined
  )?.error
  if (blocked?.code === 'guard_blocked')
    emit({
      type: 'guard_blocked',
      id: call.id,
      tool: call.label,
      rule: blocked.rule ?? '',
      message: blocked.message ?? '',
    })
  emit({
    type: 'tool_result',
    id: call.id,
    tool: call.label,
    ok,
    durationMs,
    content: outcome.result.content ?? [],
    ...parent,
  })
  if (call.skillsBefore && ok)
    skillChanged(emit, call.tool!.id, call.input, call.skillsBefore, options.tools.callable())
  return { ok: true, result: outcome.result }
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
function describeApiError(error: unknown, baseUrl: string): NonNullable<AgentOutcome['error']> {
  const described = describeApiErrorAsIs(error, baseUrl)
  return { ...described, message: redactUrls(described.message) }
}

/** `baseUrl`: where the client sends its requests (ANTHROPIC_BASE_URL of the run's environment, or the API's own). */
function describeApiErrorAsIs(error: unknown, baseUrl: string): NonNullable<AgentOutcome['error']> {
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
      message: `cannot reach the Anthropic API at ${redactUrl(baseUrl)} (${detail}): check the network or ANTHROPIC_BASE_URL`,
    }
  return {
    code: e.error?.error?.type ?? 'api_error',
    status: e.status,
    message: `the Anthropic API answered ${e.status}: ${detail}`,
  }
}

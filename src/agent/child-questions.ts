import { pathToFileURL } from 'node:url'
import type Anthropic from '@anthropic-ai/sdk'
import type { ClientCapabilities, JSONRPCNotification, RequestId } from '@modelcontextprotocol/client'
import type { PrincipalView } from '../principal/view.js'
import type { CallOrigin, ConnectionHandle } from '../runtime/runtime.js'
import { neededCapability } from '../eras/modern/input-bridge.js'
import type { Budget } from './budget.js'
import type { TokenUsage } from './events.js'

/**
 * The agent as the client its children ask: a tool the model
 * calls may ask mid-call for a completion (`sampling/createMessage`), for
 * the person's input (`elicitation/create`) or for the client's roots. A
 * 2025 child asks with those requests; a 2026 child answers the call with
 * `input_required`, which the bridge (src/eras/modern/input-bridge.ts) turns
 * into the same requests. Both reach an AgentCall, the runtime's connection
 * for one tool call of the agent, which answers them:
 *
 * - sampling: the agent's own model, through the Messages API (its
 *   `maxTokens` capped by the agent's);
 * - elicitation: the person at the terminal (`myc chat` on a terminal);
 *   without one (`myc run`, piped chat) it is not offered at all, so a
 *   child never waits on nobody;
 * - roots: the agent's working directory.
 *
 * What the agent can answer is what the children are offered
 * (agentCapabilities), and what a modern child sees in the envelope.
 */

/** How the agent answers its children. */
export interface ChildAnswers {
  /** Asks the model (sampling): the 2025 result. */
  sample?: (server: string, params: Record<string, unknown>, signal: AbortSignal) => Promise<Record<string, unknown>>
  /** Asks the person (an elicitation form): the 2025 result. Absent: nobody to ask. */
  elicit?: (server: string, params: Record<string, unknown>, signal: AbortSignal) => Promise<Record<string, unknown>>
  /** The agent's roots. */
  roots: ReadonlyArray<{ uri: string; name?: string }>
}

/** The client capabilities that match what `answers` can answer. */
export function agentCapabilities(answers: ChildAnswers): ClientCapabilities {
  return {
    roots: {},
    ...(answers.sample ? { sampling: {} } : {}),
    ...(answers.elicit ? { elicitation: { form: {} } } : {}),
  }
}

/** The agent's roots: the folder it works in. */
export function workingDirectoryRoots(cwd: string): Array<{ uri: string; name: string }> {
  return [{ uri: pathToFileURL(cwd).href, name: 'working directory' }]
}

/**
 * One tool call of the agent, as the runtime's connection while it runs:
 * a child's question during it (the call's own request id) is answered by
 * ChildAnswers; nothing outside it.
 */
export class AgentCall implements ConnectionHandle {
  readonly origin: CallOrigin
  readonly clientHasRoots = true
  readonly clientCapabilities: ClientCapabilities

  constructor(
    private readonly view: PrincipalView,
    private readonly answers: ChildAnswers,
    id: string,
  ) {
    this.origin = { connection: this, requestId: `agent:${id}` as RequestId }
    this.clientCapabilities = agentCapabilities(answers)
  }

  catalogueChanged(): void {}
  childNotification(_server: string, _notification: JSONRPCNotification): void {}
  reaches(server: string): boolean {
    return this.view.serverVisible(server)
  }
  /** Not outside its call (the runtime asks this for a child's request outside any call). */
  canAnswer(): boolean {
    return false
  }

  async forwardRequest(
    server: string,
    method: string,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
    related?: RequestId,
  ): Promise<Record<string, unknown>> {
    if (related !== this.origin.requestId)
      throw new Error(
        `the agent answers ${method} only during its own tool call (asked by server "${server}" outside it)`,
      )
    const need = neededCapability(method, params, this.clientCapabilities)
    if (!need?.declared)
      throw new Error(
        `the agent cannot answer ${method}${need ? ` (it does not offer ${need.name})` : ''} (asked by server "${server}")`,
      )
    const asked = params ?? {}
    if (method === 'roots/list') return { roots: this.answers.roots.map((r) => ({ ...r })) }
    if (method === 'sampling/createMessage') return this.answers.sample!(server, asked, signal)
    return this.answers.elicit!(server, asked, signal)
  }
}

/** The Messages API's stop reason as MCP's. */
function stopReasonOf(reason: string | null | undefined): string | undefined {
  switch (reason) {
    case 'end_turn':
      return 'endTurn'
    case 'max_tokens':
      return 'maxTokens'
    case 'stop_sequence':
      return 'stopSequence'
    default:
      return reason ?? undefined
  }
}

type ApiBlock =
  { type: 'text'; text: string } | { type: 'image'; source: { type: 'base64'; media_type: string; data: string } }

/** One MCP sampling content block as a Messages API block (what the API cannot take becomes a line of text saying so). */
function apiBlock(block: unknown): ApiBlock {
  const b = (block ?? {}) as { type?: string; text?: unknown; data?: unknown; mimeType?: unknown }
  if (b.type === 'text' && typeof b.text === 'string') return { type: 'text', text: b.text }
  if (b.type === 'image' && typeof b.data === 'string' && typeof b.mimeType === 'string')
    return { type: 'image', source: { type: 'base64', media_type: b.mimeType, data: b.data } }
  return {
    type: 'text',
    text: `[${typeof b.type === 'string' ? b.type : 'unknown'} content omitted: the model takes text and images]`,
  }
}

/**
 * An MCP `sampling/createMessage` request as a Messages API request: its
 * messages (text and images), system prompt, temperature and stop
 * sequences; `maxTokens` capped at `maxTokensCap`. Pure.
 */
export function samplingRequest(
  params: Record<string, unknown>,
  model: string,
  maxTokensCap: number,
): {
  model: string
  max_tokens: number
  messages: Array<{ role: 'user' | 'assistant'; content: ApiBlock[] }>
  system?: string
  temperature?: number
  stop_sequences?: string[]
} {
  const messages = (Array.isArray(params.messages) ? params.messages : []).map((m) => {
    const message = (m ?? {}) as { role?: unknown; content?: unknown }
    const content = Array.isArray(message.content) ? message.content.map(apiBlock) : [apiBlock(message.content)]
    return { role: message.role === 'assistant' ? ('assistant' as const) : ('user' as const), content }
  })
  const asked =
    typeof params.maxTokens === 'number' && params.maxTokens > 0 ? Math.floor(params.maxTokens) : maxTokensCap
  return {
    model,
    max_tokens: Math.min(asked, maxTokensCap),
    messages,
    ...(typeof params.systemPrompt === 'string' && params.systemPrompt !== '' ? { system: params.systemPrompt } : {}),
    ...(typeof params.temperature === 'number' ? { temperature: params.temperature } : {}),
    ...(Array.isArray(params.stopSequences)
      ? { stop_sequences: params.stopSequences.filter((s): s is string => typeof s === 'string') }
      : {}),
  }
}

/** The Messages API's answer as an MCP sampling result: its text, the model that wrote it, why it stopped. Pure. */
export function samplingResult(message: {
  model: string
  stop_reason?: string | null
  content: ReadonlyArray<{ type: string; text?: string }>
}): Record<string, unknown> {
  const text = message.content
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '')
    .join('')
  const stopReason = stopReasonOf(message.stop_reason)
  return {
    role: 'assistant',
    content: { type: 'text', text },
    model: message.model,
    ...(stopReason ? { stopReason } : {}),
  }
}

/** Sampling by the agent's model (non-streaming Messages API request); the tokens each answer took go to `usage` (the run's totals count them). Through `budget`: a request past a cap is not sent, and the child gets the error. */
export function modelSampler(
  client: Pick<Anthropic, 'beta'>,
  model: string,
  maxTokensCap: number,
  note: (message: string) => void,
  usage?: TokenUsage,
  budget?: Budget,
): NonNullable<ChildAnswers['sample']> {
  return async (server, params, signal) => {
    const request = samplingRequest(params, model, maxTokensCap)
    note(`server "${server}" asked the model (sampling, up to ${request.max_tokens} tokens)`)
    const send = () =>
      client.beta.messages.create({ ...request, stream: false } as never, { signal }) as unknown as Promise<{
        usage?: Record<string, number | null>
      }>
    const message = (await (budget ? budget.send(request, send) : send())) as unknown as Parameters<
      typeof samplingResult
    >[0] & {
      usage?: {
        input_tokens?: number
        output_tokens?: number
        cache_read_input_tokens?: number | null
        cache_creation_input_tokens?: number | null
      }
    }
    if (usage && message.usage) {
      usage.inputTokens += message.usage.input_tokens ?? 0
      usage.outputTokens += message.usage.output_tokens ?? 0
      usage.cacheReadInputTokens += message.usage.cache_read_input_tokens ?? 0
      usage.cacheCreationInputTokens += message.usage.cache_creation_input_tokens ?? 0
    }
    return samplingResult(message)
  }
}

/** One field of an elicitation form's `requestedSchema` (a flat object of primitives, as MCP restricts it). */
interface FieldSchema {
  type?: string
  title?: string
  description?: string
  enum?: unknown[]
  oneOf?: Array<{ const?: unknown; title?: string }>
  default?: unknown
}

/** What the person typed for one field, as the field's type wants it; or what is wrong with it. Pure. */
export function parseFieldValue(
  field: FieldSchema,
  typed: string,
): { ok: true; value: unknown } | { ok: false; problem: string } {
  const text = typed.trim()
  const choices = field.enum ?? field.oneOf?.map((o) => o.const)
  if (choices && choices.length > 0) {
    const index = /^\d+$/.test(text) ? Number(text) - 1 : -1
    const picked = index >= 0 && index < choices.length ? choices[index] : choices.find((c) => String(c) === text)
    return picked !== undefined
      ? { ok: true, value: picked }
      : { ok: false, problem: `choose one of ${choices.map((c, i) => `${i + 1}) ${String(c)}`).join(', ')}` }
  }
  switch (field.type) {
    case 'boolean':
      if (/^(y|yes|true)$/i.test(text)) return { ok: true, value: true }
      if (/^(n|no|false)$/i.test(text)) return { ok: true, value: false }
      return { ok: false, problem: 'answer yes or no' }
    case 'integer':
    case 'number': {
      const value = Number(text)
      if (text === '' || !Number.isFinite(value)) return { ok: false, problem: 'type a number' }
      if (field.type === 'integer' && !Number.isInteger(value)) return { ok: false, problem: 'type a whole number' }
      return { ok: true, value }
    }
    default:
      return { ok: true, value: typed }
  }
}

/**
 * An elicitation form asked on the terminal, through `ask` (the chat's own
 * prompt, so nothing else reads the keystrokes): the server's message, then
 * accept / decline / cancel, then each field (an empty answer skips an
 * optional one, or takes its default).
 */
export function terminalElicitation(
  ask: (question: string) => Promise<string>,
  say: (line: string) => void,
): NonNullable<ChildAnswers['elicit']> {
  return async (server, params) => {
    say(`[${server}] asks: ${typeof params.message === 'string' ? params.message : '(no message)'}`)
    for (;;) {
      const reply = (await ask('Answer it? [y]es / [n]o (decline) / [c]ancel: ')).trim().toLowerCase()
      if (reply === 'n' || reply === 'no') return { action: 'decline' }
      if (reply === 'c' || reply === 'cancel') return { action: 'cancel' }
      if (reply === 'y' || reply === 'yes') break
    }
    const schema = (params.requestedSchema ?? {}) as { properties?: Record<string, FieldSchema>; required?: string[] }
    const content: Record<string, unknown> = {}
    for (const [name, field] of Object.entries(schema.properties ?? {})) {
      const required = schema.required?.includes(name) === true
      const choices = field.enum ?? field.oneOf?.map((o) => o.const)
      const hint = [
        field.description,
        choices ? choices.map((c, i) => `${i + 1}) ${String(c)}`).join(' ') : field.type,
        field.default !== undefined ? `default ${String(field.default)}` : required ? 'required' : 'optional',
      ]
        .filter(Boolean)
        .join('; ')
      for (;;) {
        const typed = await ask(`  ${field.title ?? name} (${hint}): `)
        if (typed.trim() === '' && !required) {
          if (field.default !== undefined) content[name] = field.default
          break
        }
        const parsed = parseFieldValue(field, typed)
        if (parsed.ok) {
          content[name] = parsed.value
          break
        }
        say(`  ${parsed.problem}`)
      }
    }
    return { action: 'accept', content }
  }
}

import { randomUUID } from 'node:crypto'
import type { ClientCapabilities } from '@modelcontextprotocol/client'
import type { InputSource } from '../../children/child-session.js'
import { RelayErrorCode, type RelayOutcome } from '../../protocol/request-relay.js'
import { isObject, RpcCode } from '../../protocol/facts.js'

/**
 * The modern→legacy bridge: a 2026-07-28 child answers a 2025
 * client's call with an `input_required` result; myc asks that client with
 * the real 2025 requests (elicitation/create, sampling/createMessage,
 * roots/list, on the call's own stream), collects the answers and retries
 * the child's request with `inputResponses` (keyed as the child keyed
 * `inputRequests`) and its `requestState`, round after round, as the SDK's
 * own server does for a 2025 client (its legacy shim): at most 8 rounds,
 * a round without input requests paced by 250 ms, a failure of a
 * `tools/call` answered as an `isError` result (the 2025 idiom), of
 * `prompts/get` and `resources/read` as `-32603`.
 *
 * The pure part (planRound, retryParams, bridgeFailure) is unit-tested;
 * runInputBridge drives the loop over three hooks.
 */

/** At most this many rounds of one call (the SDK server's legacy shim has the same cap). */
export const MAX_INPUT_ROUNDS = 8
/** Pause before retrying a round that carried only `requestState` (nothing else slows that loop down). */
const STATE_ONLY_PACING_MS = 250

/** One request to ask the client: the child's key for it, and the 2025 request. */
interface ClientAsk {
  key: string
  method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list'
  params: Record<string, unknown>
}

/** What one `input_required` result asks for: the requests to send, or why it cannot be done. */
export type RoundPlan =
  | { kind: 'ask'; asks: ClientAsk[]; requestState?: string }
  | { kind: 'missing'; key: string; method: string; capability: string }
  | { kind: 'invalid'; message: string }

/**
 * The client capability an embedded request needs, as `capability` (or
 * `capability.member`), and whether the client declared it. A bare
 * `elicitation: {}` means form mode (its 2025 meaning).
 */
export function neededCapability(
  method: string,
  params: Record<string, unknown> | undefined,
  caps: ClientCapabilities | undefined,
): { name: string; declared: boolean } | undefined {
  const declared = (caps ?? {}) as Record<string, unknown>
  switch (method) {
    case 'elicitation/create': {
      const elicitation = declared.elicitation
      if (params?.mode === 'url')
        return { name: 'elicitation.url', declared: isObject(elicitation) && elicitation.url !== undefined }
      return {
        name: 'elicitation',
        declared: isObject(elicitation) && (elicitation.form !== undefined || elicitation.url === undefined),
      }
    }
    case 'sampling/createMessage': {
      const sampling = declared.sampling
      if (params?.tools !== undefined || params?.toolChoice !== undefined)
        return { name: 'sampling.tools', declared: isObject(sampling) && sampling.tools !== undefined }
      return { name: 'sampling', declared: sampling !== undefined }
    }
    case 'roots/list':
      return { name: 'roots', declared: declared.roots !== undefined }
    default:
      return undefined
  }
}

/**
 * What a 2025 child gets for a question its caller did not declare the
 * capability for, when myc offered that capability to the child for every
 * caller (its requests carry no capabilities of their own): an answer a
 * client that has the capability may give, which grants nothing. A form or
 * URL elicitation is declined (no one could be asked), `roots/list` has no
 * roots; sampling has no such answer (undefined: the question is refused).
 */
export function standInAnswer(method: string): Record<string, unknown> | undefined {
  if (method === 'elicitation/create') return { action: 'decline' }
  if (method === 'roots/list') return { roots: [] }
  return undefined
}

/**
 * Turns a child's `input_required` result into the 2025 requests to send
 * the client (each keyed as the child keyed it), or says why it cannot:
 * a kind of request the client did not declare the capability for, or a
 * malformed result. URL-mode elicitation gets the `elicitationId` the 2025
 * request requires (the 2026 embedded shape has none).
 */
export function planRound(result: Record<string, unknown>, caps: ClientCapabilities | undefined): RoundPlan {
  const requestState = typeof result.requestState === 'string' ? result.requestState : undefined
  const requests = result.inputRequests
  if (requests !== undefined && !isObject(requests))
    return { kind: 'invalid', message: 'its inputRequests is not an object' }
  const asks: ClientAsk[] = []
  for (const [key, entry] of Object.entries(requests ?? {})) {
    if (!isObject(entry) || typeof entry.method !== 'string')
      return { kind: 'invalid', message: `input request "${key}" is not a request` }
    const params = entry.params === undefined ? {} : entry.params
    if (!isObject(params))
      return { kind: 'invalid', message: `input request "${key}" has params that are not an object` }
    const need = neededCapability(entry.method, params, caps)
    if (!need)
      return {
        kind: 'invalid',
        message: `input request "${key}" is ${entry.method}, which is not an elicitation, sampling or roots request`,
      }
    if (!need.declared) return { kind: 'missing', key, method: entry.method, capability: need.name }
    const method = entry.method as ClientAsk['method']
    const sent =
      method === 'elicitation/create' && params.mode === 'url' && params.elicitationId === undefined
        ? { ...params, elicitationId: randomUUID() }
        : params
    asks.push({ key, method, params: sent })
  }
  if (asks.length === 0 && requestState === undefined)
    return { kind: 'invalid', message: 'it has neither inputRequests nor requestState' }
  return { kind: 'ask', asks, ...(requestState !== undefined ? { requestState } : {}) }
}

/**
 * The params of the retry: the original request's (without any
 * `inputResponses` or `requestState` of its own), this round's answers
 * keyed as asked, and the child's `requestState` echoed byte for byte.
 */
export function retryParams(
  original: Record<string, unknown> | undefined,
  answers: ReadonlyArray<readonly [string, Record<string, unknown>]>,
  requestState: string | undefined,
): Record<string, unknown> {
  const { inputResponses: _r, requestState: _s, ...rest } = original ?? {}
  return {
    ...rest,
    ...(answers.length > 0
      ? { inputResponses: Object.fromEntries(answers.map(([key, answer]) => [key, bareResult(answer)])) }
      : {}),
    ...(requestState !== undefined ? { requestState } : {}),
  }
}

/** A client's answer as an embedded response: the bare result (the SDK drops entries that look wrapped, `{method, result}`). */
function bareResult(answer: Record<string, unknown>): Record<string, unknown> {
  const { method: _m, ...rest } = answer
  return rest
}

/**
 * The answer to the client when the bridge cannot complete the call: for
 * `tools/call` an `isError` result (the 2025 idiom, which the model reads;
 * what the same SDK child does for a 2025 client directly), for
 * `prompts/get` and `resources/read` the JSON-RPC error `-32603`.
 */
export function bridgeFailure(requestMethod: string, message: string, data: Record<string, unknown>): RelayOutcome {
  if (requestMethod === 'tools/call')
    return { ok: true, result: { content: [{ type: 'text', text: message }], isError: true } }
  return { ok: false, error: { code: RpcCode.internalError, message, data } }
}

/** The message for a request the client did not declare the capability for. */
export function missingCapabilityMessage(
  server: string,
  requestMethod: string,
  plan: { key: string; method: string; capability: string },
): string {
  return `Server "${server}" (MCP 2026-07-28) needs input to answer ${requestMethod}: ${plan.method} ("${plan.key}"), but the MCP client connected to mycelium did not declare the ${plan.capability} capability, so it cannot be asked.`
}

/** JSON-RPC code of a 2026 server's MissingRequiredClientCapability error. */
export const MISSING_CAPABILITY_CODE = RpcCode.missingRequiredClientCapability

/**
 * A modern child's `-32021` (it would need to ask the caller something the
 * caller did not declare; it saw the caller's capabilities in the envelope)
 * as a 2025 caller gets it: what the bridge answers when it cannot ask
 * (bridgeFailure), naming the capabilities, the child's own words kept.
 */
export function missingCapabilityFailure(
  server: string,
  requestMethod: string,
  error: { message: string; data?: unknown },
): RelayOutcome {
  const required = (error.data as { requiredCapabilities?: unknown } | undefined)?.requiredCapabilities
  const names = isObject(required) ? Object.keys(required) : []
  const what =
    names.length > 0 ? `the ${names.join(' and ')} capabilit${names.length > 1 ? 'ies' : 'y'}` : 'a capability it needs'
  const message = `Server "${server}" (MCP 2026-07-28) needs input to answer ${requestMethod}, but the MCP client connected to mycelium did not declare ${what}, so it cannot be asked (${error.message}).`
  return bridgeFailure(requestMethod, message, {
    server,
    method: requestMethod,
    ...(names.length > 0 ? { missingCapability: names.join(',') } : {}),
  })
}

export interface BridgeOptions {
  server: string
  /** The request the client made (tools/call, prompts/get, resources/read). */
  method: string
  /** Its params, as the child is to get them again on each retry (before the envelope). */
  params: Record<string, unknown> | undefined
  /** The child's first answer: an `input_required` result. */
  first: Record<string, unknown>
  source: InputSource
  /** Sends the child the request again with these params; resolves with its answer. */
  retry(params: Record<string, unknown>, signal: AbortSignal): Promise<RelayOutcome>
  /** Aborted when the client cancels the call: nothing more is asked or sent. */
  signal: AbortSignal
  /** The call's timeout (ms without an answer or progress), counted over the whole bridged call. */
  timeoutMs: number
  /** Pushes the deadline back (progress from the child): set by the bridge, called by the caller. */
  onProgressHook?: (touch: () => void) => void
  maxRounds?: number
}

const CANCELLED: RelayOutcome = { ok: false, error: { code: RelayErrorCode.cancelled, message: 'Request cancelled' } }

/** One bridged call across its rounds: its options, its deadline (pushed back by the child's progress), and the answer when it passes. */
interface BridgeRun {
  options: BridgeOptions
  deadline: number
  timedOut: RelayOutcome
}

/** How a round ended: the call's answer (a failure, a cancellation, the deadline), or the child's answer to the retry. */
type RoundEnd = { final: RelayOutcome } | { next: RelayOutcome }

/**
 * Drives the rounds: asks the client what the child asked (in parallel; the
 * first failure ends the round), retries the child with the answers, and
 * returns the child's first answer that is not `input_required`, or a
 * failure (see bridgeFailure). A cancelled call resolves at once with the
 * cancellation error and sends nothing more to the child. The call's
 * deadline covers everything: the client's answers count against it, as
 * they do when a 2025 child asks during its call.
 */
export async function runInputBridge(options: BridgeOptions): Promise<RelayOutcome> {
  const { server, method, source, signal } = options
  const maxRounds = options.maxRounds ?? MAX_INPUT_ROUNDS
  const run = startBridge(options)
  let current = options.first
  for (let round = 1; ; round++) {
    if (signal.aborted) return CANCELLED
    if (round > maxRounds)
      return bridgeFailure(
        method,
        `Server "${server}" (MCP 2026-07-28) still asked for input to answer ${method} after ${maxRounds} rounds; mycelium stopped asking.`,
        { server, method, rounds: maxRounds },
      )
    const plan = planRound(current, source.capabilities)
    if (plan.kind !== 'ask') return planFailure(options, plan)
    const ended = await runRound(run, plan)
    if ('final' in ended) return ended.final
    if (signal.aborted) return CANCELLED
    const next = ended.next
    if (!next.ok || next.result.resultType !== 'input_required') return next
    current = next.result
  }
}

/** The call's deadline from now, pushed back by each progress report of the child. */
function startBridge(options: BridgeOptions): BridgeRun {
  const run: BridgeRun = {
    options,
    deadline: Date.now() + options.timeoutMs,
    timedOut: {
      ok: false,
      error: {
        code: RelayErrorCode.timeout,
        message: `Request timed out after ${options.timeoutMs} ms`,
        data: { timeout: options.timeoutMs },
      },
    },
  }
  options.onProgressHook?.(() => {
    run.deadline = Date.now() + options.timeoutMs
  })
  return run
}

/** The answer when a round cannot be asked: a malformed result, or a request the client did not declare. */
function planFailure(options: BridgeOptions, plan: Exclude<RoundPlan, { kind: 'ask' }>): RelayOutcome {
  const { server, method } = options
  if (plan.kind === 'invalid')
    return bridgeFailure(
      method,
      `Server "${server}" (MCP 2026-07-28) answered ${method} with an input_required result mycelium cannot use: ${plan.message}.`,
      { server, method },
    )
  return bridgeFailure(method, missingCapabilityMessage(server, method, plan), {
    server,
    method,
    inputRequest: plan.method,
    missingCapability: plan.capability,
  })
}

/** One round: the client asked, then the child retried with the answers, all under one abort (the client's cancel, the deadline, a failed sibling request). */
async function runRound(run: BridgeRun, plan: Extract<RoundPlan, { kind: 'ask' }>): Promise<RoundEnd> {
  const { signal } = run.options
  const round = new AbortController()
  const onAbort = () => round.abort(signal.reason)
  signal.addEventListener('abort', onAbort, { once: true })
  const stopWatching = watchDeadline(run, round)
  try {
    const answered = await roundAnswers(run, plan, round)
    if ('final' in answered) return answered
    if (signal.aborted) return { final: CANCELLED }
    if (Date.now() >= run.deadline) return { final: run.timedOut }
    const next = await run.options.retry(
      retryParams(run.options.params, answered.answers, plan.requestState),
      round.signal,
    )
    if (!signal.aborted && round.signal.aborted) return { final: run.timedOut }
    return { next }
  } finally {
    stopWatching()
    signal.removeEventListener('abort', onAbort)
  }
}

/** Aborts the round at the deadline; the deadline moves with the child's progress, so the timer looks again when it fires. Returns what stops it. */
function watchDeadline(run: BridgeRun, round: AbortController): () => void {
  let timer: NodeJS.Timeout | undefined
  const watch = () => {
    if (Date.now() >= run.deadline) return round.abort(new Error('deadline'))
    timer = setTimeout(watch, run.deadline - Date.now())
    timer.unref()
  }
  watch()
  return () => clearTimeout(timer)
}

/** The client's answers to the round's requests (asked in parallel; the first failure aborts the others), or, with none to ask, a pause. */
async function roundAnswers(
  run: BridgeRun,
  plan: Extract<RoundPlan, { kind: 'ask' }>,
  round: AbortController,
): Promise<{ final: RelayOutcome } | { answers: Array<readonly [string, Record<string, unknown>]> }> {
  const { server, method, source, signal } = run.options
  if (plan.asks.length === 0) {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, STATE_ONLY_PACING_MS)
      round.signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true })
    })
    return { answers: [] }
  }
  try {
    const answers = await Promise.all(
      plan.asks.map(async (ask) => {
        try {
          return [ask.key, await source.ask(ask.method, ask.params, round.signal)] as const
        } catch (error) {
          round.abort(error)
          throw error
        }
      }),
    )
    return { answers }
  } catch (error) {
    if (signal.aborted) return { final: CANCELLED }
    if (Date.now() >= run.deadline) return { final: run.timedOut }
    return {
      final: bridgeFailure(
        method,
        `Server "${server}" (MCP 2026-07-28) asked for input to answer ${method}, and asking the MCP client connected to mycelium failed: ${error instanceof Error ? error.message : String(error)}`,
        { server, method },
      ),
    }
  }
}

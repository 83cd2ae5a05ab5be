import { randomUUID } from 'node:crypto'
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  type ClientCapabilities,
} from '@modelcontextprotocol/server'
import type { JSONRPCNotification, LoggingLevel, RequestId } from '@modelcontextprotocol/client'
import { neededCapability, standInAnswer } from './input-bridge.js'
import { Cancellation } from '../../protocol/cancellation.js'
import type { ProgressParams, RelayOutcome } from '../../protocol/request-relay.js'
import type { PrincipalView } from '../../principal/view.js'
import type { CallOrigin, ConnectionHandle, Runtime } from '../../runtime/runtime.js'
import type { ChildConnection } from '../../children/child.js'
import { isObject, RpcCode } from '../../protocol/facts.js'

/**
 * The legacy→modern bridge. A 2025-era child asks its client
 * (elicitation/create, sampling/createMessage, roots/list) in the middle of a
 * call that a 2026-07-28 client made, and a 2026 client cannot be sent a
 * request: it is answered with an `input_required` result instead. So the
 * child's call is *parked*: it keeps running, its questions wait, and the
 * client gets `{ resultType: "input_required", inputRequests, requestState }`
 * with one entry per question. The client's retry (the same request plus
 * `inputResponses` and the `requestState`) answers the waiting questions,
 * and is answered with the child's result, or with the next questions.
 *
 * - Questions asked together (a child's Promise.all) are gathered into one
 *   round: a round closes when no new question came for QUIET_MS.
 * - A question the client did not declare the capability for is not put to
 *   it: the child gets at once what a client with the capability may answer
 *   and that grants nothing (an elicitation declined, no roots), or, for
 *   sampling, a refusal; the client is asked only what it declared (the
 *   child saw myc's capabilities at initialize, not the request's). When
 *   the call then fails, the client gets `-32021` naming what it lacked.
 * - `requestState` is myc's: HMAC-sealed (the SDK's codec, a key per
 *   process), bound to the method and the credential, and naming the parked
 *   call; a tampered, expired or foreign one is `-32602`. The call lives in
 *   this process, so a retry must reach the same replica.
 * - A retry that never comes: the child's call is still bound by its
 *   server's `timeoutMs` (as when a 2025 client is asked), and a parked
 *   call nobody asks after is cancelled after MAX_WAIT_MS.
 * - Answers are checked for their shape (`-32602` naming the key); keys
 *   the call did not ask are ignored; questions left unanswered are asked
 *   again.
 */

/** A round of questions closes when none came for this long. */
export const QUIET_MS = 25
/** A round of questions closes after this long at most. */
const MAX_GATHER_MS = 250
/** A parked call with questions out and no retry for this long is cancelled. */
export const MAX_WAIT_MS = 600_000
/** A finished call's answer is kept this long for the retry that collects it. */
export const LINGER_MS = 60_000
/** Parked calls kept at most per registry: beyond it, a child's question is refused as before. */
export const MAX_PARKED = 256
/** What starts myc's own requestState (the children's pass through untouched). */
export const STATE_PREFIX = 'myc.'

/** What children are offered when their callers speak 2026-07-28: all a question can be carried as in an input_required result. */
export const BRIDGED_CHILD_CAPABILITIES: ClientCapabilities = {
  roots: { listChanged: true },
  sampling: {},
  elicitation: { form: {}, url: {} },
}

/** The methods a child may ask during a call, and the key prefix of their questions. */
const KEY_PREFIX: Readonly<Record<string, string>> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
}

/**
 * What is wrong with the client's answer to one question, or undefined:
 * the shape each 2025 result has (elicitation: an `action`; sampling: a
 * `role` and `content`; roots: a `roots` array of `{ uri }`).
 */
export function inputResponseProblem(method: string, value: unknown): string | undefined {
  if (!isObject(value)) return 'is not an object'
  switch (method) {
    case 'elicitation/create':
      if (value.action !== 'accept' && value.action !== 'decline' && value.action !== 'cancel')
        return 'needs "action": "accept", "decline" or "cancel"'
      if (value.content !== undefined && !isObject(value.content)) return 'has "content" that is not an object'
      return undefined
    case 'sampling/createMessage':
      if (typeof value.role !== 'string') return 'needs a "role"'
      if (!isObject(value.content) && !Array.isArray(value.content)) return 'needs "content"'
      return undefined
    case 'roots/list':
      if (!Array.isArray(value.roots) || !value.roots.every((r) => isObject(r) && typeof r.uri === 'string'))
        return 'needs "roots": an array of { "uri": … }'
      return undefined
    default:
      return undefined
  }
}

/** The `requiredCapabilities` of a -32021 for capability names such as `sampling` or `elicitation.url`. */
export function requiredCapabilities(names: Iterable<string>): ClientCapabilities {
  const caps: Record<string, Record<string, unknown>> = {}
  for (const name of names) {
    const [top, member] = name.split('.') as [string, string | undefined]
    const entry = (caps[top] ??= {})
    if (member) entry[member] = {}
  }
  return caps as ClientCapabilities
}

/** Where the request currently waiting on a parked call wants its log messages and progress. */
export interface RoundSink {
  log(level: LoggingLevel, data: unknown, server: string): void
  progress(progress: ProgressParams): void
}

/** What a request waiting on a parked call is answered with. */
export type ParkedStep =
  | { kind: 'done'; outcome: RelayOutcome | undefined }
  | { kind: 'ask'; inputRequests: Record<string, { method: string; params: Record<string, unknown> }> }

/** Where a call is now, without waiting (ParkedCall.snapshot): still running, waiting for answers to its questions, or ended. */
export type ParkedSnapshot =
  | { kind: 'working' }
  | { kind: 'input_required'; inputRequests: Record<string, { method: string; params: Record<string, unknown> }> }
  | { kind: 'done'; outcome: RelayOutcome | undefined }

interface Question {
  method: string
  params: Record<string, unknown>
  resolve(answer: Record<string, unknown>): void
  reject(error: unknown): void
}

/** What one call is, for matching its retries: the method and what it names (tool, prompt, URI). */
export interface CallTarget {
  method: string
  name: string
}

/**
 * One forwarded request of a 2026 client, as the runtime's caller for its
 * whole length (all its rounds): a child's question waits here for the
 * client's retry, a child's log message goes to the round in progress.
 */
export class ParkedCall implements ConnectionHandle {
  readonly id = randomUUID()
  readonly origin: CallOrigin
  /** Cancels the child's call: the client went away, or never came back. */
  readonly cancellation = new Cancellation()
  readonly clientHasRoots = false
  /** What the client declared in the request (each retry says it again). */
  clientCapabilities: ClientCapabilities | undefined
  /** The connection that answered the call (a scoped server's: the caller's instance), where a task it made lives. */
  answeredBy: ChildConnection | undefined
  private readonly questions = new Map<string, Question>()
  private asked = 0
  private lastQuestionAt = 0
  private finished: { outcome: RelayOutcome | undefined } | undefined
  /** Capabilities a question was refused for (the client did not declare them). */
  private readonly refused = new Set<string>()
  private wakers: Array<() => void> = []
  private sink: RoundSink | undefined
  private waitTimer: NodeJS.Timeout | undefined

  constructor(
    private readonly runtime: Runtime,
    private readonly view: PrincipalView,
    readonly target: CallTarget,
    /** Who the call belongs to (a credential's key): a retry must come from the same. */
    readonly principal: string,
    private readonly registry: { finished(call: ParkedCall): void; mayPark(call: ParkedCall): boolean },
  ) {
    this.origin = { connection: this, requestId: `parked:${this.id}` as RequestId }
  }

  /** Starts the child's call with this as its caller; resolves at once. */
  start(run: (origin: CallOrigin) => Promise<RelayOutcome | undefined>): void {
    this.runtime.addConnection(this)
    run(this.origin).then(
      (outcome) => this.finish(outcome),
      (error: unknown) =>
        this.finish({
          ok: false,
          error: { code: RpcCode.internalError, message: error instanceof Error ? error.message : String(error) },
        }),
    )
  }

  private finish(outcome: RelayOutcome | undefined): void {
    if (this.finished) return
    this.finished = { outcome }
    clearTimeout(this.waitTimer)
    for (const q of this.questions.values()) q.reject(new Error('the call ended'))
    this.questions.clear()
    this.runtime.removeConnection(this)
    this.wake()
    this.registry.finished(this)
  }

  private wake(): void {
    const wakers = this.wakers
    this.wakers = []
    for (const w of wakers) w()
  }

  /** Resolves on the next question or the end of the call, or after `ms`; rejects when `signal` aborts. */
  private change(signal: AbortSignal, ms?: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined
      const done = () => {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = () => {
        clearTimeout(timer)
        this.wakers = this.wakers.filter((w) => w !== done)
        reject(signal.reason ?? new Error('aborted'))
      }
      if (signal.aborted) return onAbort()
      signal.addEventListener('abort', onAbort, { once: true })
      this.wakers.push(done)
      if (ms !== undefined) timer = setTimeout(done, Math.max(0, ms))
    })
  }

  /**
   * Waits for what the request in progress is to be answered with: the
   * call's outcome, or the questions out (all of them: those asked again
   * too). Rejects when `signal` aborts (the client gave up on the request).
   */
  async next(signal: AbortSignal, sink: RoundSink): Promise<ParkedStep> {
    clearTimeout(this.waitTimer)
    this.sink = sink
    try {
      for (;;) {
        if (this.finished) return { kind: 'done', outcome: this.finished.outcome }
        if (this.questions.size > 0) {
          const opened = Date.now()
          while (!this.finished && Date.now() - this.lastQuestionAt < QUIET_MS && Date.now() - opened < MAX_GATHER_MS)
            await this.change(signal, QUIET_MS - (Date.now() - this.lastQuestionAt))
          if (this.finished || this.questions.size === 0) continue
          this.waitTimer = setTimeout(
            () => this.cancellation.cancel('no retry came for the input it asked for'),
            MAX_WAIT_MS,
          )
          this.waitTimer.unref()
          return { kind: 'ask', inputRequests: this.inputRequests() }
        }
        await this.change(signal)
      }
    } finally {
      if (this.sink === sink) this.sink = undefined
    }
  }

  /**
   * Where the call is now, without waiting and without changing anything
   * (a task polls it: src/eras/modern/hosted-tasks.ts): ended, with its outcome;
   * questions out once their round closed (no new one for QUIET_MS), all of
   * them; else working (a round still gathering counts as working).
   */
  snapshot(): ParkedSnapshot {
    if (this.finished) return { kind: 'done', outcome: this.finished.outcome }
    if (this.questions.size > 0 && Date.now() - this.lastQuestionAt >= QUIET_MS)
      return { kind: 'input_required', inputRequests: this.inputRequests() }
    return { kind: 'working' }
  }

  /**
   * Waits at most `ms` for the call to end or to ask something, the
   * request's log messages and progress going to `sink` meanwhile (as in
   * next()); then says where it is (snapshot). Nothing is cancelled when
   * the time is up: the call goes on. Rejects when `signal` aborts.
   */
  async settle(ms: number, signal: AbortSignal, sink: RoundSink): Promise<ParkedSnapshot> {
    const until = Date.now() + ms
    this.sink = sink
    try {
      while (!this.finished && this.questions.size === 0 && Date.now() < until)
        await this.change(signal, until - Date.now())
    } finally {
      if (this.sink === sink) this.sink = undefined
    }
    return this.snapshot()
  }

  private inputRequests(): Record<string, { method: string; params: Record<string, unknown> }> {
    return Object.fromEntries([...this.questions].map(([key, q]) => [key, { method: q.method, params: q.params }]))
  }

  /**
   * Gives the client's answers to the questions they are keyed for; keys
   * of no question out are ignored. Throws -32602 (nothing answered) when
   * an answer does not have its request's result shape.
   */
  answer(responses: Record<string, unknown> | undefined): void {
    const given: Array<[Question, Record<string, unknown>]> = []
    for (const [key, value] of Object.entries(responses ?? {})) {
      const question = this.questions.get(key)
      if (!question) continue
      const problem = inputResponseProblem(question.method, value)
      if (problem)
        throw new ProtocolError(
          RpcCode.invalidParams,
          `inputResponses["${key}"] ${problem} (it answers ${question.method})`,
          { key, method: question.method },
        )
      given.push([question, value as Record<string, unknown>])
    }
    for (const [question, value] of given) {
      for (const [key, q] of this.questions) if (q === question) this.questions.delete(key)
      question.resolve(value)
    }
  }

  /**
   * The call's outcome as the client gets it: when the client lacked a
   * capability a question needed and the call then failed, `-32021` naming
   * what it lacks (the reason it failed); else the outcome as it is.
   */
  explain(outcome: RelayOutcome | undefined): RelayOutcome | undefined {
    if (!outcome || this.refused.size === 0) return outcome
    const failed = !outcome.ok || (outcome.result as { isError?: unknown }).isError === true
    if (!failed) return outcome
    const required = requiredCapabilities(this.refused)
    const error = new MissingRequiredClientCapabilityError(
      { requiredCapabilities: required },
      `The request needs client capabilities it did not declare (${[...this.refused].join(', ')}): a server behind mycelium asked for them during the call.`,
    )
    return { ok: false, error: { code: error.code, message: error.message, data: error.data } }
  }

  // ConnectionHandle: how the runtime reaches this call's client.

  catalogueChanged(): void {}

  childNotification(server: string, notification: JSONRPCNotification, related?: RequestId): void {
    // Only what belongs to this call, while a request of the client is there to carry it.
    if (
      related === undefined ||
      notification.method !== 'notifications/message' ||
      !this.sink ||
      !this.view.serverVisible(server)
    )
      return
    const params = (notification.params ?? {}) as { level?: LoggingLevel; data?: unknown }
    if (typeof params.level === 'string') this.sink.log(params.level, params.data, server)
  }

  /** The child's latest progress report for this call (a task myc holds says it as its statusMessage). */
  lastProgress: ProgressParams | undefined

  /** Progress of the child's call, to the request in progress (none between rounds), and kept as the latest. */
  progress(progress: ProgressParams): void {
    this.lastProgress = progress
    this.sink?.progress(progress)
  }

  reaches(server: string): boolean {
    return this.view.serverVisible(server)
  }

  /** Never outside its call (what the runtime asks this for): a question within it comes with the call's id. */
  canAnswer(): boolean {
    return false
  }

  /**
   * Questions are out to the client and no request of it is here: the call
   * waits for a retry (or, held by a task, for tasks/update). Not while its
   * round is still gathering (a question came within QUIET_MS): a new
   * question then is likelier this call's (a child's Promise.all), which
   * matters for a task, whose call no request waits on.
   */
  awaitingClient(): boolean {
    return this.questions.size > 0 && this.sink === undefined && Date.now() - this.lastQuestionAt >= QUIET_MS
  }

  forwardRequest(
    server: string,
    method: string,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
    related?: RequestId,
  ): Promise<Record<string, unknown>> {
    // A 2026 client is asked only within its own request: a question outside this call is not its to answer.
    if (related !== this.origin.requestId)
      return Promise.reject(
        new ProtocolError(
          RpcCode.methodNotFound,
          `A 2026-07-28 client can be asked ${method} only during its own request (asked by server "${server}" outside it)`,
        ),
      )
    const prefix = KEY_PREFIX[method]
    if (!prefix)
      return Promise.reject(
        new ProtocolError(
          RpcCode.methodNotFound,
          `A 2026-07-28 client cannot be asked ${method} during a call (asked by server "${server}")`,
        ),
      )
    const need = neededCapability(method, params, this.clientCapabilities)
    if (!need?.declared) {
      this.refused.add(need?.name ?? prefix)
      // What a client with the capability may answer (a decline, no roots), so the call goes on with what the client declared; sampling is refused.
      const standIn = standInAnswer(method)
      if (standIn) return Promise.resolve(standIn)
      return Promise.reject(
        new ProtocolError(
          RpcCode.methodNotFound,
          `The MCP client connected to mycelium did not declare the ${need?.name ?? prefix} capability, so it cannot be asked ${method} (asked by server "${server}")`,
        ),
      )
    }
    if (this.finished) return Promise.reject(new Error('the call ended'))
    if (!this.registry.mayPark(this))
      return Promise.reject(
        new ProtocolError(
          RpcCode.internalError,
          `mycelium has ${MAX_PARKED} calls waiting for their clients' input already, so ${method} (asked by server "${server}") is refused`,
        ),
      )
    const { _meta: _drop, ...asked } = params ?? {}
    const key = `${prefix}_${++this.asked}`
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const onAbort = () => {
        if (this.questions.delete(key)) reject(signal.reason ?? new Error('cancelled'))
      }
      this.questions.set(key, {
        method,
        params: asked,
        resolve: (answer) => (signal.removeEventListener('abort', onAbort), resolve(answer)),
        reject: (error) => (signal.removeEventListener('abort', onAbort), reject(error)),
      })
      signal.addEventListener('abort', onAbort, { once: true })
      this.lastQuestionAt = Date.now()
      this.wake()
    })
  }
}

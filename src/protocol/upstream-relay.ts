import type { JSONRPCMessage, RequestId, TransportSendOptions } from '@modelcontextprotocol/client'
import { Cancellation } from './cancellation.js'
import type { ProgressParams, RelayOutcome } from './request-relay.js'
import { RpcCode } from './facts.js'
import { sentOk } from './line-writer.js'

/** What a forwarded-request handler gets besides the params. */
export interface ForwardContext {
  /** The client's id of the request being handled. */
  requestId: RequestId
  /** Cancelled when the client cancels the request or goes away. */
  cancellation: Cancellation
  /** Present when the client asked for progress: sends it with the client's own token. */
  onProgress?: ((progress: ProgressParams) => void) | undefined
}

/** Handles one forwarded method; `undefined` means "send no response" (cancelled). */
export type ForwardHandler<C extends ForwardContext = ForwardContext> = (
  params: Record<string, unknown> | undefined,
  ctx: C,
) => Promise<RelayOutcome | undefined>

/** Makes the context of one forwarded request (its owner adds who is calling; made once per request, in one shape). */
export type ContextFactory<C extends ForwardContext> = (
  requestId: RequestId,
  cancellation: Cancellation,
  onProgress: ((progress: ProgressParams) => void) | undefined,
) => C

const failure = (error: unknown): RelayOutcome => ({
  ok: false,
  error: { code: RpcCode.internalError, message: error instanceof Error ? error.message : String(error) },
})

/**
 * The client-facing half of the hot path: requests for the forwarded methods
 * (tools/call, prompts/get, resources/read, completion/complete) are taken off
 * the transport before the SDK's Server parses them, answered by a handler,
 * and the child's result goes back as it came, under the client's request id.
 * Cancellation from the client aborts the handler; progress goes out with the
 * client's progress token.
 *
 * Every relayed call passes here, so it allocates little: one context per
 * request (from the owner's factory, not copied again down the call) and a
 * promise reaction, no async frame of its own.
 */
export class UpstreamRelay<C extends ForwardContext = ForwardContext> {
  private readonly inFlight = new Map<RequestId, Cancellation>()

  constructor(
    /** Sends to the client; `relatedRequestId` keeps a message on its request's stream (Streamable HTTP). */
    private readonly send: (message: JSONRPCMessage, options?: TransportSendOptions) => Promise<void>,
    private readonly handlers: ReadonlyMap<string, ForwardHandler<C>>,
    private readonly onError: (error: unknown) => void,
    private readonly context: ContextFactory<C> = (requestId, cancellation, onProgress) =>
      ({ requestId, cancellation, onProgress }) as C,
  ) {}

  readonly intercept = (message: JSONRPCMessage): boolean => {
    const m = message as { id?: RequestId; method?: string; params?: Record<string, unknown> }
    if (m.method === undefined) return false
    if (m.id === undefined) {
      if (m.method !== 'notifications/cancelled') return false
      const requestId = (m.params as { requestId?: RequestId } | undefined)?.requestId
      const cancellation = requestId === undefined ? undefined : this.inFlight.get(requestId)
      if (!cancellation) return false
      cancellation.cancel((m.params as { reason?: unknown }).reason ?? 'cancelled by the client')
      return true
    }
    const handler = this.handlers.get(m.method)
    if (!handler) return false
    this.handle(m.id, handler, m.params)
    return true
  }

  private handle(id: RequestId, handler: ForwardHandler<C>, params: Record<string, unknown> | undefined): void {
    const cancellation = new Cancellation()
    this.inFlight.set(id, cancellation)
    const token = (params?._meta as { progressToken?: unknown } | undefined)?.progressToken
    const onProgress = typeof token === 'string' || typeof token === 'number' ? this.progressOf(id, token) : undefined
    let answer: Promise<RelayOutcome | undefined>
    try {
      answer = handler(params, this.context(id, cancellation, onProgress))
    } catch (error) {
      answer = Promise.resolve(failure(error))
    }
    answer.then(
      (outcome) => this.answer(id, cancellation, outcome),
      (error: unknown) => this.answer(id, cancellation, failure(error)),
    )
  }

  private progressOf(id: RequestId, token: string | number): (progress: ProgressParams) => void {
    return (progress) => {
      this.send(
        { jsonrpc: '2.0', method: 'notifications/progress', params: { ...progress, progressToken: token } },
        { relatedRequestId: id },
      ).catch(this.onError)
    }
  }

  private answer(id: RequestId, cancellation: Cancellation, outcome: RelayOutcome | undefined): void {
    if (this.inFlight.get(id) === cancellation) this.inFlight.delete(id)
    // A cancelled request gets no response (MCP cancellation rules).
    if (!outcome || cancellation.aborted) return
    let sent: Promise<void>
    try {
      sent = this.send(
        outcome.ok ? { jsonrpc: '2.0', id, result: outcome.result } : { jsonrpc: '2.0', id, error: outcome.error },
      )
    } catch (error) {
      this.onError(error)
      return
    }
    if (!sentOk(sent)) sent.catch(this.onError)
  }

  /** Cancels every forwarded call (the client went away). */
  abortAll(): void {
    for (const cancellation of this.inFlight.values()) cancellation.cancel('client disconnected')
    this.inFlight.clear()
  }
}

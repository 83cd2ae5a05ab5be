import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/client'
import type { ProgressParams, RelayOutcome } from '../protocol/request-relay.js'

/** What a forwarded-request handler gets besides the params. */
export interface ForwardContext {
  signal: AbortSignal
  /** Present when the client asked for progress: sends it with the client's own token. */
  onProgress?: (progress: ProgressParams) => void
}

/** Handles one forwarded method; `undefined` means "send no response" (cancelled). */
export type ForwardHandler = (params: Record<string, unknown> | undefined, ctx: ForwardContext) => Promise<RelayOutcome | undefined>

/**
 * The client-facing half of the hot path: requests for the forwarded methods
 * (tools/call, prompts/get, resources/read, completion/complete) are taken off
 * the transport before the SDK's Server parses them, answered by a handler,
 * and the child's result goes back as it came, under the client's request id.
 * Cancellation from the client aborts the handler; progress goes out with the
 * client's progress token.
 */
export class UpstreamRelay {
  private readonly inFlight = new Map<RequestId, AbortController>()

  constructor(
    private readonly send: (message: JSONRPCMessage) => Promise<void>,
    private readonly handlers: ReadonlyMap<string, ForwardHandler>,
    private readonly onError: (error: unknown) => void,
  ) {}

  readonly intercept = (message: JSONRPCMessage): boolean => {
    const m = message as { id?: RequestId; method?: string; params?: Record<string, unknown> }
    if (m.method === undefined) return false
    if (m.id === undefined) {
      if (m.method !== 'notifications/cancelled') return false
      const requestId = (m.params as { requestId?: RequestId } | undefined)?.requestId
      const controller = requestId === undefined ? undefined : this.inFlight.get(requestId)
      if (!controller) return false
      controller.abort((m.params as { reason?: unknown }).reason ?? 'cancelled by the client')
      return true
    }
    const handler = this.handlers.get(m.method)
    if (!handler) return false
    this.handle(m.id, handler, m.params)
    return true
  }

  private handle(id: RequestId, handler: ForwardHandler, params: Record<string, unknown> | undefined): void {
    const controller = new AbortController()
    this.inFlight.set(id, controller)
    const token = (params?._meta as { progressToken?: unknown } | undefined)?.progressToken
    const onProgress =
      typeof token === 'string' || typeof token === 'number'
        ? (progress: ProgressParams) => {
            void this.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { ...progress, progressToken: token } }).catch(this.onError)
          }
        : undefined
    handler(params, { signal: controller.signal, onProgress })
      .catch((error: unknown): RelayOutcome => ({ ok: false, error: { code: -32603, message: error instanceof Error ? error.message : String(error) } }))
      .then((outcome) => {
        this.inFlight.delete(id)
        // A cancelled request gets no response (MCP cancellation rules).
        if (!outcome || controller.signal.aborted) return
        return this.send(outcome.ok ? { jsonrpc: '2.0', id, result: outcome.result } : { jsonrpc: '2.0', id, error: outcome.error })
      })
      .catch(this.onError)
  }

  /** Aborts every forwarded call (the client went away). */
  abortAll(): void {
    for (const controller of this.inFlight.values()) controller.abort('client disconnected')
    this.inFlight.clear()
  }
}

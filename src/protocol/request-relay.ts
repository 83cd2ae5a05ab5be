import type { JSONRPCMessage } from '@modelcontextprotocol/client'

/** A JSON-RPC error object as it travels on the wire. */
export interface WireError {
  code: number
  message: string
  data?: unknown
}

/** What a relayed request came back with: the child's result or error, untouched. */
export type RelayOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; error: WireError }

/** Progress as the child reported it (without its token). */
export interface ProgressParams {
  progress: number
  total?: number
  message?: string
}

export interface RelayRequestOptions {
  /** Fails the call after this long without a response or progress. */
  timeoutMs: number
  /** Aborting sends `notifications/cancelled` to the peer and settles with a cancellation error. */
  signal?: AbortSignal
  /** When set, the peer is asked for progress, and each report resets the timeout. */
  onProgress?: (progress: ProgressParams) => void
}

interface Pending {
  resolve: (outcome: RelayOutcome) => void
  timer: NodeJS.Timeout
  timeoutMs: number
  onProgress?: (progress: ProgressParams) => void
  cleanup: () => void
}

/** JSON-RPC error codes the relay produces itself. */
export const RelayErrorCode = {
  /** The SDK's RequestTimeout. */
  timeout: -32001,
  /** The peer went away (crash, restart, shutdown) before answering. */
  connectionClosed: -32000,
  cancelled: -32800,
} as const

/**
 * Sends requests to one peer below the SDK's request layer and matches the
 * responses: the hot path of a proxied call. Request ids are strings with a
 * prefix the SDK never uses (it numbers its own), so the relay and an SDK
 * Client can share a transport: feed every incoming message to `intercept`
 * first. The progress token of a relayed call is its id.
 */
export class RequestRelay {
  private nextId = 0
  private readonly pending = new Map<string, Pending>()

  constructor(
    private readonly send: (message: JSONRPCMessage) => Promise<void>,
    private readonly prefix = 'myc-',
  ) {}

  /** Number of calls waiting for an answer. */
  get inFlight(): number {
    return this.pending.size
  }

  request(method: string, params: Record<string, unknown> | undefined, options: RelayRequestOptions): Promise<RelayOutcome> {
    const id = `${this.prefix}${++this.nextId}`
    let sentParams = params
    if (options.onProgress) {
      const meta = (params?._meta ?? {}) as Record<string, unknown>
      sentParams = { ...params, _meta: { ...meta, progressToken: id } }
    } else if (params?._meta && typeof params._meta === 'object' && 'progressToken' in params._meta) {
      // A token meant for the caller must not reach the peer: its progress would carry a token nobody maps.
      const { progressToken: _drop, ...meta } = params._meta as Record<string, unknown>
      sentParams = { ...params, _meta: meta }
    }
    return new Promise<RelayOutcome>((resolve) => {
      const onAbort = () => {
        this.settle(id, { ok: false, error: { code: RelayErrorCode.cancelled, message: 'Request cancelled' } })
        void this.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(options.signal?.reason ?? 'cancelled by the client') } }).catch(() => {})
      }
      const entry: Pending = {
        resolve,
        timeoutMs: options.timeoutMs,
        timer: this.startTimer(id, options.timeoutMs),
        onProgress: options.onProgress,
        cleanup: () => options.signal?.removeEventListener('abort', onAbort),
      }
      this.pending.set(id, entry)
      if (options.signal?.aborted) {
        onAbort()
        return
      }
      options.signal?.addEventListener('abort', onAbort, { once: true })
      const message = sentParams === undefined ? { jsonrpc: '2.0' as const, id, method } : { jsonrpc: '2.0' as const, id, method, params: sentParams }
      this.send(message).catch((error: unknown) => {
        this.settle(id, { ok: false, error: { code: RelayErrorCode.connectionClosed, message: `Could not send the request: ${error instanceof Error ? error.message : String(error)}` } })
      })
    })
  }

  private startTimer(id: string, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.settle(id, { ok: false, error: { code: RelayErrorCode.timeout, message: `Request timed out after ${ms} ms`, data: { timeout: ms } } })
      void this.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'timed out' } }).catch(() => {})
    }, ms)
    timer.unref()
    return timer
  }

  private settle(id: string, outcome: RelayOutcome): void {
    const entry = this.pending.get(id)
    if (!entry) return
    this.pending.delete(id)
    clearTimeout(entry.timer)
    entry.cleanup()
    entry.resolve(outcome)
  }

  /**
   * Takes the responses and progress notifications that belong to relayed
   * calls; returns false for everything else (the SDK's business).
   */
  readonly intercept = (message: JSONRPCMessage): boolean => {
    const m = message as { id?: unknown; method?: string; params?: { progressToken?: unknown }; result?: unknown; error?: WireError }
    if (m.method === undefined) {
      if (typeof m.id !== 'string' || !this.pending.has(m.id)) return false
      this.settle(m.id, m.error ? { ok: false, error: m.error } : { ok: true, result: (m.result ?? {}) as Record<string, unknown> })
      return true
    }
    if (m.method === 'notifications/progress') {
      const token = m.params?.progressToken
      if (typeof token !== 'string') return false
      const entry = this.pending.get(token)
      if (!entry) return false
      clearTimeout(entry.timer)
      entry.timer = this.startTimer(token, entry.timeoutMs)
      const { progressToken: _token, ...progress } = m.params as ProgressParams & { progressToken: unknown }
      entry.onProgress?.(progress)
      return true
    }
    return false
  }

  /** Settles every waiting call with the same error (the peer is gone). */
  failAll(message: string): void {
    for (const id of [...this.pending.keys()]) this.settle(id, { ok: false, error: { code: RelayErrorCode.connectionClosed, message } })
  }
}

import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import type { Cancellation } from './cancellation.js'
import { RpcCode } from './facts.js'
import { sentOk } from './line-writer.js'

/** The key of what a relay's own error was made from (the error a send threw): local only, never written on the wire (JSON leaves symbol keys out). */
export const relayCause: unique symbol = Symbol('relayCause')

/** A JSON-RPC error object as it travels on the wire. */
export interface WireError {
  code: number
  message: string
  data?: unknown
  [relayCause]?: unknown
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
  /** Fails the call after this long without a response or progress (else the `defaultTimeoutMs` of the request). */
  timeoutMs?: number | undefined
  /** Cancelling sends `notifications/cancelled` to the peer and settles with a cancellation error. */
  cancellation?: Cancellation | undefined
  /** When set, the peer is asked for progress, and each report resets the timeout. */
  onProgress?: ((progress: ProgressParams) => void) | undefined
}

interface Pending {
  resolve: (outcome: RelayOutcome) => void
  /** When it times out (ms since the epoch); pushed back by progress. */
  deadline: number
  timeoutMs: number
  onProgress?: ((progress: ProgressParams) => void) | undefined
  cancellation?: Cancellation | undefined
  onCancel?: (() => void) | undefined
}

const settled = (): void => {}

/**
 * Lets go of what a settled call's entry points to (its promise, and so its
 * answer and every step waiting on it). Something in the old generation can
 * still point to the entry (a Map's former table that it sat in, likely);
 * every scavenge until a full collection then takes all it points to as
 * alive and promotes it (~2 MB a scavenge at 32 in flight before this, ~1 MB
 * after: docs/benchmarks.md).
 */
function forget(entry: Pending): void {
  entry.resolve = settled
  entry.cancellation = undefined
  entry.onCancel = undefined
  entry.onProgress = undefined
}

/** JSON-RPC error codes the relay produces itself. */
export const RelayErrorCode = {
  /** The SDK's RequestTimeout. */
  timeout: RpcCode.requestTimeout,
  /** The peer went away (crash, restart, shutdown) before answering. */
  connectionClosed: RpcCode.serverError,
  cancelled: RpcCode.requestCancelled,
} as const

/**
 * Sends requests to one peer below the SDK's request layer and matches the
 * responses: the hot path of a proxied call. Request ids are strings with a
 * prefix the SDK never uses (it numbers its own), so the relay and an SDK
 * Client can share a transport: feed every incoming message to `intercept`
 * first. The progress token of a relayed call is its id.
 *
 * Timeouts share one timer, armed for the earliest deadline and left armed
 * when the calls are done: a call costs no timer of its own (setTimeout and
 * clearTimeout per call showed up in profiles of the relay), and one call
 * at a time costs one timer per timeout period.
 */
export class RequestRelay {
  private nextId = 0
  private readonly pending = new Map<string, Pending>()
  private timer: NodeJS.Timeout | undefined
  private timerAt = Number.POSITIVE_INFINITY

  constructor(
    private readonly send: (message: JSONRPCMessage) => Promise<void>,
    private readonly prefix = 'myc-',
  ) {}

  /** Number of calls waiting for an answer. */
  get inFlight(): number {
    return this.pending.size
  }

  /** Sends a request; `options` is read, not kept (a caller's own context can be handed over as it is). */
  request(
    method: string,
    params: Record<string, unknown> | undefined,
    options: RelayRequestOptions,
    defaultTimeoutMs = 60_000,
  ): Promise<RelayOutcome> {
    const id = `${this.prefix}${++this.nextId}`
    const timeoutMs = options.timeoutMs ?? defaultTimeoutMs
    let sentParams = params
    const meta = params?._meta as Record<string, unknown> | undefined
    if (options.onProgress) {
      sentParams = { ...params, _meta: { ...meta, progressToken: id } }
    } else if (meta && typeof meta === 'object' && 'progressToken' in meta) {
      // A token meant for the caller must not reach the peer: its progress would carry a token nobody maps.
      const { progressToken: _drop, ...rest } = meta
      sentParams = { ...params, _meta: rest }
    }
    return new Promise<RelayOutcome>((resolve) => {
      const entry: Pending = {
        resolve,
        deadline: Date.now() + timeoutMs,
        timeoutMs,
        onProgress: options.onProgress,
        cancellation: options.cancellation,
        onCancel: undefined,
      }
      this.pending.set(id, entry)
      this.arm(entry.deadline)
      const cancellation = options.cancellation
      if (cancellation) {
        if (cancellation.aborted) return this.cancelled(id, cancellation.reason)
        entry.onCancel = () => this.cancelled(id, cancellation.reason)
        cancellation.onCancel(entry.onCancel)
      }
      const message =
        sentParams === undefined
          ? { jsonrpc: '2.0' as const, id, method }
          : { jsonrpc: '2.0' as const, id, method, params: sentParams }
      const sent = this.send(message)
      if (sentOk(sent)) return
      sent.catch((error: unknown) => {
        this.settle(id, {
          ok: false,
          error: {
            code: RelayErrorCode.connectionClosed,
            message: `Could not send the request: ${error instanceof Error ? error.message : String(error)}`,
            [relayCause]: error,
          },
        })
      })
    })
  }

  private cancelled(id: string, reason: unknown): void {
    if (!this.pending.has(id)) return
    this.settle(id, { ok: false, error: { code: RelayErrorCode.cancelled, message: 'Request cancelled' } })
    void this.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason: String(reason ?? 'cancelled by the client') },
    }).catch(() => {})
  }

  /** Makes sure the shared timer fires by `deadline`. */
  private arm(deadline: number): void {
    if (this.timer !== undefined && this.timerAt <= deadline) return
    clearTimeout(this.timer)
    this.timerAt = deadline
    this.timer = setTimeout(this.expire, Math.max(0, deadline - Date.now()))
    this.timer.unref()
  }

  /** Times out every call past its deadline, then re-arms for the next one. */
  private readonly expire = (): void => {
    this.timer = undefined
    this.timerAt = Number.POSITIVE_INFINITY
    const now = Date.now()
    let next = Number.POSITIVE_INFINITY
    for (const [id, entry] of this.pending) {
      if (entry.deadline <= now) {
        const ms = entry.timeoutMs
        this.settle(id, {
          ok: false,
          error: { code: RelayErrorCode.timeout, message: `Request timed out after ${ms} ms`, data: { timeout: ms } },
        })
        void this.send({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: id, reason: 'timed out' },
        }).catch(() => {})
      } else if (entry.deadline < next) next = entry.deadline
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next)
  }

  private settle(id: string, outcome: RelayOutcome): void {
    const entry = this.pending.get(id)
    if (!entry) return
    this.pending.delete(id)
    if (entry.onCancel) entry.cancellation!.off(entry.onCancel)
    // The timer stays armed when the last call settles (it is unref'd, and finds nothing when it fires): one call at a time would otherwise set and clear a timer each.
    const resolve = entry.resolve
    forget(entry)
    resolve(outcome)
  }

  /**
   * Takes the responses and progress notifications that belong to relayed
   * calls; returns false for everything else (the SDK's business).
   */
  readonly intercept = (message: JSONRPCMessage): boolean => {
    const m = message as {
      id?: unknown
      method?: string
      params?: { progressToken?: unknown }
      result?: unknown
      error?: WireError
    }
    if (m.method === undefined) {
      if (typeof m.id !== 'string' || !this.pending.has(m.id)) return false
      this.settle(
        m.id,
        m.error ? { ok: false, error: m.error } : { ok: true, result: (m.result ?? {}) as Record<string, unknown> },
      )
      return true
    }
    if (m.method === 'notifications/progress') {
      const token = m.params?.progressToken
      if (typeof token !== 'string') return false
      const entry = this.pending.get(token)
      if (!entry) return false
      // Later than the armed timer: it re-arms when it fires.
      entry.deadline = Date.now() + entry.timeoutMs
      const { progressToken: _token, ...progress } = m.params as ProgressParams & { progressToken: unknown }
      entry.onProgress?.(progress)
      return true
    }
    return false
  }

  /** Settles every waiting call with the same error (the peer is gone). */
  failAll(message: string): void {
    for (const id of [...this.pending.keys()])
      this.settle(id, { ok: false, error: { code: RelayErrorCode.connectionClosed, message } })
  }
}

import type {
  JSONRPCMessage,
  McpSubscription,
  RequestOptions,
  ServerCapabilities,
  SubscriptionFilter,
} from '@modelcontextprotocol/client'
import { backoffDelay, type BackoffPolicy } from '../../children/backoff.js'
import { isEmptyFilter, listenFilter, sameFilter, subscriptionIdOf } from './listen-filter.js'
import { RpcCode } from '../../protocol/facts.js'

/** What the keeper needs of the SDK client connected to a modern child. */
export interface ListenClient {
  listen(filter: SubscriptionFilter, options?: RequestOptions): Promise<McpSubscription>
}

export interface ListenKeeperOptions {
  client: ListenClient
  capabilities: ServerCapabilities | undefined
  /** The child's resources some client subscribed to, now. */
  uris: () => Iterable<string>
  log: { debug(message: string): void }
  /** How long the child may take to acknowledge a listen. */
  ackTimeoutMs: number
  /** Changes of the subscribed resources within this long make one reopen. */
  debounceMs?: number
  /** Reopening after the listen ended or could not be opened. */
  retry?: BackoffPolicy
  random?: () => number
}

/** JSON-RPC "method not found": the child does not serve subscriptions/listen at all (never asked again). */
const METHOD_NOT_FOUND = RpcCode.methodNotFound
const DEFAULT_RETRY: BackoffPolicy = { maxRetries: Number.POSITIVE_INFINITY, initialDelayMs: 500, maxDelayMs: 30_000 }
/** A listen that stayed open this long starts its retry count afresh. */
const STABLE_AFTER_MS = 30_000

interface Open {
  subscription: McpSubscription
  filter: SubscriptionFilter
  openedAt: number
}

/**
 * The one `subscriptions/listen` (MCP 2026-07-28) myc keeps open on a
 * running modern child: the list changes it announces and the resources
 * clients subscribed to (listen-filter.ts). The SDK hands what arrives on it
 * to the client's notification handlers, as a 2025 child's unsolicited
 * notifications. A listen cannot be changed in place: a new filter opens a
 * new listen, and the old one is closed once the new one is acknowledged
 * (nothing is missed in between; copies of one event that both deliver are
 * dropped by `screen`). A listen that ends while the child runs is opened
 * again with backoff; `stop` closes it for good.
 */
export class ListenKeeper {
  private current: Open | undefined
  /** The listen being opened, and its subscription id once the child acknowledged it. */
  private opening: { id?: string } | undefined
  /** The listen whose notifications count: the newest one acknowledged. */
  private acceptId: string | undefined
  private stopped = false
  /** The child refused subscriptions/listen as an unknown method. */
  private refused = false
  private attempt = 0
  private retryTimer: NodeJS.Timeout | undefined
  private debounceTimer: NodeJS.Timeout | undefined
  private waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = []
  private chain: Promise<void> = Promise.resolve()

  constructor(private readonly options: ListenKeeperOptions) {}

  /** The filter of the listen open now (undefined when none is). */
  get filter(): SubscriptionFilter | undefined {
    return this.current?.filter
  }

  /** Opens the first listen; resolves once it is acknowledged, or rejects (and a retry is scheduled). */
  start(): Promise<void> {
    return this.sync()
  }

  /**
   * The subscribed resources changed: the listen is opened again with them,
   * once changes stop for `debounceMs`. Resolves once the child listens for
   * what is wanted then (at once when nothing changed, or the child serves no
   * listen); rejects when that listen could not be opened.
   */
  update(): Promise<void> {
    if (this.stopped) return Promise.resolve()
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject })
      if (this.debounceTimer) return
      this.debounceTimer = setTimeout(() => {
        this.debounceTimer = undefined
        const waiters = this.waiters
        this.waiters = []
        this.sync().then(
          () => waiters.forEach((w) => w.resolve()),
          (error: unknown) => waiters.forEach((w) => w.reject(error)),
        )
      }, this.options.debounceMs ?? 20)
      this.debounceTimer.unref?.()
    })
  }

  /**
   * Sees every message from the child before the SDK does; true to drop it.
   * Notes the subscription id of the listen being opened from its
   * acknowledgement (which the SDK still gets), and drops notifications of
   * a listen being replaced once the new one is acknowledged: the new one
   * delivers them too.
   */
  screen(message: JSONRPCMessage): boolean {
    const id = subscriptionIdOf(message)
    if (id === undefined) return false
    if ((message as { method: string }).method === 'notifications/subscriptions/acknowledged') {
      if (this.opening) this.opening.id = this.acceptId = id
      return false
    }
    return this.acceptId !== undefined && id !== this.acceptId
  }

  /** Closes the listen; nothing is reopened after. */
  stop(): void {
    this.stopped = true
    clearTimeout(this.retryTimer)
    clearTimeout(this.debounceTimer)
    this.retryTimer = this.debounceTimer = undefined
    for (const waiter of this.waiters.splice(0)) waiter.resolve()
    const current = this.current
    this.current = undefined
    void current?.subscription.close().catch(() => {})
  }

  /** Brings the listen in line with what is wanted now; one at a time. */
  private sync(): Promise<void> {
    const run = this.chain.then(() => this.syncOnce())
    this.chain = run.catch(() => {})
    return run
  }

  private async syncOnce(): Promise<void> {
    if (this.stopped || this.refused) return
    const wanted = listenFilter(this.options.capabilities, this.options.uris())
    const previous = this.current
    if (previous && sameFilter(previous.filter, wanted)) return
    if (isEmptyFilter(wanted)) {
      this.current = undefined
      await previous?.subscription.close()
      return
    }
    clearTimeout(this.retryTimer)
    this.retryTimer = undefined
    this.opening = {}
    let subscription: McpSubscription
    try {
      subscription = await this.options.client.listen(wanted, { timeout: this.options.ackTimeoutMs })
    } catch (error) {
      this.opening = undefined
      if (this.stopped) return
      if ((error as { code?: unknown }).code === METHOD_NOT_FOUND) {
        this.refused = true
        this.options.log.debug(
          `no subscriptions/listen (${describe(error)}): its list changes are seen on restart only, and its resources cannot be watched`,
        )
        return
      }
      this.options.log.debug(`subscriptions/listen failed (${describe(error)}); trying again`)
      this.scheduleRetry()
      throw error
    }
    this.opening = undefined
    if (this.stopped) {
      void subscription.close().catch(() => {})
      return
    }
    this.current = { subscription, filter: wanted, openedAt: Date.now() }
    void subscription.closed.then((cause) => this.ended(subscription, cause))
    this.options.log.debug(
      `listening for ${describeFilter(wanted)}${sameFilter(subscription.honoredFilter, wanted) ? '' : ` (it honours ${describeFilter(subscription.honoredFilter)})`}`,
    )
    if (previous) await previous.subscription.close().catch(() => {})
  }

  /** The listen ended: unless myc closed it, it is opened again (with backoff). */
  private ended(subscription: McpSubscription, cause: 'local' | 'graceful' | 'remote'): void {
    const current = this.current
    if (this.stopped || cause === 'local' || current?.subscription !== subscription) return
    this.current = undefined
    if (Date.now() - current.openedAt >= STABLE_AFTER_MS) this.attempt = 0
    this.options.log.debug(`subscriptions/listen ended (${cause}); opening it again`)
    this.scheduleRetry()
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer) return
    const delay = backoffDelay(this.attempt, this.options.retry ?? DEFAULT_RETRY, this.options.random)
    if (delay === undefined) return
    this.attempt++
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined
      this.sync().catch(() => {})
    }, delay)
    this.retryTimer.unref?.()
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function describeFilter(filter: SubscriptionFilter): string {
  const parts = [
    filter.toolsListChanged && 'tools',
    filter.promptsListChanged && 'prompts',
    filter.resourcesListChanged && 'resources',
  ].filter(Boolean)
  const lists = parts.length > 0 ? `${parts.join(', ')} list changes` : 'no list changes'
  const n = filter.resourceSubscriptions?.length ?? 0
  return n > 0 ? `${lists} and updates of ${n} resource${n === 1 ? '' : 's'}` : lists
}

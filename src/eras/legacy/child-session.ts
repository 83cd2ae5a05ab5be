import { passthrough } from '../../protocol/passthrough.js'
import type { RelayOutcome } from '../../protocol/request-relay.js'
import type { ChildSession, ForwardOptions, SessionLink } from '../../children/child-session.js'

/** How long a new process may take to answer each request asked again at its start (as a 2026 child's listen acknowledgement). */
const RESUBSCRIBE_TIMEOUT_MS = 10_000

/**
 * A child spoken to in the 2025 era (the `initialize` handshake): a plain
 * relay. Every request goes to the child as the caller sent it and its
 * answer comes back untouched; health is `ping`. What clients asked of the
 * child is asked of each new process right after initialize: the log level
 * last set (logging/setLevel), and the resources clients hold
 * (`kept.resourceUris`), each with resources/subscribe once per process,
 * later the ones added too (resources/unsubscribe for the ones let go of).
 */
export class LegacyChildSession implements ChildSession {
  readonly era = 'legacy'
  /** The resources this process was sent resources/subscribe for, each with its answer (a refused one is taken out). */
  private readonly asked = new Map<string, Promise<void>>()
  private closed = false

  constructor(private readonly link: SessionLink) {}

  /** Asks the new process for the log level last set and every resource clients hold (a refusal is logged; the start goes on). */
  async open(): Promise<void> {
    const timeoutMs = Math.min(this.link.config.startupTimeoutMs, RESUBSCRIBE_TIMEOUT_MS)
    await this.sendLevel(timeoutMs).catch((error: unknown) =>
      this.link.log.warn(
        `refused logging/setLevel ${this.link.kept.logLevel}, which a client of myc set: ${describe(error)}`,
      ),
    )
    await this.sync(undefined, timeoutMs)
  }

  levelChanged(): Promise<void> {
    return this.sendLevel(this.link.config.timeoutMs)
  }

  /** Sends the level in force, if any, to a child that logs. */
  private async sendLevel(timeoutMs: number): Promise<void> {
    const level = this.link.kept.logLevel
    if (level === undefined || !this.link.capabilities?.logging) return
    await this.request('logging/setLevel', { level }, timeoutMs)
  }

  forward(method: string, params: Record<string, unknown> | undefined, options: ForwardOptions): Promise<RelayOutcome> {
    return this.link.relay.request(method, params, options, this.link.config.timeoutMs)
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    // A child going away meanwhile is the supervisor's to notice: a lost notification changes nothing for it.
    await this.link.transport
      .send(params ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', method })
      .catch(() => {})
  }

  request(method: string, params: Record<string, unknown> | undefined, timeoutMs: number) {
    return this.link.client.request({ method, params: params ?? {} }, passthrough, { timeout: timeoutMs })
  }

  alive(timeoutMs: number): Promise<unknown> {
    return this.link.client.ping({ timeout: timeoutMs })
  }

  screen(): boolean {
    return false
  }

  resourcesChanged(added?: string): Promise<void> {
    return this.sync(added, this.link.config.timeoutMs)
  }

  close(): void {
    this.closed = true
  }

  /**
   * Brings the child in line with the resources held: resources/subscribe
   * for each one not asked of this process yet, resources/unsubscribe for
   * each one no longer held. Resolves once `added` is answered (rejecting
   * when refused); nothing for a child that serves no subscriptions.
   */
  private async sync(added: string | undefined, timeoutMs: number): Promise<void> {
    if (!this.link.capabilities?.resources?.subscribe) return
    const held = new Set(this.link.kept.resourceUris)
    const leaving = [...this.asked.keys()].filter((uri) => !held.has(uri)).map((uri) => this.letGo(uri))
    let answer: Promise<void> | undefined
    for (const uri of held) {
      const asking = this.asked.get(uri) ?? this.ask(uri, timeoutMs, uri !== added)
      if (uri === added) answer = asking
    }
    await Promise.all([...leaving, answer])
  }

  /** Sends resources/subscribe for `uri`; a refusal takes it out (the next change asks again), and is logged when no caller hears of it. */
  private ask(uri: string, timeoutMs: number, logRefusal: boolean): Promise<void> {
    const asking: Promise<void> = this.request('resources/subscribe', { uri }, timeoutMs).then(
      () => {},
      (error: unknown) => {
        if (this.asked.get(uri) === asking) this.asked.delete(uri)
        if (logRefusal && !this.closed)
          this.link.log.warn(
            `refused resources/subscribe of ${uri}, which clients of myc hold (their updates will not come): ${describe(error)}`,
          )
        throw error
      },
    )
    // Its refusal is its caller's to hear, or logged above: never an unhandled rejection.
    asking.catch(() => {})
    this.asked.set(uri, asking)
    return asking
  }

  private async letGo(uri: string): Promise<void> {
    this.asked.delete(uri)
    // A child that went away or refuses sends no more updates of it either way.
    await this.request('resources/unsubscribe', { uri }, this.link.config.timeoutMs).catch(() => {})
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

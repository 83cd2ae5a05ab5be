import { passthrough } from '../../protocol/passthrough.js'
import type { RelayOutcome } from '../../protocol/request-relay.js'
import type { ChildSession, ForwardOptions, SessionLink } from '../../children/child-session.js'

/**
 * A child spoken to in the 2025 era (the `initialize` handshake): a plain
 * relay. Every request goes to the child as the caller sent it and its
 * answer comes back untouched; a resource's updates are asked with
 * resources/subscribe; health is `ping`.
 */
export class LegacyChildSession implements ChildSession {
  readonly era = 'legacy'

  constructor(private readonly link: SessionLink) {}

  open(): Promise<void> {
    return Promise.resolve()
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

  get resourceUpdates(): 'subscribe' | undefined {
    return this.link.capabilities?.resources?.subscribe ? 'subscribe' : undefined
  }

  resourcesChanged(): Promise<void> {
    return Promise.resolve()
  }

  close(): void {}
}

import type { LoggingLevel } from '@modelcontextprotocol/client'
import { ProtocolError } from '@modelcontextprotocol/server'
import type { ChildConnection } from '../../children/child.js'
import { RpcCode } from '../../protocol/facts.js'
import type { ConnectionHandle, Runtime } from '../../runtime/runtime.js'
import { setLogLevel } from '../../server/log-level.js'
import { subscribeFirst, watchResource } from '../../server/resource-watch.js'

/** What a shared session store keeps of a 2025 connection (http/session-store.ts). */
export interface AskedState {
  subscriptions: string[]
  logLevel?: LoggingLevel
}

/**
 * What a 2025 client asked of myc outside its calls: the resources it
 * subscribed to and the log level it set. Each is asked of the children
 * that serve it (their records: the caller's own instance's or login's, see
 * server/resource-watch.ts and server/log-level.ts), kept for a shared
 * session store, and taken back when a session moves between replicas.
 */
export class SessionAsks {
  /** The resources the client subscribed to (made at its first subscription). */
  private subscriptions: Set<string> | undefined
  private level: LoggingLevel | undefined

  constructor(
    private readonly runtime: Runtime,
    private readonly holder: ConnectionHandle,
    private readonly childForUri: (uri: string) => ChildConnection | undefined,
    /** Called when what a shared session store keeps changes. */
    private readonly changed: () => void,
  ) {}

  /** The level the client set, if it set one. */
  get logLevel(): LoggingLevel | undefined {
    return this.level
  }

  /** Whether the client wants the updates of `uri`. */
  subscribed(uri: string): boolean {
    return this.subscriptions?.has(uri) === true
  }

  async subscribe(uri: string): Promise<Record<string, unknown>> {
    const child = this.childForUri(uri)
    if (!child) throw new ProtocolError(RpcCode.invalidParams, `Resource not found: ${uri}`)
    // Recorded on the child that serves it (the caller's own instance of a scoped server), which asks for it, in its era, at every start.
    await subscribeFirst((this.subscriptions ??= new Set()), uri, () =>
      watchResource(this.runtime, this.holder, child, uri),
    )
    this.changed()
    return {}
  }

  async unsubscribe(uri: string): Promise<Record<string, unknown>> {
    this.subscriptions?.delete(uri)
    this.changed()
    // The child that serves it lets go of it when no other connection holds it.
    await this.runtime.unsubscribeResource(this.holder, uri)
    return {}
  }

  async setLogLevel(level: LoggingLevel): Promise<Record<string, unknown>> {
    this.level = level
    this.changed()
    // Kept for each server it sees, in the record its requests reach (its own instance's of a scoped server), running or not.
    await setLogLevel(this.runtime, this.holder, level)
    return {}
  }

  get state(): AskedState {
    return { subscriptions: [...(this.subscriptions ?? [])], ...(this.level ? { logLevel: this.level } : {}) }
  }

  /**
   * Takes back what another process kept (a session moved between
   * replicas): the log level and the subscriptions, asked of this process's
   * children again (best effort: a child that refuses leaves it kept here).
   */
  async restore(state: { subscriptions: readonly string[]; logLevel?: LoggingLevel }): Promise<void> {
    if (state.logLevel) {
      this.level = state.logLevel
      await setLogLevel(this.runtime, this.holder, state.logLevel)
    }
    for (const uri of state.subscriptions) {
      if (this.subscriptions?.has(uri)) continue
      ;(this.subscriptions ??= new Set()).add(uri)
      const child = this.childForUri(uri)
      if (child) await watchResource(this.runtime, this.holder, child, uri).catch(() => {})
    }
  }
}

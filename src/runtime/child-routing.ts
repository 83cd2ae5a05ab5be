import type { JSONRPCNotification } from '@modelcontextprotocol/client'
import type { ChildConnection } from '../children/child.js'
import type { InputSource } from '../children/child-session.js'
import type { InstanceInfo } from '../children/instances.js'
import type { Logger } from '../logger.js'
import type { CallOrigin, ChildRequestOrigin, ConnectionHandle } from './connection.js'
import { audienceOf } from './instance-routing.js'

/**
 * Where what a child sends the client side goes: its notifications and its
 * requests (elicitation, sampling, roots), to the connection whose call it
 * serves, or outside any call to the connections that may hear it. Holds
 * the client connections of one runtime, and which was active last.
 */
export class ChildRouting {
  readonly connections = new Set<ConnectionHandle>()
  private lastActive: ConnectionHandle | undefined

  constructor(
    private readonly logger: Logger,
    private readonly instanceOf: (child: ChildConnection) => InstanceInfo | undefined,
    /** Whether a child's roots/list outside any call gets an empty list (Runtime.rootsWithinCallsOnly). */
    private readonly rootsWithinCallsOnly: () => boolean,
    /** The person whose own login `child` carries, when it is one of people's own connections (ChildSupervisor.personalFor). */
    private readonly personalOwnerOf: (child: ChildConnection) => string | undefined = () => undefined,
  ) {}

  /**
   * Whose call, if any, is waiting on `child` now (see ChildRequestOrigin).
   * A call parked on its client's answers (a 2026 client asked through
   * input_required) counts only when no other call is in flight: its child
   * is waiting for those answers, so what it asks now is likelier another
   * call's (and a parked call that is never retried must not block every
   * other caller of that child until it times out).
   */
  originOf(child: Pick<ChildConnection, 'callersInFlight'>): ChildRequestOrigin {
    let found: CallOrigin | undefined
    let parked: CallOrigin | undefined
    const seen = new Set<ConnectionHandle>()
    const parkedSeen = new Set<ConnectionHandle>()
    for (const caller of child.callersInFlight()) {
      const origin = caller as CallOrigin
      if (!this.connections.has(origin.connection)) continue
      if (origin.connection.awaitingClient?.()) {
        parkedSeen.add(origin.connection)
        parked = origin
        continue
      }
      seen.add(origin.connection)
      // The newest call of that connection: its stream is the likeliest to be open still.
      found = origin
    }
    if (seen.size === 0 && parkedSeen.size > 0) {
      if (parkedSeen.size > 1) return { kind: 'ambiguous', connections: parkedSeen.size }
      return { kind: 'call', origin: parked! }
    }
    if (seen.size > 1) return { kind: 'ambiguous', connections: seen.size }
    return found ? { kind: 'call', origin: found } : { kind: 'none' }
  }

  /**
   * A log message goes to the connection whose call the child is serving
   * (on that call's stream); with calls of several connections in flight it
   * goes to none of them (whose it is cannot be known), and outside any call
   * to every connection. Other notifications (resource updates) go to every
   * connection, which keeps what concerns it.
   */
  notification(child: ChildConnection, notification: JSONRPCNotification): void {
    const instance = this.instanceOf(child)
    if (notification.method === 'notifications/tasks/status') child.taskStatuses.note(notification.params)
    if (notification.method === 'notifications/message') {
      const owner = this.originOf(child)
      if (owner.kind === 'call')
        return owner.origin.connection.childNotification(child.key, notification, owner.origin.requestId)
      if (owner.kind === 'ambiguous') {
        this.logger.debug(
          `a log message from "${child.key}" was not forwarded: calls from ${owner.connections} clients are in flight to it, and it does not say which one it belongs to`,
        )
        return
      }
    }
    this.tell(child, instance, [notification])
  }

  /** Notifications of `child` outside any call: to every connection, or only to its audience (a scoped server's: instance-routing.ts). */
  tell(child: ChildConnection, instance: InstanceInfo | undefined, notifications: JSONRPCNotification[]): void {
    const hears = audienceOf(child, instance, this.personalOwnerOf(child))
    for (const connection of this.connections)
      if (!hears || hears(connection)) for (const n of notifications) connection.childNotification(child.key, n)
  }

  /**
   * A child's request to the client (elicitation, sampling, roots, tasks)
   * goes to the connection whose call caused it, and to no other: refused
   * when calls of several connections are in flight to that child. Outside
   * any call, it goes to a connection that reaches the child and declared
   * the capability (the most recently active first), else it is refused.
   */
  request(
    child: ChildConnection,
    method: string,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const owner = this.originOf(child)
    if (owner.kind === 'call')
      return owner.origin.connection.forwardRequest(child.key, method, params, signal, owner.origin.requestId)
    if (owner.kind === 'ambiguous') {
      this.logger.warn(
        `refused ${method} from "${child.key}": calls from ${owner.connections} clients are in flight to it, and a server cannot say which call it asks for`,
      )
      return Promise.reject(
        new Error(
          `mycelium cannot tell which of ${owner.connections} clients with calls in flight to "${child.key}" this ${method} is for, so it is refused; try again when the other calls have finished`,
        ),
      )
    }
    if (method === 'roots/list' && this.rootsWithinCallsOnly()) return Promise.resolve({ roots: [] })
    const connection = this.pickConnection(child, method, params)
    if (!connection)
      return Promise.reject(new Error(`no MCP client that reaches "${child.key}" is connected to mycelium`))
    return connection.forwardRequest(child.key, method, params, signal)
  }

  /**
   * The connection a child's request outside any call goes to: one that
   * reaches the child and can answer, the most recently active first; else
   * one that reaches it (it refuses cleanly, naming what is missing).
   */
  private pickConnection(
    child: ChildConnection,
    method: string,
    params: Record<string, unknown> | undefined,
  ): ConnectionHandle | undefined {
    const hears = audienceOf(child, this.instanceOf(child), this.personalOwnerOf(child))
    const reaching = [...this.connections].reverse().filter((c) => c.reaches(child.key) && (!hears || hears(c)))
    if (this.lastActive && reaching.includes(this.lastActive)) reaching.unshift(this.lastActive)
    return reaching.find((c) => c.canAnswer(method, params)) ?? reaching[0]
  }

  /**
   * The client a modern child's `input_required` is asked of, for a call
   * of a 2025 client: the connection that made the call, on that call's
   * stream (never another connection); none once it has gone.
   */
  inputSourceOf(child: ChildConnection, origin: CallOrigin): InputSource | undefined {
    const connection = origin.connection
    if (!this.connections.has(connection)) return undefined
    return {
      capabilities: connection.clientCapabilities,
      ask: (method, params, signal) => connection.forwardRequest(child.key, method, params, signal, origin.requestId),
    }
  }

  /** Marks a connection as the one that last sent a request. */
  touch(connection: ConnectionHandle): void {
    this.lastActive = connection
  }

  /** A connection went. */
  remove(connection: ConnectionHandle): void {
    this.connections.delete(connection)
    if (this.lastActive === connection) this.lastActive = undefined
  }
}

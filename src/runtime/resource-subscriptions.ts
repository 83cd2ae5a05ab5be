import type { ChildConnection } from '../children/child.js'
import type { ConnectionHandle } from './connection.js'

/**
 * Which children each client connection asked for resource updates. The
 * record of what a child is asked is the child's own (ChildConnection's
 * `resources`: a shared child's, or one instance's of a scoped server),
 * which every start of it asks for again; this only finds, for a
 * connection that unsubscribes or goes away, the children that hold it.
 */
export class ResourceSubscriptions {
  private readonly byConnection = new Map<ConnectionHandle, Set<ChildConnection>>()

  /** `connection` wants the updates of `uri`, which `child` serves. Rejects when the child refused (nothing is kept). */
  async subscribe(connection: ConnectionHandle, child: ChildConnection, uri: string): Promise<void> {
    let children = this.byConnection.get(connection)
    if (!children) this.byConnection.set(connection, (children = new Set()))
    children.add(child)
    await child.resources.watch(connection, uri)
  }

  /** `connection` no longer wants the updates of `uri`: a child lets go of it when no other connection holds it. */
  async unsubscribe(connection: ConnectionHandle, uri: string): Promise<void> {
    const children = [...(this.byConnection.get(connection) ?? [])]
    await Promise.all(children.map((child) => child.resources.unwatch(connection, uri)))
  }

  /** `connection` went away: the children let go of everything it held. */
  forget(connection: ConnectionHandle): void {
    const children = this.byConnection.get(connection)
    this.byConnection.delete(connection)
    for (const child of children ?? []) void child.resources.forget(connection)
  }

  /** A reload replaced `old` with `next` (the same server, its entry changed): the new child is asked for what the old one held. */
  replaced(old: ChildConnection, next: ChildConnection): Promise<void> {
    for (const children of this.byConnection.values()) if (children.delete(old)) children.add(next)
    return next.resources.adopt(old.resources)
  }
}

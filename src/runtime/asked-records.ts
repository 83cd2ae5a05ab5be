import type { LoggingLevel } from '@modelcontextprotocol/client'
import type { ChildRecord } from '../children/child-record.js'
import type { ConnectionHandle } from './connection.js'

/**
 * Which records of what clients asked of children (children/child-record.ts:
 * a shared child's, or a scoped server's person's or session's, kept across
 * its processes) each client connection asked something of. The record
 * itself is what every start of a child asks for again; this only finds,
 * for a connection that unsubscribes or goes away, the records it holds
 * something in.
 */
export class AskedRecords {
  private readonly byConnection = new Map<ConnectionHandle, Set<ChildRecord>>()

  /** `connection` wants the updates of `uri`, kept in `record`. Rejects when the running child refused (nothing is kept). */
  async subscribe(connection: ConnectionHandle, record: ChildRecord, uri: string): Promise<void> {
    this.holds(connection, record)
    await record.watch(connection, uri)
  }

  /** `connection` no longer wants the updates of `uri`: a child lets go of it when no other connection holds it. */
  async unsubscribe(connection: ConnectionHandle, uri: string): Promise<void> {
    const records = [...(this.byConnection.get(connection) ?? [])]
    await Promise.all(records.map((record) => record.unwatch(connection, uri)))
  }

  /** `connection` set the log level, kept in `record`. Rejects when the running child refused it (it stays kept). */
  async setLevel(connection: ConnectionHandle, record: ChildRecord, level: LoggingLevel): Promise<void> {
    this.holds(connection, record)
    await record.setLevel(connection, level)
  }

  /** `connection` went away: the records let go of everything it held. */
  forget(connection: ConnectionHandle): void {
    const records = this.byConnection.get(connection)
    this.byConnection.delete(connection)
    for (const record of records ?? []) void record.forget(connection)
  }

  private holds(connection: ConnectionHandle, record: ChildRecord): void {
    let records = this.byConnection.get(connection)
    if (!records) this.byConnection.set(connection, (records = new Set()))
    records.add(record)
  }
}

import type { LoggingLevel } from '@modelcontextprotocol/client'
import type { ConnectionHandle, Runtime } from '../runtime/runtime.js'
import { recordForCaller } from '../runtime/caller-child.js'

/**
 * A client set the log level (a 2025 connection's logging/setLevel): kept,
 * for every server it sees, where its requests go (a scoped server's
 * instance of its person or session, docs/team.md, whether one runs now or
 * not), and sent to each running child that logs; every later start of
 * that child (a restart, the person's next instance) is sent it too.
 */
export async function setLogLevel(runtime: Runtime, holder: ConnectionHandle, level: LoggingLevel): Promise<void> {
  const caller = holder.who ?? {}
  const records = [...runtime.supervisor.children.keys()]
    .filter((server) => holder.reaches(server))
    .map((server) => recordForCaller(runtime, server, caller))
  await Promise.all(
    records.map(
      // A child that refuses the level goes on with its own: the client's request is answered all the same.
      (record) => record && runtime.setLogLevel(holder, record, level).catch(() => {}),
    ),
  )
}

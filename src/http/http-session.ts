import { randomUUID } from 'node:crypto'
import type { LoggingLevel, Transport } from '@modelcontextprotocol/client'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server'
import type { Logger } from '../logger.js'
import { BUILTIN_SERVER } from '../policy/policy.js'
import type { PrincipalView } from '../principal/view.js'
import { toWireName } from '../registry/wire-names.js'
import type { Runtime } from '../runtime/runtime.js'
import { SessionEventLog } from './event-log.js'
import type { HttpPrincipal } from './principals.js'
import { sessionView } from './session-view.js'
import { writeChildLines } from './spliced-answers.js'
import type { SessionEntry, Sessions } from './http-session-table.js'

/** One MCP session over Streamable HTTP (2025 era): its own principal, client connection and transport. */
export interface HttpSession extends SessionEntry {
  readonly principal: HttpPrincipal
  readonly transport: WebStandardStreamableHTTPServerTransport
  readonly connection: SessionConnection
  readonly view: PrincipalView
  /** The session's SSE events, kept for a client that resumes a stream with Last-Event-ID. */
  readonly events: SessionEventLog
  /** The ids of its requests in flight (JSON text, so 7 and "7" differ): an id in flight is not taken again. */
  readonly requestIds: Set<string>
  /** The ids of its large requests being read now, claimed before their bodies are decoded (SessionRoute.claimEarly); made at the first. */
  readingIds?: Set<string>
  /** The client's initialize params (kept for a shared store, so another replica can replay the handshake). */
  initialize?: Record<string, unknown>
  /** The shared store's write in progress, if any (the next answer waits for it; rejected when the write failed). */
  persisting?: Promise<void>
  /**
   * The skills its credential grants now: those it was opened with,
   * narrowed by every later request whose credential grants fewer (never
   * widened: a wider credential needs a new session).
   */
  readonly granted: Set<string>
  /** Skills a narrower credential took away: deactivated, and not to be activated again in this session. */
  readonly revoked: Set<string>
}

/** What a shared session store keeps of a session's connection: its resource subscriptions and log level. */
interface SessionState {
  subscriptions: string[]
  logLevel?: LoggingLevel
}

/**
 * A session's client connection, as the session route drives it: the 2025
 * face's (its ClientConnection, src/eras/), made for each session by the
 * route's `connection` factory.
 */
export interface SessionConnection {
  /** Serves the client over the session's transport; resolves once it is being served. */
  connect(transport: Transport): Promise<void>
  close(): Promise<void>
  /** Called once when the client goes away. */
  onclose?: () => void
  /** Called when what a shared session store keeps changes. */
  onstatechange?: () => void
  readonly sessionState: SessionState
  /** Takes back a session's state kept by another process (a session moved between replicas). */
  restoreSessionState(state: { subscriptions: readonly string[]; logLevel?: LoggingLevel }): Promise<void>
}

/** What a session's connection is made with. */
export interface SessionConnectionOptions {
  runtime: Runtime
  view: PrincipalView
  /** Its HTTP session's id, for its spans. */
  sessionId: string
  /** Whose own OAuth logins its calls use (an HTTP principal's name). */
  owner?: string
}

export interface OpenSessionOptions {
  runtime: Runtime
  logger: Logger
  sessions: Sessions<HttpSession>
  /** The view of a new session's principal; throws when it cannot be made (its role is gone). */
  viewFor(principal: HttpPrincipal): PrincipalView
  /** `limits.maxMessageBytes`. */
  maxMessageBytes: number
  /** Makes a session's client connection (the 2025 face's). */
  connection(options: SessionConnectionOptions): SessionConnection
  /** With a shared store: writes the session there (after a change of skills, subscriptions or log level); rejects when the write failed. */
  persist?(session: HttpSession): Promise<void>
}

/**
 * Starts a session for `principal` and adds it to the table: a view, a
 * client connection, a transport whose session id is the table's key
 * (`id`: a new one, or the one a session taken over from the shared store
 * had). `revokedSkills`: skills a narrower credential took away before.
 * Throws when the principal's view cannot be made.
 */
export function openSession(
  options: OpenSessionOptions,
  principal: HttpPrincipal,
  id: string = randomUUID(),
  revokedSkills: readonly string[] = [],
): HttpSession {
  const { runtime, logger, sessions, persist } = options
  const revoked = new Set(revokedSkills)
  const own = options.viewFor({ ...principal, skills: (principal.skills ?? []).filter((s) => !revoked.has(s)) })
  // With a shared store, a built-in's answer (an escalation) leaves only once the store has it, so the next request, on any replica, sees it.
  const view = sessionView(own, {
    revoked,
    activateWire: toWireName(BUILTIN_SERVER, 'activate_skill', runtime.loaded.config.namespace),
    ...(persist ? { pending: () => session.persisting } : {}),
  })
  // Every SSE event gets an id and is kept a while, so a client that lost a stream resumes it with Last-Event-ID (event-log.ts).
  const events = new SessionEventLog()
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => id,
    maxRequestBodySize: options.maxMessageBytes,
    eventStore: events,
  })
  // A child's answer goes out as the child wrote it, the client's id spliced in.
  writeChildLines(transport)
  const connection = options.connection({
    runtime,
    view,
    sessionId: id,
    ...(principal.owner !== undefined ? { owner: principal.owner } : {}),
  })
  const session: HttpSession = {
    id,
    principal,
    transport,
    events,
    connection,
    view,
    requestIds: new Set(),
    owner: principal.key,
    initialized: false,
    granted: new Set((principal.skills ?? []).filter((s) => !revoked.has(s))),
    revoked,
    lastSeen: Date.now(),
    inFlight: 0,
    close: async () => {
      await connection.close()
      await transport.close()
    },
  }
  if (persist) writeOnChange(session, persist)
  connection.onclose = () => {
    sessions.remove(id)
    logger.debug(`http: session ${id.slice(0, 8)} (${principal.label}) ended`)
  }
  sessions.add(session)
  connection.connect(transport).catch((error: unknown) => {
    logger.error(`http: session ${id.slice(0, 8)} could not start: ${String(error)}`)
    sessions.remove(id)
    void session.close()
  })
  logger.debug(
    `http: session ${id.slice(0, 8)} opened for ${principal.label}${principal.role ? ` (role ${principal.role})` : ''}`,
  )
  return session
}

/** Writes the session to the shared store whenever its skills, subscriptions or log level change, until it closes. */
function writeOnChange(session: HttpSession, persist: (session: HttpSession) => Promise<void>): void {
  // A failed write is logged where it failed, and the built-in call that caused it answers an error (session-view.ts).
  const write = () => void persist(session).catch(() => {})
  const offView = session.view.onChange(write)
  session.connection.onstatechange = write
  const close = session.close
  session.close = async () => {
    offView()
    await close()
  }
}

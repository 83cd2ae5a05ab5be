import { randomUUID } from 'node:crypto'
import type { RequestId } from '@modelcontextprotocol/server'
import type { Logger } from '../logger.js'
import type { PrincipalView } from '../principal/view.js'
import type { Runtime } from '../runtime/runtime.js'
import type { HttpPrincipal } from './principals.js'
import { HttpRpcCode, refusal, untilAnswered } from './responses.js'
import { EVENT_CHARS_PER_SESSION, EVENTS_PER_STREAM, STREAMS_PER_SESSION } from './event-log.js'
import type { Room, Sessions } from './http-session-table.js'
import type { SessionStore } from './session-store.js'
import type { InboundRequest } from './node-bridge.js'
import { openSession, type HttpSession, type SessionConnection, type SessionConnectionOptions } from './http-session.js'
import { withCallBudget } from './rate-limit.js'
import { readPostMessage, type ReadMessage } from './post-message.js'
import { SharedSessions } from './shared-sessions.js'

export type { HttpSession } from './http-session.js'

/** Bodies at least this large have their id found (and claimed) before they are decoded and parsed (claimEarly). */
const EARLY_SCAN_BYTES = 64 * 1024

/** Requests one session may have in flight by default (`http.maxInFlightPerSession`). */
const MAX_IN_FLIGHT_PER_SESSION = 64

export interface SessionRouteOptions {
  runtime: Runtime
  logger: Logger
  sessions: Sessions<HttpSession>
  /** The view of a new session's principal; throws when it cannot be made (its role is gone). */
  viewFor(principal: HttpPrincipal): PrincipalView
  /** `limits.maxMessageBytes`: the largest body accepted. */
  maxMessageBytes: number
  /** `http.maxInFlightPerSession` (default MAX_IN_FLIGHT_PER_SESSION). */
  maxInFlightPerSession?: number
  /** True while shutting down: no new sessions. */
  draining(): boolean
  /** A store shared with other replicas (Redis): sessions are written there and taken over from there. */
  shared?: { store: SessionStore; ttlMs: number }
  /** Makes a session's client connection (the 2025 face's). */
  connection(options: SessionConnectionOptions): SessionConnection
  /** With `http.rateLimit`: what an inner call of code mode takes from its credential's bucket (RouteContext.chargeCall). */
  chargeCall?: (key: string) => Promise<string | undefined>
}

/** What an unknown, ended, expired or evicted session id (or another credential's) answers. */
function sessionNotFound(): Response {
  return refusal(404, HttpRpcCode.sessionNotFound, 'Session not found: it ended or expired; initialize a new session')
}

/**
 * The 2025-era, session-based Streamable HTTP route (MCP 2025-11-25), the
 * 2025 face's route on the endpoint (EraRoute, era-route.ts): POST carries
 * messages, GET opens the session's SSE stream, DELETE ends the session.
 * Each session is its own principal with its own connection over the
 * shared runtime, made by the 2025 face (`connection`: its
 * ClientConnection), on the SDK's WebStandardStreamableHTTPServerTransport,
 * so hidden things answer exactly as over stdio. Called after the face has
 * checked host, origin and credential.
 */
export class SessionRoute {
  private readonly shared: SharedSessions | undefined

  constructor(private readonly options: SessionRouteOptions) {
    const { shared } = options
    this.shared = shared
      ? new SharedSessions({
          ...shared,
          logger: options.logger,
          sessions: options.sessions,
          draining: options.draining,
          open: (principal, id, revoked) => this.open(principal, id, revoked),
          makeRoom: (principal) => this.makeRoom(principal),
        })
      : undefined
  }

  /** Requests of sessions being answered now. */
  get inFlight(): number {
    return this.options.sessions.inFlight
  }

  /** A 2025 session has no subscriptions/listen streams. */
  readonly listenStreams = 0

  drained(ms: number): Promise<boolean> {
    return this.options.sessions.drained(ms)
  }

  /** Ends every session. */
  close(): Promise<void> {
    return this.options.sessions.closeAll()
  }

  async handle(inbound: InboundRequest, principal: HttpPrincipal): Promise<Response> {
    const sessionId = inbound.request.headers.get('mcp-session-id')
    return sessionId !== null ? this.existing(sessionId, inbound, principal) : this.initialize(inbound, principal)
  }

  /** A request for a session by its id: this process's, or one the shared store holds. */
  private async existing(id: string, inbound: InboundRequest, principal: HttpPrincipal): Promise<Response> {
    const { request } = inbound
    const found = this.options.sessions.get(id) ?? (await this.shared?.takeOver(id, principal, request))
    if (found instanceof Response) return found.clone()
    // Another credential's session does not exist for this one.
    if (!found || found.principal.key !== principal.key) return sessionNotFound()
    // The same caller with another role now (its identity provider changed it): not this session's principal any more.
    if ((principal.role ?? null) !== (found.principal.role ?? null)) {
      this.options.logger.debug(
        `http: session ${found.id.slice(0, 8)} (${principal.label}) refused: role ${principal.role} now, opened as ${found.principal.role}`,
      )
      return refusal(
        403,
        HttpRpcCode.server,
        `Forbidden: this credential's role is now ${principal.role ?? 'none'}, not ${found.principal.role ?? 'none'} as when the session was opened; initialize a new session`,
      )
    }
    const read = request.method === 'POST' ? await this.readMessage(inbound) : undefined
    if (read && !read.ok) return read.response
    if (this.shared && !(await this.shared.sync(found, read?.isRequest === true))) return sessionNotFound()
    if (this.narrow(found, principal)) await this.shared?.persist(found)
    return this.serve(found, inbound, read)
  }

  /** A POST without a session id: an initialize starts a session, if the credential has room for one. */
  private async initialize(inbound: InboundRequest, principal: HttpPrincipal): Promise<Response> {
    const { request } = inbound
    if (request.method !== 'POST')
      return refusal(400, HttpRpcCode.server, 'Bad Request: Mcp-Session-Id header is required')
    const read = await this.readMessage(inbound)
    if (!read.ok) return read.response
    if (!read.isInitialize)
      return refusal(
        400,
        HttpRpcCode.server,
        'Bad Request: Mcp-Session-Id header is required (only initialize starts a session)',
      )
    if (this.options.draining())
      return refusal(503, HttpRpcCode.server, 'Service Unavailable: mycelium is shutting down', { 'Retry-After': '5' })
    const id = randomUUID()
    const refused = await this.admit(principal, id)
    if (refused) return refused
    let session: HttpSession
    try {
      session = this.open(principal, id)
    } catch (error) {
      // Its place in the store goes too; a store that does not answer drops it with its time to live.
      await this.shared?.forget({ id, owner: principal.key }).catch(() => {})
      this.options.logger.warn(
        `http: no session for ${principal.label}: ${error instanceof Error ? error.message : String(error)}`,
      )
      return refusal(403, HttpRpcCode.server, `Forbidden: ${error instanceof Error ? error.message : String(error)}`)
    }
    session.initialize = (read.message as { params?: Record<string, unknown> }).params ?? {}
    const response = await this.deliver(session, inbound, read)
    // An initialize the transport refused (Accept header, protocol) leaves no session behind.
    if (response.status !== 200) {
      this.end(session)
      // As above: a store that does not answer drops the place with its time to live.
      await this.shared?.forget(session).catch(() => {})
      return response
    }
    // Shared with replicas: the session exists once the store has it, or not at all (its answer is not sent).
    await this.shared?.persist(session).catch(async (error: unknown) => {
      this.end(session)
      await response.body?.cancel()
      throw error
    })
    return response
  }

  /** Ends a session here. */
  private end(session: HttpSession): void {
    this.options.sessions.remove(session.id)
    void session.close()
  }

  /**
   * Room for a new session of `principal`, counted across replicas when the
   * store is shared (whose own evictions end the sessions everywhere), then
   * in this process: undefined when there is, else the refusal owed.
   */
  private async admit(principal: HttpPrincipal, id: string): Promise<Response | undefined> {
    if (this.shared) {
      const admission = await this.shared.admit(principal.key, id, this.options.sessions.maxPerOwner)
      if (!admission.ok) return this.roomRefusal(principal, { ok: false, reason: 'busy', held: admission.held })
    }
    const refused = this.makeRoom(principal)
    // The place the store gave goes back; a store that does not answer drops it with its time to live.
    if (refused) await this.shared?.forget({ id, owner: principal.key }).catch(() => {})
    return refused
  }

  /** Room in this process for one more session of `principal` (Sessions.makeRoom): undefined, or the refusal owed. */
  private makeRoom(principal: HttpPrincipal): Response | undefined {
    const room = this.options.sessions.makeRoom(principal.key)
    return room.ok ? undefined : this.roomRefusal(principal, room)
  }

  /** No room: 429 when every session of the credential is busy, 503 when this process holds http.maxSessions. */
  private roomRefusal(principal: HttpPrincipal, room: Extract<Room<HttpSession>, { ok: false }>): Response {
    const { sessions, logger } = this.options
    if (room.reason === 'full')
      return refusal(
        503,
        HttpRpcCode.server,
        `Service Unavailable: too many sessions (http.maxSessions is ${sessions.max}); try again later`,
        { 'Retry-After': '5' },
      )
    logger.debug(
      `http: ${principal.label}: all ${room.held} of its sessions are busy (http.maxSessionsPerCredential); initialize refused`,
    )
    return refusal(
      429,
      HttpRpcCode.server,
      `Too Many Requests: this credential holds ${room.held} sessions (http.maxSessionsPerCredential is ${sessions.maxPerOwner}) and every one has a request in flight; try again once one is answered, or end one (DELETE)`,
      { 'Retry-After': '1' },
    )
  }

  /**
   * Narrows a session to what this request's credential grants: a skill it
   * was granted that this credential does not grant is taken away at once
   * (deactivated, and refused if activated again in this session), unless
   * every session has it (`session.defaultSkills`). A credential granting
   * more widens nothing. Skills the session activated itself (escalation
   * within its role) are not the credential's grant and stay. True when
   * something was taken away.
   */
  private narrow(session: HttpSession, principal: HttpPrincipal): boolean {
    // Nothing granted, nothing to take away (most sessions, at every request).
    if (session.granted.size === 0) return false
    const grants = new Set(principal.skills ?? [])
    const lost = [...session.granted].filter((s) => !grants.has(s))
    if (lost.length === 0) return false
    const defaults = new Set(this.options.runtime.loaded.config.session.defaultSkills)
    for (const skill of lost) {
      session.granted.delete(skill)
      if (!defaults.has(skill)) session.revoked.add(skill)
    }
    this.dropRevoked(session)
    this.options.logger.debug(
      `http: session ${session.id.slice(0, 8)} (${principal.label}) narrowed by its credential: ${lost.join(', ')} no longer granted`,
    )
    return true
  }

  /** Deactivates the session's active skills that were taken away (protected ones stay, as for every session). */
  private dropRevoked(session: HttpSession): void {
    const { view } = session
    if (!view.describe || !view.deactivate) return
    for (const { name } of view.describe().activeSkills) if (session.revoked.has(name)) view.deactivate(name, 'person')
  }

  /** A request for an existing session (a POST's message already read). */
  private async serve(session: HttpSession, inbound: InboundRequest, read: ReadMessage | undefined): Promise<Response> {
    const { request } = inbound
    // DELETE ends the session everywhere (a store that does not answer fails it: the session must not live on elsewhere).
    if (request.method === 'DELETE') await this.shared?.forget(session)
    if (!read?.ok) {
      this.options.sessions.touch(session)
      const lastEventId = request.method === 'GET' ? request.headers.get('last-event-id') : null
      if (lastEventId !== null && !session.events.streamOf(lastEventId))
        return refusal(
          400,
          HttpRpcCode.server,
          `Bad Request: Last-Event-ID ${JSON.stringify(lastEventId.slice(0, 80))} is no event of this session that it can resume after (it keeps the newest ${STREAMS_PER_SESSION} streams, ${EVENTS_PER_STREAM} events each, ${EVENT_CHARS_PER_SESSION / 1048576} MiB of them in all, and no answer larger than that); open the stream again without Last-Event-ID, or send the request again`,
        )
      return session.transport.handleRequest(request)
    }
    // Initialization completes with notifications/initialized; until then the session lives UNINITIALIZED_SESSION_MS at most.
    if (!read.isRequest && (read.message as { method?: unknown }).method === 'notifications/initialized')
      session.initialized = true
    return this.deliver(session, inbound, read)
  }

  /**
   * Hands a message to the session's transport. A request counts as in
   * flight until its answer has streamed; one whose id is already in flight
   * on the session is refused at once (-32600, naming the id: the first
   * keeps its answer), and so is one over `http.maxInFlightPerSession`.
   */
  private async deliver(
    session: HttpSession,
    inbound: InboundRequest,
    read: Extract<ReadMessage, { ok: true }>,
  ): Promise<Response> {
    const { request } = inbound
    if (!read.isRequest) {
      this.options.sessions.touch(session)
      return session.transport.handleRequest(request, { parsedBody: read.message })
    }
    const refused = this.checkInFlight(session, read.id!)
    if (refused) {
      if (this.shared && session.inFlight === 0) this.shared.idle(session)
      return refused
    }
    const done = this.begin(session, JSON.stringify(read.id))
    try {
      return untilAnswered(inbound, await session.transport.handleRequest(request, { parsedBody: read.message }), done)
    } catch (error) {
      done()
      throw error
    }
  }

  /**
   * A large POST's id, found before its body is decoded or parsed (the
   * scan makes no copy of the body): refused at once when that id is
   * already in flight on its session, or being read for another request
   * of it; else claimed while the request is read, until the function
   * returned is called (by then deliver counts it in flight, or it was
   * refused). So a large body sent many times at once with one id is
   * decoded and parsed once, and when the id comes first in it (as
   * clients write it), each refused copy is refused from its first bytes,
   * the rest never kept. Small bodies are left to deliver's check.
   */
  async claimEarly(inbound: InboundRequest, principal: HttpPrincipal): Promise<Response | (() => void) | undefined> {
    const { request } = inbound
    const sessionId = request.headers.get('mcp-session-id')
    if (request.method !== 'POST' || sessionId === null || !inbound.requestId) return undefined
    const session = this.options.sessions.get(sessionId)
    if (!session || session.principal.key !== principal.key) return undefined
    const taken = (id: RequestId) =>
      session.requestIds.has(JSON.stringify(id)) || session.readingIds?.has(JSON.stringify(id)) === true
    // An id written first is refused before the rest of its body is kept (forty such bodies at once held 160 MB).
    const leading = await inbound.refusedLeadingId?.(this.options.maxMessageBytes, EARLY_SCAN_BYTES, taken)
    if (leading !== undefined) return this.reusedId(session, leading)
    const id = await inbound.requestId(this.options.maxMessageBytes, EARLY_SCAN_BYTES)
    if (id === null || id === undefined) return undefined
    if (taken(id)) return this.reusedId(session, id)
    const key = JSON.stringify(id)
    const reading = (session.readingIds ??= new Set())
    reading.add(key)
    return () => reading.delete(key)
  }

  /** What a request whose id is already in flight on its session answers. */
  private reusedId(session: HttpSession, id: string | number): Response {
    const key = JSON.stringify(id)
    this.options.logger.debug(`http: session ${session.id.slice(0, 8)}: request id ${key} reused while in flight`)
    return refusal(
      400,
      HttpRpcCode.invalidRequest,
      `Invalid Request: request id ${key} is already in flight on this session; give each request an id of its own`,
      {},
      id,
    )
  }

  /** The refusal owed to a request whose id is in flight on the session, or past its cap of requests in flight. */
  private checkInFlight(session: HttpSession, id: string | number): Response | undefined {
    if (session.requestIds.has(JSON.stringify(id))) return this.reusedId(session, id)
    const max = this.options.maxInFlightPerSession ?? MAX_IN_FLIGHT_PER_SESSION
    if (session.inFlight >= max)
      return refusal(
        429,
        HttpRpcCode.server,
        `Too Many Requests: this session has ${session.inFlight} requests in flight, the most one may (http.maxInFlightPerSession is ${max}); send more once some are answered`,
        { 'Retry-After': '1' },
        id,
      )
    return undefined
  }

  /** Counts a request in flight on the session under its id; the function returned ends it (once). */
  private begin(session: HttpSession, key: string): () => void {
    session.requestIds.add(key)
    const end = this.options.sessions.begin(session)
    let ended = false
    return () => {
      if (ended) return
      ended = true
      session.requestIds.delete(key)
      end()
      if (this.shared && session.inFlight === 0) this.shared.idle(session)
    }
  }

  /** Starts a session for `principal` (openSession), written to the shared store on every change when there is one. */
  private open(principal: HttpPrincipal, id?: string, revoked?: readonly string[]): HttpSession {
    const { runtime, logger, sessions, maxMessageBytes, connection } = this.options
    const shared = this.shared
    const viewFor = (p: HttpPrincipal) => this.viewOf(p)
    return openSession(
      {
        runtime,
        logger,
        sessions,
        viewFor,
        maxMessageBytes,
        connection,
        ...(shared ? { persist: (s) => shared.persist(s) } : {}),
      },
      principal,
      id,
      revoked,
    )
  }

  /** A session's own view: with `http.rateLimit`, it carries its credential's budget for code mode's inner calls. */
  private viewOf(principal: HttpPrincipal): PrincipalView {
    const view = this.options.viewFor(principal)
    const charge = this.options.chargeCall
    return charge ? withCallBudget(view, () => charge(principal.key)) : view
  }

  private readMessage(inbound: InboundRequest): Promise<ReadMessage> {
    return readPostMessage(inbound, this.options)
  }
}

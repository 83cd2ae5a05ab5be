import { randomUUID } from 'node:crypto'
import {
  isJsonContentType,
  WebStandardStreamableHTTPServerTransport,
  type JSONRPCMessage,
} from '@modelcontextprotocol/server'
import type { Logger } from '../logger.js'
import { checkInbound, MAX_NESTING, nestsDeeperThan } from '../protocol/inbound.js'
import { topLevelId } from '../protocol/top-level-id.js'
import { withHeaderTraceContext } from './trace-headers.js'
import type { PrincipalView } from '../principal/view.js'
import type { Runtime } from '../runtime/runtime.js'
import { ClientConnection } from '../server/client-connection.js'
import type { HttpPrincipal } from './principals.js'
import { HttpRpcCode, onBodyDone, refusal } from './responses.js'
import { EVENTS_PER_STREAM, SessionEventLog, STREAMS_PER_SESSION } from './event-log.js'
import type { SessionEntry, Sessions } from './sessions.js'
import type { SessionStore, SharedSession } from './session-store.js'
import { BUILTIN_SERVER } from '../policy/policy.js'
import { toWireName } from '../registry/wire-names.js'
import type { CallToolResult } from '@modelcontextprotocol/server'
import { RpcCode } from '../protocol/facts.js'

/** A request as the routes see it: method, URL and headers, and its body read on demand (with a cap). */
export interface InboundRequest {
  request: Request
  readBody(maxBytes: number): Promise<{ tooLarge: true } | { tooLarge: false; text: string }>
}

/** One MCP session over Streamable HTTP: its own principal, client connection and transport. */
export interface HttpSession extends SessionEntry {
  readonly principal: HttpPrincipal
  readonly transport: WebStandardStreamableHTTPServerTransport
  readonly connection: ClientConnection
  readonly view: PrincipalView
  /** The session's SSE events, kept for a client that resumes a stream with Last-Event-ID. */
  readonly events: SessionEventLog
  /** The client's initialize params (kept for a shared store, so another replica can replay the handshake). */
  initialize?: Record<string, unknown>
  /** The shared store's write in progress, if any (the next answer waits for it). */
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

export interface SessionRouteOptions {
  runtime: Runtime
  logger: Logger
  sessions: Sessions<HttpSession>
  /** The view of a new session's principal; throws when it cannot be made (its role is gone). */
  viewFor(principal: HttpPrincipal): PrincipalView
  /** `limits.maxMessageBytes`: the largest body accepted. */
  maxMessageBytes: number
  /** True while shutting down: no new sessions. */
  draining(): boolean
  /** A store shared with other replicas (Redis): sessions are written there and taken over from there. */
  shared?: { store: SessionStore; ttlMs: number }
}

/** What activating a skill a narrower credential took away answers. */
function notGrantedAnymore(skill: string): CallToolResult {
  return {
    content: [
      {
        type: 'text',
        text: `Skill ${skill} is no longer granted by this session's credential; initialize a new session with a credential that grants it.`,
      },
    ],
    isError: true,
  }
}

/**
 * A session's view: activating a skill in `revoked` (one a narrower
 * credential took away) is refused; with `pending`, built-in calls answer
 * only after it (the store's write they caused) settles.
 */
function sessionView(
  view: PrincipalView,
  options: { revoked: ReadonlySet<string>; activateWire: string; pending?: () => Promise<void> | undefined },
): PrincipalView {
  const { revoked, activateWire, pending } = options
  const callBuiltin: PrincipalView['callBuiltin'] = (name, args, ctx) => {
    if (name === activateWire && typeof args.name === 'string' && revoked.has(args.name))
      return Promise.resolve(notGrantedAnymore(args.name))
    const answer = view.callBuiltin(name, args, ctx)
    return pending
      ? answer?.then(async (r) => {
          await pending()?.catch(() => {})
          return r
        })
      : answer
  }
  // Every other member is the view's own, bound once (lists ask toolVisible once per tool).
  const bound = new Map<PropertyKey, unknown>([['callBuiltin', callBuiltin]])
  if (view.activate) {
    const activate = view.activate.bind(view)
    bound.set('activate', ((name, actor, ctx) =>
      revoked.has(name) ? Promise.resolve(notGrantedAnymore(name)) : activate(name, actor, ctx)) satisfies NonNullable<
      PrincipalView['activate']
    >)
  }
  return new Proxy(view, {
    get(target, prop) {
      if (bound.has(prop)) return bound.get(prop)
      const value = Reflect.get(target, prop, target) as unknown
      if (typeof value !== 'function') return value
      const fn = (value as (...a: unknown[]) => unknown).bind(target)
      bound.set(prop, fn)
      return fn
    },
  })
}

/** A message read from a POST body, or the refusal owed instead. */
type ReadMessage =
  { ok: true; message: JSONRPCMessage; isRequest: boolean; isInitialize: boolean } | { ok: false; response: Response }

/**
 * The 2025-era, session-based Streamable HTTP route (MCP 2025-11-25): POST
 * carries messages, GET opens the session's SSE stream, DELETE ends the
 * session. Each session is its own principal with its own ClientConnection
 * over the shared runtime (the SDK's WebStandardStreamableHTTPServerTransport
 * below it), so hidden things answer exactly as over stdio. Called after the
 * face has checked host, origin and credential.
 */
export class SessionRoute {
  constructor(private readonly options: SessionRouteOptions) {}

  async handle(inbound: InboundRequest, principal: HttpPrincipal): Promise<Response> {
    const { request } = inbound
    const { sessions } = this.options
    const sessionId = request.headers.get('mcp-session-id')
    if (sessionId !== null) {
      const session = sessions.get(sessionId) ?? (await this.takeOver(sessionId, principal, request))
      // Another credential's session does not exist for this one.
      if (!session || session.principal.key !== principal.key)
        return refusal(
          404,
          HttpRpcCode.sessionNotFound,
          'Session not found: it ended or expired; initialize a new session',
        )
      // The same caller with another role now (its identity provider changed it): not this session's principal any more.
      if ((principal.role ?? null) !== (session.principal.role ?? null)) {
        this.options.logger.debug(
          `http: session ${session.id.slice(0, 8)} (${principal.label}) refused: role ${principal.role} now, opened as ${session.principal.role}`,
        )
        return refusal(
          403,
          HttpRpcCode.server,
          `Forbidden: this credential's role is now ${principal.role ?? 'none'}, not ${session.principal.role ?? 'none'} as when the session was opened; initialize a new session`,
        )
      }
      if (this.options.shared && !(await this.syncShared(session)))
        return refusal(
          404,
          HttpRpcCode.sessionNotFound,
          'Session not found: it ended or expired; initialize a new session',
        )
      if (this.narrow(session, principal)) await this.persist(session)
      return this.serve(session, inbound)
    }
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
    // One credential cannot take every session (http.maxSessions) from the others.
    if (sessions.fullFor(principal.key)) {
      this.options.logger.debug(
        `http: ${principal.label} holds ${sessions.maxPerOwner} sessions (http.maxSessionsPerCredential); initialize refused`,
      )
      return refusal(
        429,
        HttpRpcCode.server,
        `Too Many Requests: this credential holds ${sessions.maxPerOwner} sessions, the most one may (http.maxSessionsPerCredential is ${sessions.maxPerOwner}); end one (DELETE) or let one expire`,
      )
    }
    if (sessions.full)
      return refusal(
        503,
        HttpRpcCode.server,
        `Service Unavailable: too many sessions (http.maxSessions is ${sessions.max}); try again later`,
        { 'Retry-After': '5' },
      )
    let session: HttpSession
    try {
      session = this.open(principal)
    } catch (error) {
      this.options.logger.warn(
        `http: no session for ${principal.label}: ${error instanceof Error ? error.message : String(error)}`,
      )
      return refusal(403, HttpRpcCode.server, `Forbidden: ${error instanceof Error ? error.message : String(error)}`)
    }
    session.initialize = (read.message as { params?: Record<string, unknown> }).params ?? {}
    const response = await this.deliver(session, request, read)
    // An initialize the transport refused (Accept header, protocol) leaves no session behind.
    if (response.status !== 200) {
      sessions.remove(session.id)
      void session.close()
    } else await this.persist(session)
    return response
  }

  private readonly takingOver = new Map<string, Promise<HttpSession | undefined>>()

  /**
   * A session this process does not hold, kept in the shared store (it
   * began on another replica, or on one that died): opened here under the
   * same id, its initialize replayed to the new transport, then its skills,
   * subscriptions and log level restored. Undefined when the store has no
   * such session, or it belongs to another credential.
   */
  private takeOver(id: string, principal: HttpPrincipal, request: Request): Promise<HttpSession | undefined> {
    const shared = this.options.shared
    if (!shared || this.options.draining()) return Promise.resolve(undefined)
    let pending = this.takingOver.get(id)
    if (!pending) {
      pending = (async () => {
        const record = await shared.store.load(id)
        if (
          !record ||
          record.principal.key !== principal.key ||
          this.options.sessions.full ||
          this.options.sessions.fullFor(principal.key)
        )
          return undefined
        // Opened as the record has it (its role, the skills granted it now, those taken away); handle() then checks this request's credential against that.
        const session = this.open(record.principal, id, record.revoked ?? [])
        session.initialize = record.initialize
        session.initialized = true
        const replay = (body: unknown, headers: Record<string, string>) =>
          session.transport
            .handleRequest(
              new Request(request.url, {
                method: 'POST',
                headers: {
                  'Content-Type': 'application/json',
                  Accept: 'application/json, text/event-stream',
                  ...headers,
                },
                body: JSON.stringify(body),
              }),
              { parsedBody: body as JSONRPCMessage },
            )
            .then((r) => r.text())
        await replay({ jsonrpc: '2.0', id: `myc-take-over-${id}`, method: 'initialize', params: record.initialize }, {})
        const version: Record<string, string> =
          typeof record.initialize.protocolVersion === 'string'
            ? { 'MCP-Protocol-Version': record.initialize.protocolVersion }
            : {}
        await replay({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'Mcp-Session-Id': id, ...version })
        await this.reconcileSkills(session, record.activeSkills)
        await session.connection.restoreSessionState({
          subscriptions: record.subscriptions,
          ...(record.logLevel ? { logLevel: record.logLevel as never } : {}),
        })
        this.options.logger.debug(
          `http: session ${id.slice(0, 8)} (${principal.label}) taken over from the shared store`,
        )
        return session
      })().finally(() => this.takingOver.delete(id))
      this.takingOver.set(id, pending)
    }
    return pending
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

  /** Makes the session's active skills those the store holds (another replica may have changed them), never one taken away. */
  private async reconcileSkills(session: HttpSession, wanted: readonly string[]): Promise<void> {
    const view = session.view
    if (!view.describe || !view.activate || !view.deactivate) return
    const want = new Set(wanted.filter((s) => !session.revoked.has(s)))
    const now = new Set(view.describe().activeSkills.map((s) => s.name))
    if (want.size === now.size && [...want].every((s) => now.has(s))) return
    this.syncing.add(session.id)
    try {
      for (const name of want) if (!now.has(name)) await view.activate(name, 'person')
      for (const name of now) if (!want.has(name)) view.deactivate(name, 'person')
    } finally {
      this.syncing.delete(session.id)
    }
  }

  /** Sessions whose skills are being set from the store (their changes are not written back). */
  private readonly syncing = new Set<string>()

  /** Before serving a held session: the store's state wins (another replica may have escalated it); false when the store no longer has it. */
  private async syncShared(session: HttpSession): Promise<boolean> {
    const shared = this.options.shared!
    const record = await shared.store.load(session.id)
    if (!record) {
      this.options.sessions.remove(session.id)
      void session.close()
      return false
    }
    // What another replica took away stays taken away here.
    const grants = new Set(record.principal.skills ?? [])
    for (const skill of [...session.granted]) if (!grants.has(skill)) session.granted.delete(skill)
    for (const skill of record.revoked ?? []) session.revoked.add(skill)
    await this.reconcileSkills(session, record.activeSkills)
    await shared.store.touch(session.id, shared.ttlMs)
    return true
  }

  /** Writes a session's state to the shared store (after initialize, an escalation, a subscription). */
  private persist(session: HttpSession): Promise<void> {
    // One write at a time per session, in order; the answer to the request that caused it waits for it (see open()).
    session.persisting = (session.persisting ?? Promise.resolve()).then(() => this.write(session))
    return session.persisting
  }

  private async write(session: HttpSession): Promise<void> {
    const shared = this.options.shared
    if (!shared || !session.initialize || this.syncing.has(session.id)) return
    const record: SharedSession = {
      id: session.id,
      principal: { ...session.principal, skills: [...session.granted] },
      initialize: session.initialize,
      activeSkills: session.view.describe?.().activeSkills.map((s) => s.name) ?? [],
      ...(session.revoked.size > 0 ? { revoked: [...session.revoked] } : {}),
      ...session.connection.sessionState,
    }
    try {
      await shared.store.save(record, shared.ttlMs)
    } catch (error) {
      this.options.logger.warn(
        `http: session ${session.id.slice(0, 8)}: the shared store refused a write: ${(error as Error).message}`,
      )
    }
  }

  /** A request for an existing session. */
  private async serve(session: HttpSession, inbound: InboundRequest): Promise<Response> {
    const { request } = inbound
    // DELETE ends the session everywhere.
    if (request.method === 'DELETE' && this.options.shared)
      await this.options.shared.store.delete(session.id).catch(() => {})
    if (request.method !== 'POST') {
      this.options.sessions.touch(session)
      const lastEventId = request.method === 'GET' ? request.headers.get('last-event-id') : null
      if (lastEventId !== null && !session.events.streamOf(lastEventId))
        return refusal(
          400,
          HttpRpcCode.server,
          `Bad Request: Last-Event-ID ${JSON.stringify(lastEventId.slice(0, 80))} is no event of this session that is still kept (the newest ${STREAMS_PER_SESSION} streams, ${EVENTS_PER_STREAM} events each); open the stream again without Last-Event-ID`,
        )
      return session.transport.handleRequest(request)
    }
    const read = await this.readMessage(inbound)
    if (!read.ok) return read.response
    // Initialization completes with notifications/initialized; until then the session lives UNINITIALIZED_SESSION_MS at most.
    if (!read.isRequest && (read.message as { method?: unknown }).method === 'notifications/initialized')
      session.initialized = true
    return this.deliver(session, request, read)
  }

  /** Hands a message to the session's transport; a request counts as in flight until its answer has streamed. */
  private async deliver(
    session: HttpSession,
    request: Request,
    read: Extract<ReadMessage, { ok: true }>,
  ): Promise<Response> {
    const { sessions } = this.options
    if (!read.isRequest) {
      sessions.touch(session)
      return session.transport.handleRequest(request, { parsedBody: read.message })
    }
    const done = sessions.begin(session)
    try {
      return onBodyDone(await session.transport.handleRequest(request, { parsedBody: read.message }), done)
    } catch (error) {
      done()
      throw error
    }
  }

  /** Starts a session for `principal`: a view, a client connection, a transport whose session id is the table's key. */
  private open(
    principal: HttpPrincipal,
    id: string = randomUUID(),
    revokedSkills: readonly string[] = [],
  ): HttpSession {
    const { runtime, logger, sessions } = this.options
    const revoked = new Set(revokedSkills)
    const own = this.options.viewFor({ ...principal, skills: (principal.skills ?? []).filter((s) => !revoked.has(s)) })
    // With a shared store, a built-in's answer (an escalation) leaves only once the store has it, so the next request, on any replica, sees it.
    const view = sessionView(own, {
      revoked,
      activateWire: toWireName(BUILTIN_SERVER, 'activate_skill', runtime.loaded.config.namespace),
      ...(this.options.shared ? { pending: () => session.persisting } : {}),
    })
    // Every SSE event gets an id and is kept a while, so a client that lost a stream resumes it with Last-Event-ID (event-log.ts).
    const events = new SessionEventLog()
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      maxRequestBodySize: this.options.maxMessageBytes,
      eventStore: events,
    })
    const connection = new ClientConnection({
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
    if (this.options.shared) {
      const offView = view.onChange(() => void this.persist(session))
      connection.onstatechange = () => void this.persist(session)
      const close = session.close
      session.close = async () => {
        offView()
        await close()
      }
    }
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

  /**
   * Reads and checks a POST body as the stdio transport checks a line: too
   * large → 413; not JSON → 400 -32700; too deep, a batch, or not a JSON-RPC
   * message → 400 -32600 (with the request's id when it can be read);
   * params that do not fit → the -32602 answer (200, it is the request's
   * answer). Unknown top-level keys are dropped.
   */
  private async readMessage(inbound: InboundRequest): Promise<ReadMessage> {
    const { request } = inbound
    const fail = (response: Response): ReadMessage => ({ ok: false, response })
    if (!isJsonContentType(request.headers.get('content-type')))
      return fail(refusal(415, HttpRpcCode.server, 'Unsupported Media Type: Content-Type must be application/json'))
    const max = this.options.maxMessageBytes
    const body = await inbound.readBody(max)
    if (body.tooLarge)
      return fail(
        refusal(
          413,
          HttpRpcCode.invalidRequest,
          `Payload Too Large: a message may be at most ${max} bytes (limits.maxMessageBytes)`,
        ),
      )
    // The request's own id, wherever it sits in the body (after the deep value too), as over stdio.
    if (nestsDeeperThan(body.text, MAX_NESTING))
      return fail(
        refusal(
          400,
          HttpRpcCode.invalidRequest,
          `Invalid Request: arrays and objects nest deeper than ${MAX_NESTING}`,
          {},
          topLevelId(body.text),
        ),
      )
    let value: unknown
    try {
      value = JSON.parse(body.text)
    } catch {
      return fail(refusal(400, HttpRpcCode.parse, 'Parse error: the body is not valid JSON'))
    }
    const checked = checkInbound(value)
    if (checked.kind === 'invalid') {
      this.options.logger.debug(`http: refused a message: ${checked.reason}`)
      const reply = checked.reply ?? {
        jsonrpc: '2.0',
        id: null,
        error: { code: HttpRpcCode.invalidRequest, message: checked.reason },
      }
      const status = reply.error.code === RpcCode.invalidParams ? 200 : 400
      return fail(new Response(JSON.stringify(reply), { status, headers: { 'Content-Type': 'application/json' } }))
    }
    // Tracing on: the traceparent header is the request's parent when its _meta names none.
    const message = this.options.runtime.tracing?.propagates
      ? withHeaderTraceContext(checked.message, request.headers)
      : checked.message
    return {
      ok: true,
      message,
      isRequest: checked.kind === 'request',
      isInitialize: checked.kind === 'request' && checked.method === 'initialize',
    }
  }
}

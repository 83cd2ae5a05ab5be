import type { JSONRPCMessage } from '@modelcontextprotocol/server'
import type { Logger } from '../logger.js'
import type { HttpSession } from './http-session.js'
import type { HttpPrincipal } from './principals.js'
import type { Admission, SessionStore, SessionUse, SharedSession } from './session-store.js'
import type { Sessions } from './http-session-table.js'

export interface SharedSessionsOptions {
  store: SessionStore
  /** `http.sessionIdleMs`: how long a session lives in the store after its last request. */
  ttlMs: number
  logger: Logger
  sessions: Sessions<HttpSession>
  /** True while shutting down: nothing is taken over. */
  draining(): boolean
  /** Opens a session here (openSession with this route's options). */
  open(principal: HttpPrincipal, id: string, revoked: readonly string[]): HttpSession
  /** Makes room in this process for one more session of `principal` (its least recently used idle copy closed here): the refusal owed when there is none. */
  makeRoom(principal: HttpPrincipal): Response | undefined
}

/**
 * The sessions of a face whose store is shared with other replicas
 * (Redis): every change is written there, every request first reads what
 * the store holds (another replica may have escalated the session, or
 * ended it), a session held elsewhere is taken over, and each credential's
 * sessions are counted there, across replicas. Every store command has a
 * deadline: a store that does not answer fails the request (StoreUnavailable,
 * 503), never lets it through without the store's word.
 */
export class SharedSessions {
  private readonly takingOver = new Map<string, Promise<HttpSession | Response | undefined>>()
  /** Sessions whose skills are being set from the store (their changes are not written back). */
  private readonly syncing = new Set<string>()

  constructor(private readonly options: SharedSessionsOptions) {}

  /**
   * Counts a new session `id` of `owner` in the store, under `cap`; the
   * sessions the store ended to make room are closed here too (the other
   * replicas find them gone on their next request).
   */
  async admit(owner: string, id: string, cap: number): Promise<Admission> {
    const admission = await this.options.store.admit(owner, id, cap, this.options.ttlMs)
    if (admission.ok) for (const evicted of admission.evicted) this.options.sessions.drop(evicted)
    return admission
  }

  /** Forgets a session in the store (DELETE, or an initialize that failed). */
  forget(session: Pick<HttpSession, 'id' | 'owner'>): Promise<void> {
    return this.options.store.delete(session.id, session.owner)
  }

  /** Marks the end of the session's requests in flight (it may be evicted again); a failure leaves it busy a while, which is safe. */
  idle(session: HttpSession): void {
    this.mark(session, { owner: session.owner!, mark: 'idle' }).catch((error: unknown) =>
      this.options.logger.debug(`http: session ${session.id.slice(0, 8)}: ${(error as Error).message}`),
    )
  }

  private mark(session: HttpSession, use: SessionUse): Promise<void> {
    return this.options.store.touch(session.id, this.options.ttlMs, use)
  }

  /**
   * A session this process does not hold, kept in the shared store (it
   * began on another replica, or on one that died): opened here under the
   * same id, its initialize replayed to the new transport, then its skills,
   * subscriptions and log level restored. Undefined when the store has no
   * such session, or it belongs to another credential; a Response when this
   * process has no room for it. Throws StoreUnavailable when the store does
   * not answer.
   */
  takeOver(id: string, principal: HttpPrincipal, request: Request): Promise<HttpSession | Response | undefined> {
    if (this.options.draining()) return Promise.resolve(undefined)
    let pending = this.takingOver.get(id)
    if (!pending) {
      pending = this.takeOverNow(id, principal, request).finally(() => this.takingOver.delete(id))
      this.takingOver.set(id, pending)
    }
    return pending
  }

  private async takeOverNow(
    id: string,
    principal: HttpPrincipal,
    request: Request,
  ): Promise<HttpSession | Response | undefined> {
    const record = await this.options.store.load(id)
    if (!record || record.principal.key !== principal.key) return undefined
    const refused = this.options.makeRoom(principal)
    if (refused) return refused
    // Opened as the record has it (its role, the skills granted it now, those taken away); the route then checks this request's credential against that.
    const session = this.options.open(record.principal, id, record.revoked ?? [])
    session.initialize = record.initialize
    session.initialized = true
    await replayHandshake(session, record, request.url)
    await this.reconcileSkills(session, record.activeSkills)
    await session.connection.restoreSessionState({
      subscriptions: record.subscriptions,
      ...(record.logLevel ? { logLevel: record.logLevel as never } : {}),
    })
    this.options.logger.debug(`http: session ${id.slice(0, 8)} (${principal.label}) taken over from the shared store`)
    return session
  }

  /**
   * Before serving a held session: the store's state wins (another replica
   * may have escalated it); false when the store no longer has it (ended or
   * evicted elsewhere). `busy`: a request starts (the store counts the
   * session busy until idle()).
   */
  async sync(session: HttpSession, busy: boolean): Promise<boolean> {
    const record = await this.options.store.load(session.id)
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
    await this.mark(session, { owner: session.owner!, ...(busy ? { mark: 'busy' as const } : {}) })
    return true
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

  /**
   * Writes a session's state to the shared store (after initialize, an
   * escalation, a subscription): one write at a time per session, in
   * order. Rejects when this write failed (the store did not answer).
   */
  persist(session: HttpSession): Promise<void> {
    const previous = session.persisting ?? Promise.resolve()
    // A write that failed before was told to whoever waited for it; this one tries again with the state of now.
    session.persisting = previous.catch(() => {}).then(() => this.write(session))
    return session.persisting
  }

  private async write(session: HttpSession): Promise<void> {
    if (!session.initialize || this.syncing.has(session.id)) return
    const record: SharedSession = {
      id: session.id,
      principal: { ...session.principal, skills: [...session.granted] },
      initialize: session.initialize,
      activeSkills: session.view.describe?.().activeSkills.map((s) => s.name) ?? [],
      ...(session.revoked.size > 0 ? { revoked: [...session.revoked] } : {}),
      ...session.connection.sessionState,
    }
    try {
      await this.options.store.save(record, this.options.ttlMs)
    } catch (error) {
      this.options.logger.warn(
        `http: session ${session.id.slice(0, 8)}: the shared store did not take a write: ${(error as Error).message}`,
      )
      throw error
    }
  }
}

/** Replays a session's initialize and notifications/initialized to its new transport (the answers go nowhere). */
async function replayHandshake(session: HttpSession, record: SharedSession, url: string): Promise<void> {
  const replay = (body: unknown, headers: Record<string, string>) =>
    session.transport
      .handleRequest(
        new Request(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
          body: JSON.stringify(body),
        }),
        { parsedBody: body as JSONRPCMessage },
      )
      .then((r) => r.text())
  await replay(
    { jsonrpc: '2.0', id: `myc-take-over-${session.id}`, method: 'initialize', params: record.initialize },
    {},
  )
  const version: Record<string, string> =
    typeof record.initialize.protocolVersion === 'string'
      ? { 'MCP-Protocol-Version': record.initialize.protocolVersion }
      : {}
  await replay({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'Mcp-Session-Id': session.id, ...version })
}

/** What the session table needs of a session: its id, when it was last used, whether a request is in flight, how to end it. */
export interface SessionEntry {
  readonly id: string
  /** Milliseconds since the epoch of the last request's start or end. */
  lastSeen: number
  /** Requests (POSTs carrying requests) whose answer is still streaming. */
  inFlight: number
  /** Ends the session (its MCP connection and transport). Idempotent. */
  close(): Promise<void>
  /** The credential it belongs to (HttpPrincipal.key), for `http.maxSessionsPerCredential`. */
  readonly owner?: string
  /** When it was opened (set by Sessions.add). */
  createdAt?: number
  /** False until the client completes initialization (notifications/initialized); such a session lives UNINITIALIZED_SESSION_MS at most. Absent: initialized. */
  initialized?: boolean
}

/** How long a session that never completes initialization (no notifications/initialized) is kept. */
const UNINITIALIZED_SESSION_MS = 30_000

/**
 * Where sessions are kept, by id. The in-memory table holds live sessions;
 * a shared store (a later slice: Redis) keeps the same operations for what
 * can be shared between processes.
 */
export interface SessionTable<S extends SessionEntry> {
  readonly size: number
  get(id: string): S | undefined
  set(session: S): void
  delete(id: string): boolean
  values(): Iterable<S>
}

/** Sessions in this process's memory (`http.sessionStore: "memory"`). */
export class MemorySessionTable<S extends SessionEntry> implements SessionTable<S> {
  private readonly map = new Map<string, S>()

  get size(): number {
    return this.map.size
  }

  get(id: string): S | undefined {
    return this.map.get(id)
  }

  set(session: S): void {
    this.map.set(session.id, session)
  }

  delete(id: string): boolean {
    return this.map.delete(id)
  }

  values(): Iterable<S> {
    return this.map.values()
  }
}

/**
 * Whether a session has been idle for longer than `idleMs`, or was opened
 * more than `initMs` ago and never completed initialization (one with a
 * request in flight never is).
 */
export function isExpired(
  session: Pick<SessionEntry, 'lastSeen' | 'inFlight' | 'createdAt' | 'initialized'>,
  now: number,
  idleMs: number,
  initMs: number = UNINITIALIZED_SESSION_MS,
): boolean {
  if (session.inFlight !== 0) return false
  if (session.initialized === false && now - (session.createdAt ?? session.lastSeen) > initMs) return true
  return now - session.lastSeen > idleMs
}

export interface SessionsOptions {
  maxSessions: number
  /** `http.maxSessionsPerCredential`: sessions one owner may hold; default: maxSessions. */
  maxPerOwner?: number
  idleMs: number
  /** How long a session may stay uninitialized; default UNINITIALIZED_SESSION_MS. */
  initMs?: number
  now?: () => number
  /** Told when a session is ended for being idle (for the log). */
  onExpired?: (session: SessionEntry) => void
  /** Told when a session is ended to make room for its owner's new one (for the log). */
  onEvicted?: (session: SessionEntry) => void
}

/** What makeRoom did: room made (`evicted`: the owner's sessions it ended), or why not. */
export type Room<S> = { ok: true; evicted: S[] } | { ok: false; reason: 'busy' | 'full'; held: number }

/**
 * The sessions of one HTTP face: a table plus the rules around it, the cap
 * (`http.maxSessions`) and idle expiry (`http.sessionIdleMs`). An expired
 * session is closed and forgotten, so its id answers 404 and the client
 * initializes anew. Expiry is checked on lookup and by a periodic sweep.
 */
export class Sessions<S extends SessionEntry> {
  private sweeper: NodeJS.Timeout | undefined
  private readonly now: () => number

  constructor(
    private readonly table: SessionTable<S>,
    private readonly options: SessionsOptions,
  ) {
    this.now = options.now ?? Date.now
  }

  get size(): number {
    return this.table.size
  }

  /** `http.maxSessions`. */
  get max(): number {
    return this.options.maxSessions
  }

  /** Whether a new session would pass `http.maxSessions`. */
  get full(): boolean {
    return this.table.size >= this.options.maxSessions
  }

  /** `http.maxSessionsPerCredential`. */
  get maxPerOwner(): number {
    return this.options.maxPerOwner ?? this.options.maxSessions
  }

  /** Live sessions of `owner` (expired ones not counted). */
  ownedBy(owner: string): number {
    const now = this.now()
    let n = 0
    for (const s of this.table.values()) if (s.owner === owner && !this.expired(s, now)) n++
    return n
  }

  /**
   * Room for one more session of `owner`. At `http.maxSessionsPerCredential`
   * the owner's least recently used idle session (no request in flight) is
   * ended, as many as it takes: its id then answers 404, as an ended one
   * does, and the client starts a new one. Only the owner's own sessions go
   * this way, never another's. Refused (`busy`) when every one of them has a
   * request in flight; `full` at `http.maxSessions`.
   */
  makeRoom(owner: string): Room<S> {
    this.sweep()
    const evicted: S[] = []
    for (;;) {
      const owned = [...this.table.values()].filter((s) => s.owner === owner)
      if (owned.length < this.maxPerOwner) break
      let idle: S | undefined
      for (const s of owned) if (s.inFlight === 0 && (!idle || s.lastSeen < idle.lastSeen)) idle = s
      if (!idle) return { ok: false, reason: 'busy', held: owned.length }
      this.end(idle, 'evicted')
      evicted.push(idle)
    }
    if (this.full) return { ok: false, reason: 'full', held: this.ownedBy(owner) }
    return { ok: true, evicted }
  }

  /** Ends the session with this id here, if this process holds it (another replica evicted it). */
  drop(id: string): void {
    const session = this.table.get(id)
    if (session) this.end(session, 'evicted')
  }

  private expired(session: S, now: number): boolean {
    return isExpired(session, now, this.options.idleMs, this.options.initMs)
  }

  /** Requests in flight across all sessions. */
  get inFlight(): number {
    let n = 0
    for (const s of this.table.values()) n += s.inFlight
    return n
  }

  add(session: S): void {
    session.lastSeen = this.now()
    session.createdAt = session.lastSeen
    this.table.set(session)
  }

  /** The live session with this id; an idle one is ended here and reads as absent. */
  get(id: string): S | undefined {
    const session = this.table.get(id)
    if (!session) return undefined
    if (this.expired(session, this.now())) {
      this.expire(session)
      return undefined
    }
    return session
  }

  /** Forgets a session (it ended on its own: DELETE, transport closed). */
  remove(id: string): void {
    this.table.delete(id)
  }

  /** Marks the start of a request on `session`; call the returned function when its answer is done. */
  begin(session: S): () => void {
    session.inFlight++
    session.lastSeen = this.now()
    let ended = false
    return () => {
      if (ended) return
      ended = true
      session.inFlight--
      session.lastSeen = this.now()
    }
  }

  /** Marks `session` as used now (a request that carries no call). */
  touch(session: S): void {
    session.lastSeen = this.now()
  }

  private expire(session: S): void {
    this.end(session, 'expired')
  }

  private end(session: S, why: 'expired' | 'evicted'): void {
    this.table.delete(session.id)
    if (why === 'expired') this.options.onExpired?.(session)
    else this.options.onEvicted?.(session)
    // Closing a session that is ending anyway: a failure has no one to tell.
    void session.close().catch(() => {})
  }

  /** Ends every idle session now. */
  sweep(): void {
    const now = this.now()
    for (const session of [...this.table.values()]) if (this.expired(session, now)) this.expire(session)
  }

  /** Sweeps every so often (a quarter of the shorter of the idle and uninitialized times, between 50 ms and 60 s) until stop(). */
  startSweeping(): void {
    if (this.sweeper) return
    const shortest = Math.min(this.options.idleMs, this.options.initMs ?? UNINITIALIZED_SESSION_MS)
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(50, Math.floor(shortest / 4))))
    this.sweeper.unref()
  }

  /** Waits until no request is in flight, at most `ms`; resolves true if none is left. */
  async drained(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms
    while (this.inFlight > 0) {
      if (Date.now() >= deadline) return false
      await new Promise((r) => setTimeout(r, 25))
    }
    return true
  }

  /** Stops sweeping and ends every session. */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper)
    this.sweeper = undefined
    const all = [...this.table.values()]
    for (const s of all) this.table.delete(s.id)
    await Promise.all(all.map((s) => s.close().catch(() => {})))
  }
}

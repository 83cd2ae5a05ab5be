/** What the session table needs of a session: its id, when it was last used, whether a request is in flight, how to end it. */
export interface SessionEntry {
  readonly id: string
  /** Milliseconds since the epoch of the last request's start or end. */
  lastSeen: number
  /** Requests (POSTs carrying requests) whose answer is still streaming. */
  inFlight: number
  /** Ends the session (its MCP connection and transport). Idempotent. */
  close(): Promise<void>
}

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

/** Whether a session has been idle for longer than `idleMs` (one with a request in flight never is). */
export function isExpired(session: Pick<SessionEntry, 'lastSeen' | 'inFlight'>, now: number, idleMs: number): boolean {
  return session.inFlight === 0 && now - session.lastSeen > idleMs
}

export interface SessionsOptions {
  maxSessions: number
  idleMs: number
  now?: () => number
  /** Told when a session is ended for being idle (for the log). */
  onExpired?: (session: SessionEntry) => void
}

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

  /** Requests in flight across all sessions. */
  get inFlight(): number {
    let n = 0
    for (const s of this.table.values()) n += s.inFlight
    return n
  }

  add(session: S): void {
    session.lastSeen = this.now()
    this.table.set(session)
  }

  /** The live session with this id; an idle one is ended here and reads as absent. */
  get(id: string): S | undefined {
    const session = this.table.get(id)
    if (!session) return undefined
    if (isExpired(session, this.now(), this.options.idleMs)) {
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
    this.table.delete(session.id)
    this.options.onExpired?.(session)
    void session.close().catch(() => {})
  }

  /** Ends every idle session now. */
  sweep(): void {
    const now = this.now()
    for (const session of [...this.table.values()]) if (isExpired(session, now, this.options.idleMs)) this.expire(session)
  }

  /** Sweeps every so often (a quarter of the idle time, between 50 ms and 60 s) until stop(). */
  startSweeping(): void {
    if (this.sweeper) return
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(50, Math.floor(this.options.idleMs / 4))))
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

import { createHash } from 'node:crypto'
import { redactUrl } from '../redact.js'
import { connectRedis, type GuardedRedis } from './redis-client.js'
import { SharedRateLimiter, type RateLimit, type RateLimitConfig } from './rate-limit.js'
import type { HttpPrincipal } from './principals.js'
import type { SharedEntries } from '../oauth/token-store.js'
import { RedisTokenEntries, SECRET_ENTRIES } from './redis-token-entries.js'

/**
 * What another process needs to take a session over: who it is, how its
 * client initialized (so the handshake can be replayed there), the skills
 * active now, its resource subscriptions and log level. For the 2026 era
 * (no sessions), the escalation state of a principal would sit here too.
 */
export interface SharedSession {
  id: string
  principal: HttpPrincipal
  /** The client's initialize params as sent: protocolVersion, capabilities, clientInfo. */
  initialize: Record<string, unknown>
  activeSkills: string[]
  subscriptions: string[]
  logLevel?: string
  /** Skills a narrower credential took away from the session (not to be activated again in it). */
  revoked?: string[]
}

/** What `admit` decided: the new session may open (`evicted`: the owner's sessions ended to make room), or every one of the owner's `held` sessions is busy. */
export type Admission = { ok: true; evicted: string[] } | { ok: false; held: number }

/** How a request uses its session, for the owner's index: a request starts (busy) or ends (idle); absent, a use that is neither. */
export type SessionUse = { owner: string; mark?: 'busy' | 'idle' }

/**
 * How long a session counts as busy after a request of it starts, unless
 * the request's end says otherwise first: a replica that dies during a
 * call does not leave its session busy for ever.
 */
export const BUSY_MS = 5 * 60_000

/**
 * Where session state lives between requests, so that any replica can serve
 * any session: in this process (default) or in Redis (`http.sessionStore:
 * "redis://…"`). Entries expire `ttlMs` after their last touch. Each
 * credential's sessions are also indexed, most recently used last, for
 * `http.maxSessionsPerCredential` across replicas (`admit`).
 */
export interface SessionStore {
  readonly kind: 'memory' | 'redis'
  load(id: string): Promise<SharedSession | undefined>
  save(session: SharedSession, ttlMs: number): Promise<void>
  /** Extends an entry's life (a request came); with `use`, also marks it in its owner's index (only while the entry exists). */
  touch(id: string, ttlMs: number, use?: SessionUse): Promise<void>
  /** Forgets an entry, and with `owner` its place in the owner's index. */
  delete(id: string, owner?: string): Promise<void>
  /**
   * A new session `id` of `owner`, under `cap` sessions per owner counted
   * in the store (every replica together): admitted at once below the cap;
   * at it, the owner's least recently used session that is not busy is
   * deleted to make room (its id then answers 404 everywhere); refused when
   * every one is busy. The new session counts as busy until its first
   * request ends.
   */
  admit(owner: string, id: string, cap: number, ttlMs: number): Promise<Admission>
  /** Whether the store answers now (for /readyz); absent: always. */
  ready?(): Promise<boolean>
  close(): Promise<void>
  /** A rate limit counted in the store, shared by the replicas that use it (Redis); absent: each process counts its own. */
  rateLimiter?(config: RateLimitConfig): RateLimit
  /** The people's OAuth logins kept in the store, shared by the replicas (Redis); absent: each process keeps its own file. */
  tokenEntries?(): SharedEntries
  /** The people's own secrets kept in the store, shared by the replicas (Redis); absent: each process keeps its own file. */
  secretEntries?(): SharedEntries
}

/**
 * Each owner's sessions with the time of their last use (a busy one's lies
 * BUSY_MS ahead), as the Redis scripts keep them (OWNER_SCRIPTS), for the
 * store in this process.
 */
class OwnerIndex {
  private readonly owners = new Map<string, Map<string, number>>()

  admit(owner: string, id: string, cap: number, ttlMs: number, now: number, drop: (id: string) => void): Admission {
    const sessions = this.owners.get(owner) ?? new Map<string, number>()
    this.owners.set(owner, sessions)
    for (const [sid, at] of sessions) if (at < now - ttlMs) sessions.delete(sid)
    const evicted: string[] = []
    while (sessions.size >= cap) {
      const idle = [...sessions].filter(([, at]) => at <= now).sort((a, b) => a[1] - b[1])[0]
      if (!idle) return { ok: false, held: sessions.size }
      sessions.delete(idle[0])
      drop(idle[0])
      evicted.push(idle[0])
    }
    sessions.set(id, now + BUSY_MS)
    return { ok: true, evicted }
  }

  use(owner: string, id: string, mark: SessionUse['mark'], now: number): void {
    const sessions = this.owners.get(owner) ?? new Map<string, number>()
    this.owners.set(owner, sessions)
    const at = mark === 'busy' ? now + BUSY_MS : now
    if (mark === 'idle' || at > (sessions.get(id) ?? -Infinity)) sessions.set(id, at)
  }

  remove(owner: string, id: string): void {
    this.owners.get(owner)?.delete(id)
  }
}

/** Sessions kept in this process only: one replica. */
export class MemorySessionStore implements SessionStore {
  readonly kind = 'memory' as const
  private readonly map = new Map<string, { session: SharedSession; expires: number }>()
  private readonly index = new OwnerIndex()

  constructor(private readonly now: () => number = Date.now) {}

  async load(id: string): Promise<SharedSession | undefined> {
    const entry = this.map.get(id)
    if (!entry) return undefined
    if (entry.expires <= this.now()) {
      this.map.delete(id)
      return undefined
    }
    return structuredClone(entry.session)
  }

  async save(session: SharedSession, ttlMs: number): Promise<void> {
    this.map.set(session.id, { session: structuredClone(session), expires: this.now() + ttlMs })
  }

  async touch(id: string, ttlMs: number, use?: SessionUse): Promise<void> {
    const entry = this.map.get(id)
    if (!entry || entry.expires <= this.now()) return
    entry.expires = this.now() + ttlMs
    if (use) this.index.use(use.owner, id, use.mark, this.now())
  }

  async delete(id: string, owner?: string): Promise<void> {
    this.map.delete(id)
    if (owner !== undefined) this.index.remove(owner, id)
  }

  async admit(owner: string, id: string, cap: number, ttlMs: number): Promise<Admission> {
    return this.index.admit(owner, id, cap, ttlMs, this.now(), (evicted) => this.map.delete(evicted))
  }

  async close(): Promise<void> {}
}

const KEY_PREFIX = 'myc:session:'

/** Whether a stored value is a session record (a damaged or foreign key reads as no session). */
function asSession(value: unknown, id: string): SharedSession | undefined {
  if (value === null || typeof value !== 'object') return undefined
  const s = value as Partial<SharedSession>
  if (
    s.id !== id ||
    typeof s.principal?.key !== 'string' ||
    s.initialize === null ||
    typeof s.initialize !== 'object' ||
    !Array.isArray(s.activeSkills) ||
    !Array.isArray(s.subscriptions) ||
    (s.revoked !== undefined && !Array.isArray(s.revoked))
  )
    return undefined
  return s as SharedSession
}

/** Each owner's index of sessions in Redis (a sorted set: session id, scored by its last use). */
const OWNER_PREFIX = 'myc:owner:'

/** The time on Redis's clock, in ms (the replicas' clocks never meet). */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`

/** MemorySessionStore's OwnerIndex as Redis scripts, each one atomic step. */
const OWNER_SCRIPTS = {
  /** KEYS[1] the owner's index; ARGV cap, ttl, BUSY_MS, the new id, the session key prefix; replies {1, evicted ids} or {0, held}. */
  admit: `${NOW}
local cap, ttl, busy = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - ttl))
local evicted = {}
while redis.call('ZCARD', KEYS[1]) >= cap do
  local idle = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1)
  if #idle == 0 then return {0, redis.call('ZCARD', KEYS[1])} end
  redis.call('ZREM', KEYS[1], idle[1])
  redis.call('DEL', ARGV[5] .. idle[1])
  evicted[#evicted + 1] = idle[1]
end
redis.call('ZADD', KEYS[1], now + busy, ARGV[4])
redis.call('PEXPIRE', KEYS[1], ttl + busy)
return {1, evicted}`,
  /** KEYS[1] the session, KEYS[2] its owner's index; ARGV ttl, mark ('busy', 'idle' or ''), BUSY_MS, the id. */
  touch: `if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then return 0 end
${NOW}
local at = now
if ARGV[2] == 'busy' then at = now + tonumber(ARGV[3]) end
local current = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[4]) or '-1')
if ARGV[2] == 'idle' or at > current then redis.call('ZADD', KEYS[2], at, ARGV[4]) end
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[1]) + tonumber(ARGV[3]))
return 1`,
  /** KEYS[1] the session, KEYS[2] its owner's index; ARGV the id. */
  delete: `redis.call('DEL', KEYS[1])
return redis.call('ZREM', KEYS[2], ARGV[1])`,
}

/** Sessions in Redis, shared by every replica pointed at it (node-redis, loaded only when configured); every command has a deadline (GuardedRedis). */
export class RedisSessionStore implements SessionStore {
  readonly kind = 'redis' as const

  private constructor(
    private readonly redis: GuardedRedis,
    private readonly url: string,
  ) {}

  /** `http.rateLimit` counted in this Redis, by every replica together, over the same connection. */
  rateLimiter(config: RateLimitConfig): RateLimit {
    return new SharedRateLimiter(config, this.redis)
  }

  /** The people's OAuth logins in this Redis, over the same connection. */
  tokenEntries(): SharedEntries {
    return new RedisTokenEntries(this.redis, `${redactUrl(this.url)} (the people's OAuth logins)`)
  }

  /** The people's own secrets in this Redis, over the same connection. */
  secretEntries(): SharedEntries {
    return new RedisTokenEntries(this.redis, `${redactUrl(this.url)} (the people's secrets)`, SECRET_ENTRIES)
  }

  /** Connects (and pings) at start: an unreachable Redis is a runtime error naming the setting. `connectTimeoutMs`: how long a connection may take (5 s); `commandTimeoutMs`: each command's deadline (2 s). */
  static async connect(
    url: string,
    options: StoreOptions & { connectTimeoutMs?: number } = {},
  ): Promise<RedisSessionStore> {
    const redis = await connectRedis(url, {
      onError: (error) => options.onError?.(error),
      ...(options.onChange ? { onChange: options.onChange } : {}),
      ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
      ...(options.commandTimeoutMs !== undefined ? { timeoutMs: options.commandTimeoutMs } : {}),
    })
    return new RedisSessionStore(redis, url)
  }

  async load(id: string): Promise<SharedSession | undefined> {
    const text = await this.redis.get(KEY_PREFIX + id)
    if (text === null) return undefined
    try {
      return asSession(JSON.parse(text), id)
    } catch {
      // Not JSON: no session (as asSession says of a foreign value).
      return undefined
    }
  }

  async save(session: SharedSession, ttlMs: number): Promise<void> {
    await this.redis.set(KEY_PREFIX + session.id, JSON.stringify(session), {
      expiration: { type: 'PX', value: ttlMs },
    })
  }

  async touch(id: string, ttlMs: number, use?: SessionUse): Promise<void> {
    if (!use) {
      await this.redis.pExpire(KEY_PREFIX + id, ttlMs)
      return
    }
    await this.redis.eval(OWNER_SCRIPTS.touch, {
      keys: [KEY_PREFIX + id, ownerKey(use.owner)],
      arguments: [String(ttlMs), use.mark ?? '', String(BUSY_MS), id],
    })
  }

  async delete(id: string, owner?: string): Promise<void> {
    if (owner === undefined) await this.redis.del(KEY_PREFIX + id)
    else await this.redis.eval(OWNER_SCRIPTS.delete, { keys: [KEY_PREFIX + id, ownerKey(owner)], arguments: [id] })
  }

  async admit(owner: string, id: string, cap: number, ttlMs: number): Promise<Admission> {
    const [ok, detail] = (await this.redis.eval(OWNER_SCRIPTS.admit, {
      keys: [ownerKey(owner)],
      arguments: [String(cap), String(ttlMs), String(BUSY_MS), id, KEY_PREFIX],
    })) as [number, string[] | number]
    return ok === 1 ? { ok: true, evicted: detail as string[] } : { ok: false, held: Number(detail) }
  }

  ready(): Promise<boolean> {
    return this.redis.ready()
  }

  close(): Promise<void> {
    return this.redis.close()
  }
}

/** Where an owner's index lives: a digest of the credential's key (nothing of a token is stored). */
function ownerKey(owner: string): string {
  return OWNER_PREFIX + createHash('sha256').update(owner).digest('hex').slice(0, 32)
}

/** What the store tells its user: node-redis's connection errors, and when Redis stops and starts answering. */
export interface StoreEvents {
  onError?(error: Error): void
  onChange?(up: boolean, error?: Error): void
}

/** How a Redis store is opened: its events, and each command's deadline (2 s; a test of an outage shortens it). */
interface StoreOptions extends StoreEvents {
  commandTimeoutMs?: number
}

/** The store `http.sessionStore` names: "memory" (default) or a redis:// / rediss:// URL. */
export async function openSessionStore(setting: string, options: StoreOptions = {}): Promise<SessionStore> {
  if (setting === 'memory') return new MemorySessionStore()
  return RedisSessionStore.connect(setting, options)
}

import { redactUrl } from '../redact.js'
import { MycError } from '../errors.js'
import { SharedRateLimiter, type RateLimit, type RateLimitConfig } from './rate-limit.js'
import type { HttpPrincipal } from './principals.js'
import type { SharedEntries } from '../oauth/token-store.js'
import { RedisTokenEntries } from './redis-token-entries.js'

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

/**
 * Where session state lives between requests, so that any replica can serve
 * any session: in this process (default) or in Redis (`http.sessionStore:
 * "redis://…"`). Entries expire `ttlMs` after their last touch.
 */
export interface SessionStore {
  readonly kind: 'memory' | 'redis'
  load(id: string): Promise<SharedSession | undefined>
  save(session: SharedSession, ttlMs: number): Promise<void>
  /** Extends an entry's life (a request came). */
  touch(id: string, ttlMs: number): Promise<void>
  delete(id: string): Promise<void>
  close(): Promise<void>
  /** A rate limit counted in the store, shared by the replicas that use it (Redis); absent: each process counts its own. */
  rateLimiter?(config: RateLimitConfig, onError: (error: Error) => void): RateLimit
  /** The people's OAuth logins kept in the store, shared by the replicas (Redis); absent: each process keeps its own file. */
  tokenEntries?(): SharedEntries
}

/** Sessions kept in this process only: one replica. */
export class MemorySessionStore implements SessionStore {
  readonly kind = 'memory' as const
  private readonly map = new Map<string, { session: SharedSession; expires: number }>()

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

  async touch(id: string, ttlMs: number): Promise<void> {
    const entry = this.map.get(id)
    if (entry) entry.expires = this.now() + ttlMs
  }

  async delete(id: string): Promise<void> {
    this.map.delete(id)
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

/** Sessions in Redis, shared by every replica pointed at it (node-redis, loaded only when configured). */
export class RedisSessionStore implements SessionStore {
  readonly kind = 'redis' as const

  private constructor(
    private readonly client: {
      get(key: string): Promise<string | null>
      set(key: string, value: string, options: { expiration: { type: 'PX'; value: number } }): Promise<unknown>
      pExpire(key: string, ms: number): Promise<unknown>
      del(key: string): Promise<unknown>
      eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>
      close(): Promise<unknown>
      destroy(): void
    },
    private readonly url: string,
  ) {}

  /** `http.rateLimit` counted in this Redis, by every replica together, over the same connection. */
  rateLimiter(config: RateLimitConfig, onError: (error: Error) => void): RateLimit {
    return new SharedRateLimiter(config, this.client, onError)
  }

  /** The people's OAuth logins in this Redis, over the same connection. */
  tokenEntries(): SharedEntries {
    return new RedisTokenEntries(this.client, `${redactUrl(this.url)} (the people's OAuth logins)`)
  }

  /** Connects (and pings) at start: an unreachable Redis is a runtime error naming the setting. */
  static async connect(url: string, onError: (error: Error) => void): Promise<RedisSessionStore> {
    const { createRedisClient: createClient } = await (await import('./http-deps.js')).loadHttpDeps()
    let connected = false
    // At start a refusal is final (myc says so and exits); once connected, a lost connection is retried.
    const client = createClient({
      url,
      socket: {
        connectTimeout: 5_000,
        reconnectStrategy: (retries: number, cause: Error) => (connected ? Math.min(100 * 2 ** retries, 5_000) : cause),
      },
    })
    client.on('error', (error: Error) => onError(error))
    try {
      await client.connect()
      await client.ping()
      connected = true
    } catch (error) {
      if (client.isOpen) client.destroy()
      throw new MycError(
        'runtime',
        `http.sessionStore: cannot reach Redis at ${redactUrl(url)}: ${(error as Error).message}`,
      )
    }
    return new RedisSessionStore(client as never, url)
  }

  async load(id: string): Promise<SharedSession | undefined> {
    const text = await this.client.get(KEY_PREFIX + id)
    if (text === null) return undefined
    try {
      return asSession(JSON.parse(text), id)
    } catch {
      return undefined
    }
  }

  async save(session: SharedSession, ttlMs: number): Promise<void> {
    await this.client.set(KEY_PREFIX + session.id, JSON.stringify(session), {
      expiration: { type: 'PX', value: ttlMs },
    })
  }

  async touch(id: string, ttlMs: number): Promise<void> {
    await this.client.pExpire(KEY_PREFIX + id, ttlMs)
  }

  async delete(id: string): Promise<void> {
    await this.client.del(KEY_PREFIX + id)
  }

  /** Closes the connection; with Redis away (commands queued for its return), drops it after a second instead of waiting. */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const closed = await Promise.race([
      this.client.close().then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_WAIT_MS))),
    ])
    clearTimeout(timer)
    if (!closed) this.client.destroy()
  }
}

/** How long closing waits for Redis to answer what is queued. */
const CLOSE_WAIT_MS = 1_000

/** The store `http.sessionStore` names: "memory" (default) or a redis:// / rediss:// URL. */
export async function openSessionStore(setting: string, onError: (error: Error) => void): Promise<SessionStore> {
  if (setting === 'memory') return new MemorySessionStore()
  return RedisSessionStore.connect(setting, onError)
}

import { createHash } from 'node:crypto'
import type { PrincipalView } from '../principal/view.js'

/** `http.rateLimit`: how many requests one credential may make. */
export interface RateLimitConfig {
  /** The sustained rate: a credential's bucket refills this many requests a minute. */
  requestsPerMinute: number
  /** How many requests may come at once (the bucket's size); default: a minute's worth. */
  burst?: number | undefined
}

export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number }

/** A limit on requests per credential: this process's buckets (RateLimiter), or ones shared by the replicas (SharedRateLimiter). */
export interface RateLimit {
  readonly config: RateLimitConfig
  take(key: string): RateDecision | Promise<RateDecision>
}

interface Bucket {
  tokens: number
  /** When `tokens` was last worked out (ms, on the limiter's clock). */
  at: number
}

/** Buckets kept before the full ones (which mean the same as none) are dropped. */
const SWEEP_ABOVE = 10_000

/**
 * A token bucket per credential, in this process's memory: each request
 * takes one token; a bucket holds at most `burst` and refills at
 * `requestsPerMinute`. A refused request takes nothing. `now` is a monotonic
 * clock in milliseconds (a fake one in tests).
 */
export class RateLimiter implements RateLimit {
  private readonly buckets = new Map<string, Bucket>()
  readonly capacity: number
  private readonly perMs: number
  private sweepAbove = SWEEP_ABOVE

  constructor(
    readonly config: RateLimitConfig,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.capacity = config.burst ?? config.requestsPerMinute
    this.perMs = config.requestsPerMinute / 60_000
  }

  /** Takes one request from `key`'s bucket, or says how many seconds until it could (at least 1, as Retry-After counts). */
  take(key: string): RateDecision {
    const now = this.now()
    const bucket = this.buckets.get(key)
    const tokens = bucket ? this.refilled(bucket, now) : this.capacity
    // (A hair under 1 is 1: refills are sums of fractions.)
    if (tokens >= 1 - 1e-9) {
      this.buckets.set(key, { tokens: Math.max(0, tokens - 1), at: now })
      if (!bucket && this.buckets.size > this.sweepAbove) this.sweep(now)
      return { ok: true }
    }
    // The bucket is left as it was: a refusal takes nothing.
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / this.perMs / 1000 - 1e-9)) }
  }

  /** How many credentials have a bucket now (full ones may linger until a sweep). */
  get size(): number {
    return this.buckets.size
  }

  private refilled(bucket: Bucket, now: number): number {
    return Math.min(this.capacity, bucket.tokens + Math.max(0, now - bucket.at) * this.perMs)
  }

  /** Drops the buckets that have refilled (many JWT subjects must not grow the map for ever). */
  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) if (this.refilled(bucket, now) >= this.capacity) this.buckets.delete(key)
    this.sweepAbove = Math.max(SWEEP_ABOVE, this.buckets.size * 2)
  }
}

/**
 * The same token bucket in Redis (the store `http.sessionStore` names), so
 * every replica counts a credential's requests together. One Lua script
 * per request does the whole step atomically, on Redis's clock (the
 * replicas' clocks never meet); the key is a hash of the credential's key
 * (nothing of a token is stored), expiring once its bucket would be full
 * again. A Redis that does not answer in time fails the request (the
 * connection's deadline throws StoreUnavailable: `503`), never lets it
 * through unchecked.
 */
export class SharedRateLimiter implements RateLimit {
  readonly capacity: number
  private readonly perMs: number

  constructor(
    readonly config: RateLimitConfig,
    private readonly redis: {
      eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>
    },
  ) {
    this.capacity = config.burst ?? config.requestsPerMinute
    this.perMs = config.requestsPerMinute / 60_000
  }

  async take(key: string): Promise<RateDecision> {
    const id = createHash('sha256').update(key).digest('hex').slice(0, 32)
    const reply = (await this.redis.eval(TOKEN_BUCKET_SCRIPT, {
      keys: [`${RATE_KEY_PREFIX}${id}`],
      arguments: [String(this.capacity), String(this.perMs)],
    })) as [number, number]
    return reply[0] === 1 ? { ok: true } : { ok: false, retryAfterSeconds: Math.max(1, Number(reply[1])) }
  }
}

/** Where the shared buckets live in Redis. */
const RATE_KEY_PREFIX = 'myc:rate:'

/** RateLimiter.take as one atomic Redis step: KEYS[1] the bucket, ARGV capacity and tokens per ms; replies {1, 0} or {0, retry-after seconds}. */
const TOKEN_BUCKET_SCRIPT = `
local capacity = tonumber(ARGV[1])
local perMs = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = capacity
if b[1] and b[2] then tokens = math.min(capacity, tonumber(b[1]) + math.max(0, now - tonumber(b[2])) * perMs) end
if tokens >= 1 - 1e-9 then
  tokens = math.max(0, tokens - 1)
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
  redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / perMs) + 1000)
  return {1, 0}
end
return {0, math.max(1, math.ceil((1 - tokens) / perMs / 1000 - 1e-9))}
`

/**
 * `http.rateLimit` for code mode's inner calls: each takes one request from
 * its credential's bucket, as a call sent on its own would, so a script is
 * no way around the limit. Over it, the call fails in the code with the
 * text a client's request over it gets.
 */
export function innerCallCharge(limiter: RateLimit): (key: string) => Promise<string | undefined> {
  return async (key) => {
    const taken = await limiter.take(key)
    return taken.ok ? undefined : overLimit(limiter.config.requestsPerMinute, taken.retryAfterSeconds)
  }
}

/** `view` with `chargeInnerCall`: every other member its own (bound, as the session route's view binds them). */
export function withCallBudget(view: PrincipalView, charge: () => Promise<string | undefined>): PrincipalView {
  return new Proxy(view, {
    get: (target, prop) => {
      if (prop === 'chargeInnerCall') return charge
      const value = Reflect.get(target, prop, target) as unknown
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
}

/** What a request over `http.rateLimit` is told, a call sent on its own or one made from code. */
export function overLimit(requestsPerMinute: number, retryAfterSeconds: number): string {
  return `Too Many Requests: over ${requestsPerMinute} requests a minute for this credential; retry in ${retryAfterSeconds} s`
}

/** `http.rateLimit`: how many requests one credential may make. */
export interface RateLimitConfig {
  /** The sustained rate: a credential's bucket refills this many requests a minute. */
  requestsPerMinute: number
  /** How many requests may come at once (the bucket's size); default: a minute's worth. */
  burst?: number | undefined
}

export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number }

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
export class RateLimiter {
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

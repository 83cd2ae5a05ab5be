import { describe, expect, it } from 'vitest'
import { RateLimiter } from '../../src/http/rate-limit.js'

/** A limiter on a clock the test moves (ms). */
function limiter(requestsPerMinute: number, burst?: number) {
  const clock = { now: 0 }
  return { clock, limits: new RateLimiter({ requestsPerMinute, burst }, () => clock.now) }
}

const takeN = (l: RateLimiter, key: string, n: number) => Array.from({ length: n }, () => l.take(key).ok)

describe('RateLimiter: a token bucket per credential', () => {
  it('lets a burst through, then refuses with the seconds until the next request may come', () => {
    const { clock, limits } = limiter(60, 3)
    expect(takeN(limits, 'token:0', 3)).toEqual([true, true, true])
    expect(limits.take('token:0')).toEqual({ ok: false, retryAfterSeconds: 1 })
    clock.now = 999
    expect(limits.take('token:0').ok).toBe(false)
    clock.now = 1_000
    expect(limits.take('token:0').ok).toBe(true)
    expect(limits.take('token:0').ok).toBe(false)
  })

  it('refills at requestsPerMinute, never beyond the burst', () => {
    const { clock, limits } = limiter(6, 2)
    expect(takeN(limits, 'k', 3)).toEqual([true, true, false])
    // One request every 10 s.
    expect(limits.take('k')).toEqual({ ok: false, retryAfterSeconds: 10 })
    clock.now = 4_000
    expect(limits.take('k')).toEqual({ ok: false, retryAfterSeconds: 6 })
    clock.now = 10_000
    expect(takeN(limits, 'k', 2)).toEqual([true, false])
    // An hour idle fills the bucket to the burst only.
    clock.now += 3_600_000
    expect(takeN(limits, 'k', 3)).toEqual([true, true, false])
  })

  it('a refused request takes nothing: a client that keeps trying is let in once the bucket refills', () => {
    const { clock, limits } = limiter(60, 1)
    expect(limits.take('k').ok).toBe(true)
    for (let t = 100; t < 1_000; t += 100) {
      clock.now = t
      expect(limits.take('k').ok).toBe(false)
    }
    clock.now = 1_000
    expect(limits.take('k').ok).toBe(true)
  })

  it('the burst defaults to a minute of requests', () => {
    const { limits } = limiter(5)
    expect(limits.capacity).toBe(5)
    expect(takeN(limits, 'k', 6)).toEqual([true, true, true, true, true, false])
  })

  it('each credential has its own bucket', () => {
    const { limits } = limiter(60, 2)
    expect(takeN(limits, 'token:0', 3)).toEqual([true, true, false])
    expect(takeN(limits, 'token:1', 2)).toEqual([true, true])
    expect(takeN(limits, 'jwt:alice', 2)).toEqual([true, true])
    expect(limits.take('launch').ok).toBe(true)
  })

  it('Retry-After rounds up to whole seconds, and is at least 1', () => {
    const { clock, limits } = limiter(7, 1)
    expect(limits.take('k').ok).toBe(true)
    clock.now = 8_500
    // 60/7 s ≈ 8.57 s per request: 0.07 s left, said as 1.
    expect(limits.take('k')).toEqual({ ok: false, retryAfterSeconds: 1 })
    const slow = limiter(1, 1).limits
    expect(slow.take('k').ok).toBe(true)
    expect(slow.take('k')).toEqual({ ok: false, retryAfterSeconds: 60 })
  })

  it('does not keep a bucket per subject for ever: full ones are swept once there are many', () => {
    const { clock, limits } = limiter(60_000, 1)
    for (let i = 0; i < 10_001; i++) limits.take(`jwt:old-${i}`)
    expect(limits.size).toBe(10_001)
    // The old subjects' buckets refill in 1 ms; new subjects arrive, and once the map has doubled the full buckets go.
    clock.now = 10
    for (let i = 0; i < 10_002; i++) limits.take(`jwt:new-${i}`)
    expect(limits.size).toBe(10_002)
    // A bucket still draining survives a sweep.
    const { clock: c2, limits: l2 } = limiter(1, 1)
    l2.take('busy')
    for (let i = 0; i < 10_001; i++) l2.take(`jwt:${i}`)
    c2.now = 1
    for (let i = 0; i < 10_010; i++) l2.take(`jwt:late-${i}`)
    expect(l2.take('busy').ok).toBe(false)
  })
})

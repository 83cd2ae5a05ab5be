import { describe, expect, it } from 'vitest'
import { backoffDelay } from '../../src/children/backoff.js'

const policy = { maxRetries: 5, initialDelayMs: 100, maxDelayMs: 1_000 }

describe('backoffDelay', () => {
  it('grows exponentially within [ceiling/2, ceiling]', () => {
    expect(backoffDelay(0, policy, () => 0)).toBe(50)
    expect(backoffDelay(0, policy, () => 1)).toBe(100)
    expect(backoffDelay(1, policy, () => 0)).toBe(100)
    expect(backoffDelay(2, policy, () => 1)).toBe(400)
  })

  it('is capped at maxDelayMs', () => {
    expect(backoffDelay(4, policy, () => 1)).toBe(1_000)
  })

  it('jitters between calls', () => {
    const values = new Set(Array.from({ length: 20 }, (_, i) => backoffDelay(3, policy, () => i / 20)))
    expect(values.size).toBeGreaterThan(10)
  })

  it('gives up after maxRetries', () => {
    expect(backoffDelay(5, policy)).toBeUndefined()
    expect(backoffDelay(0, { ...policy, maxRetries: 0 })).toBeUndefined()
  })
})

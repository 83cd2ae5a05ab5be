/** Requests one credential may have in flight by default (`http.maxInFlightPerCredential`). */
export const MAX_IN_FLIGHT_PER_CREDENTIAL = 128

/**
 * Requests being answered per key (a credential), at most `max` each. A
 * place is taken before the request's body is read, so what one credential
 * can make myc hold at once is bounded by `max` bodies and their calls.
 */
export class InFlightLimit {
  private readonly counts = new Map<string, number>()

  constructor(readonly max: number) {}

  /** A place for one more request of `key`, or undefined at the cap; the function returned gives it back (once). */
  take(key: string): (() => void) | undefined {
    const n = this.counts.get(key) ?? 0
    if (n >= this.max) return undefined
    this.counts.set(key, n + 1)
    let given = false
    return () => {
      if (given) return
      given = true
      const left = (this.counts.get(key) ?? 1) - 1
      if (left > 0) this.counts.set(key, left)
      else this.counts.delete(key)
    }
  }

  /** Requests of `key` in flight now. */
  count(key: string): number {
    return this.counts.get(key) ?? 0
  }
}

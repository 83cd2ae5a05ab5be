/**
 * Cancellation of one forwarded request: what an AbortController does, at a
 * fraction of its cost on the hot path (no EventTarget, no event objects).
 * Made for every relayed call; an AbortSignal is made only for the code that
 * needs one (built-in tools, SDK requests), on first use.
 */
export class Cancellation {
  private done = false
  private why: unknown
  private listeners: Array<() => void> | undefined
  private controller: AbortController | undefined

  get aborted(): boolean {
    return this.done
  }

  get reason(): unknown {
    return this.why
  }

  /** An AbortSignal that follows this cancellation. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController()
      if (this.done) this.controller.abort(this.why)
    }
    return this.controller.signal
  }

  /** Calls `listener` once, on cancellation (at once if it already happened). */
  onCancel(listener: () => void): void {
    if (this.done) {
      listener()
      return
    }
    ;(this.listeners ??= []).push(listener)
  }

  /** Forgets a listener (its request finished). */
  off(listener: () => void): void {
    const list = this.listeners
    if (!list) return
    const i = list.indexOf(listener)
    if (i !== -1) list.splice(i, 1)
  }

  cancel(reason: unknown): void {
    if (this.done) return
    this.done = true
    this.why = reason
    const list = this.listeners
    this.listeners = undefined
    if (list) for (const listener of list) listener()
    this.controller?.abort(reason)
  }

  /** A cancellation that follows an AbortSignal (for callers that have one). */
  static from(signal: AbortSignal): Cancellation {
    const c = new Cancellation()
    if (signal.aborted) c.cancel(signal.reason)
    else signal.addEventListener('abort', () => c.cancel(signal.reason), { once: true })
    return c
  }
}

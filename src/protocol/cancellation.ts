/**
 * Cancellation of one forwarded request: what an AbortController does, at a
 * fraction of its cost on the hot path (no EventTarget, no event objects).
 * Made for every relayed call; an AbortSignal is made only for the code that
 * needs one (built-in tools, SDK requests), on first use.
 */
export class Cancellation {
  private done = false
  private why: unknown
  /** The first listener, and any after it in order: a relayed call has one, so it costs no array. */
  private first: (() => void) | undefined
  private more: Array<() => void> | undefined
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
    if (this.first === undefined) this.first = listener
    else (this.more ??= []).push(listener)
  }

  /** Forgets a listener (its request finished). */
  off(listener: () => void): void {
    const more = this.more
    if (this.first === listener) {
      this.first = more?.shift()
      return
    }
    if (!more) return
    const i = more.indexOf(listener)
    if (i !== -1) more.splice(i, 1)
  }

  cancel(reason: unknown): void {
    if (this.done) return
    this.done = true
    this.why = reason
    const { first, more } = this
    this.first = this.more = undefined
    first?.()
    if (more) for (const listener of more) listener()
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

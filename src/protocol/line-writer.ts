import type { Writable } from 'node:stream'

const isText = (line: string | readonly Uint8Array[]): line is string => typeof line === 'string'

/**
 * What `write` hands back for a line it queued: fulfilled, never rejected,
 * so a sender that gets it needs no rejection handler (one fewer promise
 * and microtask per message: `sentOk`). The flush is queued on it too: a
 * reaction on a settled promise runs as a microtask, where Node's
 * `queueMicrotask` would make an AsyncResource and a bound function for
 * each one and enter its async context around the callback (seen in
 * profiles of a relayed call, twice a call).
 */
const QUEUED: Promise<void> = Promise.resolve()

/** Whether a send's promise is the writer's for a queued line (it cannot reject: nothing to catch). */
export const sentOk = (sent: Promise<void>): boolean => sent === QUEUED

/**
 * Writes newline-delimited messages to a stream, one `write` per burst: the
 * lines queued by the current callback and by the promise reactions already
 * waiting when the first of them came (every response to the lines one read
 * brought in, say) go out together, in a microtask queued behind those. A write is a system call
 * and a wake-up of the peer, the largest cost of a relayed call; under load
 * this makes it one per batch instead of one per message. A lone message goes
 * out before the process returns to the event loop: flushing at the loop's
 * check phase instead (`setImmediate`) cost a sequential call 5–15 µs of
 * latency here, for the same throughput. While the stream is full (`drain`
 * pending) lines wait in memory.
 *
 * A line may also come as the pieces of its bytes (a large answer relayed
 * as the child wrote it, result-lines.ts): those are handed to the stream
 * as they are, in one corked burst with the text around them, so neither
 * is copied into one string nor encoded again.
 */
export class LineWriter {
  private pending: Array<string | readonly Uint8Array[]> = []
  private scheduled = false
  private blocked = false
  private failed: Error | undefined

  constructor(
    private readonly stream: Writable,
    private readonly onError: (error: Error) => void = () => {},
  ) {}

  /** Queues one line (without its newline), as text or as the pieces of its bytes. Rejects only when the stream is known to be broken. */
  write(line: string | readonly Uint8Array[]): Promise<void> {
    if (this.failed) return Promise.reject(this.failed)
    this.pending.push(line)
    if (!this.scheduled && !this.blocked) {
      this.scheduled = true
      void QUEUED.then(this.flush)
    }
    return QUEUED
  }

  /** Writes what is queued now (also used before closing). */
  readonly flush = (): void => {
    this.scheduled = false
    if (this.pending.length === 0 || this.blocked || this.failed) return
    const lines = this.pending
    this.pending = []
    const ok = lines.every(isText)
      ? this.stream.write(lines.length === 1 ? `${lines[0]}\n` : `${lines.join('\n')}\n`, this.written)
      : this.writePieces(lines)
    if (!ok) {
      this.blocked = true
      this.stream.once('drain', () => {
        this.blocked = false
        this.flush()
      })
    }
  }

  private readonly written = (error: Error | null | undefined): void => {
    if (!error) return
    this.failed ??= error
    this.onError(error)
  }

  /** Text runs and byte pieces, in order, in one corked burst (one writev); says whether the stream has room left. */
  private writePieces(lines: ReadonlyArray<string | readonly Uint8Array[]>): boolean {
    const out: Array<string | Uint8Array> = []
    let text = ''
    for (const line of lines) {
      if (typeof line === 'string') {
        text += `${line}\n`
        continue
      }
      if (text !== '') out.push(text)
      out.push(...line)
      text = '\n'
    }
    out.push(text)
    this.stream.cork()
    let ok = true
    for (let i = 0; i < out.length; i++) ok = this.stream.write(out[i], i === out.length - 1 ? this.written : undefined)
    this.stream.uncork()
    return ok
  }
}

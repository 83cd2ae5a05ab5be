export interface LineLimit {
  /** Longest line (in characters) kept whole. */
  maxLength: number
  /**
   * For a line longer than `maxLength`: a sink that is handed the line's
   * text as it arrives (none of it is kept), then `end()` at its newline.
   * Without it the partial line is handed to `onLine` as it is (logs, not
   * messages).
   */
  oversized?: () => OversizedLine
}

/** Where the text of one oversized line goes. */
interface OversizedLine {
  feed(text: string): void
  end(): void
}

/**
 * Splits a text stream into lines (a trailing `\r` dropped, blank lines
 * skipped) and hands each to `onLine`. A limit bounds the memory a peer
 * that never ends its line can take.
 */
export function lineSplitter(
  onLine: (line: string) => void,
  limit: LineLimit = { maxLength: Number.POSITIVE_INFINITY },
): (chunk: string) => void {
  let buffer = ''
  /** Inside an oversized line: its text goes to this sink until its newline. */
  let sink: OversizedLine | undefined
  return (chunk) => {
    let start = 0
    let nl: number
    while ((nl = chunk.indexOf('\n', start)) !== -1) {
      if (sink) {
        sink.feed(chunk.slice(start, nl))
        sink.end()
        sink = undefined
      } else {
        let line = buffer === '' ? chunk.slice(start, nl) : buffer + chunk.slice(start, nl)
        if (line.endsWith('\r')) line = line.slice(0, -1)
        if (line.length > limit.maxLength && limit.oversized) {
          const whole = limit.oversized()
          whole.feed(line)
          whole.end()
        } else if (line.length > limit.maxLength) onLine(line)
        else if (line.trim() !== '') onLine(line)
      }
      buffer = ''
      start = nl + 1
    }
    if (start === chunk.length) return
    const rest = start === 0 ? chunk : chunk.slice(start)
    if (sink) return sink.feed(rest)
    buffer += rest
    if (buffer.length > limit.maxLength) {
      const partial = buffer
      buffer = ''
      if (limit.oversized) {
        sink = limit.oversized()
        sink.feed(partial)
      } else onLine(partial)
    }
  }
}

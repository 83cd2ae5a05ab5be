export interface LineLimit {
  /** Longest line (in characters) kept whole. */
  maxLength: number
  /**
   * Called once for a line longer than `maxLength`, with its first
   * characters; the rest of that line is dropped as it arrives. Without it
   * the partial line is handed to `onLine` as it is (logs, not messages).
   */
  onOversized?: (prefix: string) => void
}

/**
 * Splits a text stream into lines (a trailing `\r` dropped, blank lines
 * skipped) and hands each to `onLine`. A limit bounds the memory a peer
 * that never ends its line can take.
 */
export function lineSplitter(onLine: (line: string) => void, limit: LineLimit = { maxLength: Number.POSITIVE_INFINITY }): (chunk: string) => void {
  let buffer = ''
  /** Inside an oversized line: drop text until its newline. */
  let skipping = false
  const oversized = (text: string) => {
    if (limit.onOversized) {
      limit.onOversized(text.slice(0, 4096))
      return
    }
    onLine(text)
  }
  return (chunk) => {
    let start = 0
    let nl: number
    while ((nl = chunk.indexOf('\n', start)) !== -1) {
      if (skipping) {
        skipping = false
      } else {
        let line = buffer === '' ? chunk.slice(start, nl) : buffer + chunk.slice(start, nl)
        if (line.endsWith('\r')) line = line.slice(0, -1)
        if (line.length > limit.maxLength) oversized(line)
        else if (line.trim() !== '') onLine(line)
      }
      buffer = ''
      start = nl + 1
    }
    if (skipping || start === chunk.length) return
    buffer += start === 0 ? chunk : chunk.slice(start)
    if (buffer.length > limit.maxLength) {
      const partial = buffer
      buffer = ''
      if (limit.onOversized) skipping = true
      oversized(partial)
    }
  }
}

export interface LineLimit {
  /** Longest line (in characters) kept whole: a longer one is handed to `onLine` in parts as it grows (logs, not messages). */
  maxLength: number
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
  return (chunk) => {
    let start = 0
    let nl: number
    while ((nl = chunk.indexOf('\n', start)) !== -1) {
      let line = buffer === '' ? chunk.slice(start, nl) : buffer + chunk.slice(start, nl)
      if (line.endsWith('\r')) line = line.slice(0, -1)
      if (line.length > limit.maxLength || line.trim() !== '') onLine(line)
      buffer = ''
      start = nl + 1
    }
    if (start === chunk.length) return
    buffer += start === 0 ? chunk : chunk.slice(start)
    if (buffer.length > limit.maxLength) {
      const partial = buffer
      buffer = ''
      onLine(partial)
    }
  }
}

/**
 * Splits a text stream into lines (a trailing `\r` dropped, blank lines
 * skipped) and hands each to `onLine`. `maxBuffered` bounds the memory a
 * peer that never ends its line can take; past it the partial line is
 * handed over as is.
 */
export function lineSplitter(onLine: (line: string) => void, maxBuffered = Number.POSITIVE_INFINITY): (chunk: string) => void {
  let buffer = ''
  return (chunk) => {
    buffer += chunk
    let nl: number
    while ((nl = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      const trimmed = line.endsWith('\r') ? line.slice(0, -1) : line
      if (trimmed.trim() !== '') onLine(trimmed)
    }
    if (buffer.length > maxBuffered) {
      onLine(buffer)
      buffer = ''
    }
  }
}

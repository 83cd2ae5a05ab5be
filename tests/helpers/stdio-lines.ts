import type { Readable } from 'node:stream'

/** Hands `onLine` each line a stream writes, as text without its newline (a test reading what myc writes on stdout). */
export function eachLine(stream: Readable, onLine: (line: string) => void): void {
  let buffer = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => {
    buffer += chunk
    let nl: number
    while ((nl = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      onLine(line)
    }
  })
}

import { StringDecoder } from 'node:string_decoder'

/** The size of one block a large line is copied into as it arrives (each its own ArrayBuffer, so it can be transferred). */
const BLOCK_BYTES = 1024 * 1024

/**
 * The bytes of one large line, copied as they arrive into blocks of its
 * own: nothing else shares their memory (a chunk read from a pipe may hold
 * the end of one line and the start of the next), so they can be handed to
 * a worker thread without a copy (`transferable`). Copying a 64 KiB chunk
 * costs microseconds; the copy of the whole line is spread over the turns
 * that read it, where one concatenation at its end would take a turn.
 */
export class LineBlocks {
  private readonly blocks: Buffer[] = []
  /** Bytes used in the last block. */
  private used = BLOCK_BYTES
  length = 0

  append(bytes: Uint8Array): void {
    let from = 0
    while (from < bytes.length) {
      if (this.used === BLOCK_BYTES) {
        this.blocks.push(Buffer.allocUnsafeSlow(BLOCK_BYTES))
        this.used = 0
      }
      const n = Math.min(BLOCK_BYTES - this.used, bytes.length - from)
      this.blocks.at(-1)!.set(bytes.subarray(from, from + n), this.used)
      this.used += n
      from += n
    }
    this.length += bytes.length
  }

  /** The blocks, the last one cut to what it holds; each view covers the start of its own ArrayBuffer. */
  transferable(): Uint8Array[] {
    return this.blocks.map((block, i) => (i === this.blocks.length - 1 ? block.subarray(0, this.used) : block))
  }

  /** The line as one Buffer (where no worker reads it). */
  concat(): Buffer {
    return Buffer.concat(this.transferable(), this.length)
  }
}

/** Calls `lineEnds` for each newline in `chunk`, in order; says where the bytes after the last one start. */
function eachNewline(chunk: Buffer, lineEnds: (chunk: Buffer, start: number, nl: number) => void): number {
  let start = 0
  let nl: number
  while ((nl = chunk.indexOf(0x0a, start)) !== -1) {
    lineEnds(chunk, start, nl)
    start = nl + 1
  }
  return start
}

/** A line that came in pieces, its `last` one now: joined into one copy, handed to `line` whole. */
function joined(
  parts: Buffer[],
  length: number,
  last: Buffer,
  line: (bytes: Buffer, start: number, end: number) => void,
): void {
  parts.push(last)
  const bytes = Buffer.concat(parts, length + last.length)
  line(bytes, 0, bytes.length)
}

/**
 * A short line, `bytes` from `start` to `end` (its newline cut off):
 * decoded without its trailing `\r` and handed to `onLine` (a blank one
 * skipped), with its bytes when it has `bytesAt` or more of them.
 */
function handOn(
  bytes: Buffer,
  start: number,
  end: number,
  bytesAt: number,
  onLine: (line: string, bytes?: Buffer) => void,
): void {
  if (end > start && bytes[end - 1] === 0x0d) end--
  const line = bytes.toString('utf8', start, end)
  if (line.trim() === '') return
  if (end - start < bytesAt) onLine(line)
  else onLine(line, start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end))
}

/**
 * Splits a byte stream into newline-delimited lines without decoding what
 * it does not need to: a line shorter than `largeAt` bytes is decoded to
 * text (a trailing `\r` dropped, blank lines skipped) and handed to
 * `onLine`, with its bytes (without the `\r`) when it has `bytesAt` or
 * more of them (a view of the chunk that brought it, or the one copy its
 * pieces were joined into for decoding: never copied for this); a longer
 * one is never made into one string here, but collected as `LineBlocks`
 * and handed to `onLarge` whole (its `\r` and blankness are the reader's
 * to judge). A newline byte never occurs inside a UTF-8 sequence, so a
 * line's text is decoded from all its bytes at once.
 */
export function byteLineSplitter(
  onLine: (line: string, bytes?: Buffer) => void,
  onLarge: (line: LineBlocks) => void,
  largeAt: number,
  bytesAt = Number.POSITIVE_INFINITY,
): (chunk: Buffer) => void {
  /** The start of the current line, while it is short, as the pieces of the chunks that brought it. */
  let parts: Buffer[] = []
  let partsLength = 0
  /** The current line, once it is known to be large. */
  let large: LineBlocks | undefined
  const small = (bytes: Buffer, start: number, end: number) => handOn(bytes, start, end, bytesAt, onLine)
  /** The current line is large: what came of it so far goes into its blocks. */
  const growLarge = (): LineBlocks => {
    const blocks = new LineBlocks()
    for (const part of parts) blocks.append(part)
    parts = []
    partsLength = 0
    return blocks
  }
  const lineEnds = (chunk: Buffer, start: number, nl: number) => {
    if (large === undefined && partsLength + nl - start >= largeAt) large = growLarge()
    if (large !== undefined) {
      large.append(chunk.subarray(start, nl))
      const line = large
      large = undefined
      onLarge(line)
    } else if (parts.length === 0) small(chunk, start, nl)
    else joined(parts, partsLength, chunk.subarray(start, nl), small)
    parts = []
    partsLength = 0
  }
  return (chunk) => {
    const start = eachNewline(chunk, lineEnds)
    if (start === chunk.length) return
    const rest = start === 0 ? chunk : chunk.subarray(start)
    if (large !== undefined) return large.append(rest)
    parts.push(rest)
    partsLength += rest.length
    if (partsLength < largeAt) return
    large = growLarge()
  }
}

/** Where the text of one line longer than a limit goes, as it arrives (none of it is kept). */
export interface OversizedLine {
  feed(text: string): void
  end(): void
}

/**
 * Splits a byte stream into newline-delimited lines of at most `maxBytes`
 * bytes each (a trailing `\r` dropped, blank lines skipped), handing each
 * to `onLine` as its text, with the bytes it was decoded from when it has
 * `bytesAt` or more of them (a view of the chunk that brought it, or of the
 * one copy its pieces were joined into). A longer line is never kept: its
 * text goes to a sink from `oversized` as it arrives (decoded across chunk
 * boundaries), then `end()` at its newline.
 */
export function boundedByteLineSplitter(
  onLine: (line: string, bytes?: Buffer) => void,
  limits: { maxBytes: number; bytesAt: number },
  oversized: () => OversizedLine,
): (chunk: Buffer | string) => void {
  const { maxBytes, bytesAt } = limits
  /** The start of the current line, as the pieces of the chunks that brought it. */
  let parts: Buffer[] = []
  let partsLength = 0
  /** Inside an oversized line: where its text goes, and the decoder that carries a character split between chunks. */
  let sink: { line: OversizedLine; decoder: StringDecoder } | undefined
  const whole = (bytes: Buffer, start: number, end: number) => {
    const length = end - start - (end > start && bytes[end - 1] === 0x0d ? 1 : 0)
    if (length <= maxBytes) return handOn(bytes, start, end, bytesAt, onLine)
    const refused = oversized()
    refused.feed(bytes.toString('utf8', start, start + length))
    refused.end()
  }
  const lineEnds = (chunk: Buffer, start: number, nl: number) => {
    if (sink) {
      sink.line.feed(sink.decoder.end(chunk.subarray(start, nl)))
      sink.line.end()
      sink = undefined
    } else if (parts.length === 0) whole(chunk, start, nl)
    else joined(parts, partsLength, chunk.subarray(start, nl), whole)
    parts = []
    partsLength = 0
  }
  return (input) => {
    // A stream set to decode hands over text: its bytes again (the lines are cut and decoded here).
    const chunk = typeof input === 'string' ? Buffer.from(input) : input
    const start = eachNewline(chunk, lineEnds)
    if (start === chunk.length) return
    const rest = start === 0 ? chunk : chunk.subarray(start)
    if (sink) return sink.line.feed(sink.decoder.write(rest))
    parts.push(rest)
    partsLength += rest.length
    if (partsLength <= maxBytes) return
    sink = { line: oversized(), decoder: new StringDecoder('utf8') }
    for (const part of parts) sink.line.feed(sink.decoder.write(part))
    parts = []
    partsLength = 0
  }
}

import { describe, expect, it } from 'vitest'
import { boundedByteLineSplitter, byteLineSplitter, type LineBlocks } from '../../src/protocol/byte-lines.js'

/** Feeds `chunks` to a splitter with `largeAt` (and `bytesAt`), and what it handed on, in order: small lines as text (and bytes), large ones as their bytes. */
function split(chunks: Array<string | Buffer>, largeAt: number, bytesAt?: number) {
  const seen: Array<{ small: string; bytes?: string } | { large: Buffer }> = []
  const feed = byteLineSplitter(
    (line, bytes) => seen.push(bytes ? { small: line, bytes: bytes.toString() } : { small: line }),
    (line: LineBlocks) => seen.push({ large: line.concat() }),
    largeAt,
    bytesAt,
  )
  for (const chunk of chunks) feed(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  return seen
}

describe('byteLineSplitter: lines from bytes, large ones never decoded', () => {
  it('decodes short lines whole: a character split between chunks, a trailing \\r dropped, blank lines skipped', () => {
    const e = Buffer.from('é')
    expect(
      split(
        [
          Buffer.concat([Buffer.from('{"a":"'), e.subarray(0, 1)]),
          Buffer.concat([e.subarray(1), Buffer.from('"}\r\n\n  \n{"b":1}\n')]),
        ],
        100,
      ),
    ).toEqual([{ small: '{"a":"é"}' }, { small: '{"b":1}' }])
  })

  it('hands a line of `largeAt` bytes or more on as its bytes, however the chunks cut it, and the lines around it as text', () => {
    const big = 'y'.repeat(3000)
    const stream = `{"first":1}\n${big}\r\n{"last":2}\n`
    const expected = [{ small: '{"first":1}' }, { large: Buffer.from(`${big}\r`) }, { small: '{"last":2}' }]
    // Whole, in pieces of 7 bytes, and in pieces of 1,000.
    for (const size of [stream.length, 7, 1000]) {
      const bytes = Buffer.from(stream)
      const chunks: Buffer[] = []
      for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size))
      expect(split(chunks, 1000), `pieces of ${size}`).toEqual(expected)
    }
    // One byte short of the limit is still text.
    expect(split([`${'z'.repeat(999)}\n`], 1000)).toEqual([{ small: 'z'.repeat(999) }])
    expect(split([`${'z'.repeat(1000)}\n`], 1000)).toEqual([{ large: Buffer.from('z'.repeat(1000)) }])
  })

  it('hands a short line of `bytesAt` bytes or more on with its bytes too (without the \\r), in one chunk or many', () => {
    const medium = `{"m":"${'é'.repeat(20)}"}`
    const stream = `{"s":1}\n${medium}\r\n`
    const expected = [{ small: '{"s":1}' }, { small: medium, bytes: medium }]
    for (const size of [stream.length, 5]) {
      const bytes = Buffer.from(stream)
      const chunks: Buffer[] = []
      for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size))
      expect(split(chunks, 1000, 20), `pieces of ${size}`).toEqual(expected)
    }
  })

  it('collects a large line larger than one block exactly, and keeps nothing of it once handed on', () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 5, 'q')
    const seen = split([big.subarray(0, 65536), big.subarray(65536), '\n{"after":true}\n'], 1024)
    expect(seen).toHaveLength(2)
    expect((seen[0] as { large: Buffer }).large.equals(big)).toBe(true)
    expect(seen[1]).toEqual({ small: '{"after":true}' })
  })
})

/** Feeds `chunks` to a bounded splitter, and what it handed on: lines as text and bytes, oversized ones as the text their sink was fed. */
function bounded(chunks: Array<string | Buffer>, maxBytes: number, bytesAt = 0) {
  const seen: Array<{ line: string; bytes?: string } | { refused: string }> = []
  const feed = boundedByteLineSplitter(
    (line, bytes) => seen.push(bytes ? { line, bytes: bytes.toString() } : { line }),
    { maxBytes, bytesAt },
    () => {
      let text = ''
      return { feed: (part) => void (text += part), end: () => void seen.push({ refused: text }) }
    },
  )
  for (const chunk of chunks) feed(chunk)
  return seen
}

/** `text`'s bytes in pieces of `size`. */
const pieces = (text: string, size: number) => {
  const bytes = Buffer.from(text)
  const out: Buffer[] = []
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size))
  return out
}

describe('boundedByteLineSplitter: a client’s lines as text and bytes, none longer than the limit kept', () => {
  it('hands each line on with the bytes it was decoded from, however the chunks cut it (a character split too)', () => {
    const stream = '{"a":"é"}\r\n\n  \n{"b":"日本"}\n'
    const expected = [
      { line: '{"a":"é"}', bytes: '{"a":"é"}' },
      { line: '{"b":"日本"}', bytes: '{"b":"日本"}' },
    ]
    for (const size of [1, 2, 7, 100]) expect(bounded(pieces(stream, size), 20), `pieces of ${size}`).toEqual(expected)
    // Text from a stream set to decode is cut the same way.
    expect(bounded([stream], 20)).toEqual(expected)
    // A line shorter than `bytesAt` comes without its bytes.
    expect(bounded([stream], 20, 11)).toEqual([{ line: '{"a":"é"}' }, expected[1]])
  })

  it('accepts a line of exactly the limit, and refuses a longer one without keeping it, its text decoded across chunks', () => {
    const limit = `{"x":"${'é'.repeat(5)}"}` // 18 bytes
    const justOver = `{"x":"${'é'.repeat(5)}y"}` // 19 bytes
    const over = `{"x":"${'é'.repeat(12)}"}` // 32 bytes
    const stream = `${limit}\n${justOver}\n${over}\r\n{"after":1}\n`
    for (const size of [1, 3, 18, 100]) {
      expect(bounded(pieces(stream, size), 18), `pieces of ${size}`).toEqual([
        { line: limit, bytes: limit },
        { refused: justOver },
        // The sink has the line as it came: its \r too when the newline came in a later chunk.
        { refused: expect.stringMatching(/^\{"x":"é{12}"\}\r?$/) },
        { line: '{"after":1}', bytes: '{"after":1}' },
      ])
    }
  })
})

import { describe, expect, it } from 'vitest'
import { byteLineSplitter, type LineBlocks } from '../../src/protocol/byte-lines.js'

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

import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { LineWriter } from '../../src/protocol/line-writer.js'

/** A real Writable that records each write; `full` makes write() say the buffer is full until drained by hand. */
class Recorder extends Writable {
  readonly writes: Array<string | Buffer> = []
  full = false
  private release: (() => void) | undefined
  fail: Error | undefined
  constructor() {
    super({ highWaterMark: 1, decodeStrings: false })
  }
  override _write(chunk: string | Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.writes.push(chunk)
    if (this.fail) return done(this.fail)
    if (this.full) this.release = () => done()
    else done()
  }
  drainNow(): void {
    this.full = false
    this.release?.()
  }
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('LineWriter: one write per burst, in order', () => {
  it('writes the lines of one callback and of the reactions already waiting together, before the event loop turns', async () => {
    const out = new Recorder()
    const writer = new LineWriter(out)
    // Asked before the lines are written: the next turn of the loop finds them written already.
    let flushedBeforeLoop = false
    setImmediate(() => (flushedBeforeLoop = out.writes.length > 0))
    // Reactions queued before the first line: their lines join the same write.
    const earlier = Promise.resolve().then(() => void writer.write('c'))
    void writer.write('a')
    void writer.write('b')
    await earlier
    await tick()
    expect(out.writes).toEqual(['a\nb\nc\n'])
    expect(flushedBeforeLoop).toBe(true)
    // A later burst is its own write, after the first.
    void writer.write('d')
    await tick()
    expect(out.writes).toEqual(['a\nb\nc\n', 'd\n'])
  })

  it('holds lines while the stream is full and writes them, in order, on drain', async () => {
    const out = new Recorder()
    const writer = new LineWriter(out)
    out.full = true
    void writer.write('one')
    await tick()
    void writer.write('two')
    void writer.write('three')
    await tick()
    expect(out.writes).toEqual(['one\n'])
    out.drainNow()
    await tick()
    expect(out.writes).toEqual(['one\n', 'two\nthree\n'])
  })

  it('hands the pieces of a line kept as bytes to the stream as they are, in order with the text around them', async () => {
    const out = new Recorder()
    const writer = new LineWriter(out)
    const head = Buffer.from('{"result":{"n":1},')
    const tail = Buffer.from('}')
    void writer.write('a')
    void writer.write([head, Buffer.from('"id":7'), tail])
    void writer.write('b')
    void writer.write([head, Buffer.from('"id":8'), tail])
    await tick()
    expect(out.writes.map(String).join('')).toBe('a\n{"result":{"n":1},"id":7}\nb\n{"result":{"n":1},"id":8}\n')
    // The same bytes, not a copy of them.
    expect(out.writes.filter((w) => w === head)).toHaveLength(2)
    expect(out.writes.filter((w) => w === tail)).toHaveLength(2)
  })

  it('reports a failed write once and refuses lines after it', async () => {
    const out = new Recorder()
    out.fail = new Error('EPIPE')
    const errors: Error[] = []
    const writer = new LineWriter(out, (error) => errors.push(error))
    out.on('error', () => {})
    void writer.write('x')
    await tick()
    await tick()
    expect(errors.map((e) => e.message)).toEqual(['EPIPE'])
    await expect(writer.write('y')).rejects.toThrow('EPIPE')
  })
})

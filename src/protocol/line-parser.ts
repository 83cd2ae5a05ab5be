import { Worker } from 'node:worker_threads'
import type { LineBlocks } from './byte-lines.js'

/**
 * What a large line read as: a message (JSON.parse's value, an object or
 * an array, and the line's bytes when they are valid UTF-8, with where the
 * last `"id":` in them starts, so that a response can go out again as it
 * came: result-lines.ts); a blank line; text that is no message (its
 * start, for the log); bytes to parse here (the worker could not hand the
 * value over); or nothing, the worker gone (`lost`).
 */
export type ParsedLine =
  | { kind: 'message'; message: object; bytes?: Buffer; lastIdAt: number }
  | { kind: 'blank' }
  | { kind: 'invalid'; start: string }
  | { kind: 'unread'; bytes: Buffer }
  | { kind: 'lost'; reason: string }

/**
 * The worker's code (CommonJS, evaluated: the bundle is one file). It
 * decodes and parses a line, checks that its bytes are UTF-8 and finds the
 * last `"id":` in them, and hands back the value (a structured clone: the
 * same plain objects, arrays, strings and numbers JSON.parse makes, own
 * `__proto__` keys included) and the bytes (transferred, not copied).
 */
const WORKER_SOURCE = `'use strict'
const { parentPort } = require('node:worker_threads')
const { isUtf8 } = require('node:buffer')
parentPort.on('message', ({ n, blocks, length }) => {
  const bytes = Buffer.allocUnsafeSlow(length)
  let at = 0
  for (const block of blocks) {
    bytes.set(block, at)
    at += block.length
  }
  const end = length > 0 && bytes[length - 1] === 13 ? length - 1 : length
  const text = bytes.toString('utf8', 0, end)
  if (text.trim() === '') return parentPort.postMessage({ n, kind: 'blank' })
  let message
  try {
    message = JSON.parse(text)
  } catch {
    // Not JSON: no message, told below.
  }
  if (typeof message !== 'object' || message === null)
    return parentPort.postMessage({ n, kind: 'invalid', start: text.slice(0, 200) })
  const line = bytes.subarray(0, end)
  const keep = isUtf8(line)
  const lastIdAt = keep ? line.lastIndexOf('"id":') : -1
  try {
    parentPort.postMessage({ n, kind: 'message', message, bytes: keep ? line : undefined, lastIdAt }, keep ? [bytes.buffer] : [])
  } catch {
    // The value could not be cloned (nested deeper than the serializer goes): the bytes go back, to be parsed there.
    parentPort.postMessage({ n, kind: 'unread', bytes: line }, [bytes.buffer])
  }
})
`

/** What the worker posts back: a ParsedLine and its number (`bytes` arrive as a Uint8Array over the transferred memory). */
type WorkerAnswer = { n: number } & (
  | { kind: 'message'; message: object; bytes?: Uint8Array; lastIdAt: number }
  | { kind: 'blank' }
  | { kind: 'invalid'; start: string }
  | { kind: 'unread'; bytes: Uint8Array }
)

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/**
 * How long a worker with no line to parse is kept: a worker thread is a
 * second V8 isolate, about 10 MiB of an idle serve's memory (measured:
 * docs/benchmarks.md, "Size and memory"), and starting one again costs a
 * few ms against the ≥ 1 MiB line that needs it.
 */
const WORKER_IDLE_MS = 30_000

/**
 * Parses large lines on a worker thread, so that a 10 MiB answer does not
 * hold the event loop while it is decoded and parsed (calls to other
 * children go on meanwhile). One worker, started at the first large line
 * and stopped after `idleMs` without a line; it holds the process open
 * only while it has lines to parse. A worker that cannot start leaves the
 * line to be parsed by the caller (`unread`); one that dies loses the lines
 * it held (`lost`: the child's transport closes its connection, so no call
 * waits for an answer that is gone), and the next large line starts another.
 */
export class LineParser {
  private worker: Worker | undefined
  private next = 0
  private readonly waiting = new Map<number, (parsed: ParsedLine) => void>()
  private closed = false
  private idleTimer: NodeJS.Timeout | undefined

  constructor(private readonly idleMs = WORKER_IDLE_MS) {}

  /** Whether a worker is running (started, and not yet stopped for idleness, closed or lost). */
  get running(): boolean {
    return this.worker !== undefined
  }

  parse(line: LineBlocks): Promise<ParsedLine> {
    const worker = this.closed ? undefined : (this.worker ?? this.start())
    if (!worker) return Promise.resolve({ kind: 'unread', bytes: line.concat() })
    clearTimeout(this.idleTimer)
    const n = this.next++
    return new Promise((resolve) => {
      if (this.waiting.size === 0) worker.ref()
      this.waiting.set(n, resolve)
      const blocks = line.transferable()
      worker.postMessage(
        { n, blocks, length: line.length },
        blocks.map((block) => block.buffer as ArrayBuffer),
      )
    })
  }

  /** Stops the worker; lines it was parsing are `lost`. */
  close(): void {
    this.closed = true
    clearTimeout(this.idleTimer)
    const worker = this.worker
    if (!worker) return
    this.lose(worker, 'closed')
    void worker.terminate()
  }

  private start(): Worker | undefined {
    let worker: Worker
    try {
      worker = new Worker(WORKER_SOURCE, { eval: true })
    } catch {
      // Named in the class comment: the caller parses the line itself.
      return undefined
    }
    worker.unref()
    worker.on('message', (answer: WorkerAnswer) => this.answered(worker, answer))
    worker.on('error', (error) => this.lose(worker, error.message))
    worker.on('exit', (code) => this.lose(worker, `the worker exited with code ${code}`))
    this.worker = worker
    return worker
  }

  private answered(worker: Worker, answer: WorkerAnswer): void {
    const resolve = this.waiting.get(answer.n)
    if (!resolve) return
    this.waiting.delete(answer.n)
    if (this.waiting.size === 0) this.idle(worker)
    if (answer.kind === 'message')
      resolve({
        kind: 'message',
        message: answer.message,
        ...(answer.bytes ? { bytes: asBuffer(answer.bytes) } : {}),
        lastIdAt: answer.lastIdAt,
      })
    else if (answer.kind === 'unread') resolve({ kind: 'unread', bytes: asBuffer(answer.bytes) })
    else resolve(answer.kind === 'blank' ? { kind: 'blank' } : { kind: 'invalid', start: answer.start })
  }

  /** Nothing left to parse: the worker no longer holds the process open, and stops after idleMs unless a line comes. */
  private idle(worker: Worker): void {
    worker.unref()
    clearTimeout(this.idleTimer)
    this.idleTimer = setTimeout(() => {
      if (this.worker !== worker || this.waiting.size > 0) return
      this.worker = undefined
      void worker.terminate()
    }, this.idleMs)
    this.idleTimer.unref()
  }

  private lose(worker: Worker, reason: string): void {
    if (this.worker !== worker) return
    this.worker = undefined
    for (const resolve of this.waiting.values()) resolve({ kind: 'lost', reason })
    this.waiting.clear()
  }
}

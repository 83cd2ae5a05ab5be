import { createInterface } from 'node:readline'
import { Worker } from 'node:worker_threads'
import { CODE_CACHE_KEY, type RunEnd, type ToRunner } from './protocol.js'

/*
 * Code mode's runner (docs/code-mode.md): myc's own executable started
 * inside the sandbox with the runner switch (src/cli.ts). Its main thread
 * relays between myc (stdin and stdout, JSON lines) and a worker thread that
 * runs the code: the worker's heap has its own limit, so a heap that grows
 * too big ends the worker and the main thread can still say so. Everything
 * here trusts nothing the code does: myc decides every call again.
 */

/** What the main thread keeps of the code's console output. */
interface Output {
  chunks: Buffer[]
  bytes: number
  truncated: boolean
}

/** The main thread's and the worker's own use of memory, before the code's heap (measured: a worker's baseline). */
const BASELINE_MB = 96

/**
 * Writes one line to myc. It starts with a line break too: whatever the code
 * wrote to the same stdout without ending its line stays a line of its own,
 * which myc skips, instead of spoiling this one.
 */
function send(message: unknown, then?: () => void): void {
  process.stdout.write(`\n${JSON.stringify(message)}\n`, then)
}

/** Starts the runner: reads the start line, runs the code, answers `done` and exits. */
export function runRunner(): void {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
  let worker: Worker | undefined
  let output: Output = { chunks: [], bytes: 0, truncated: false }
  let limit = 0
  let finished = false
  const finish = (end: RunEnd) => {
    if (finished) return
    finished = true
    const text = Buffer.concat(output.chunks).toString('utf8')
    // A value longer than the limit is cut here (one byte over, so myc sees that it was), not carried whole.
    if (end.ok && end.value !== undefined && end.value.length > limit)
      end = {
        ok: true,
        value: Buffer.from(end.value)
          .subarray(0, limit + 1)
          .toString('utf8'),
      }
    const codeCache = (globalThis as Record<symbol, unknown>)[Symbol.for(CODE_CACHE_KEY)] ?? 'none'
    send({ type: 'done', output: text, truncated: output.truncated, codeCache, ...end }, () => process.exit(0))
  }
  const keep = (chunk: Buffer | string) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    const room = limit - output.bytes
    if (bytes.length > room) output.truncated = true
    if (room <= 0) return
    output.chunks.push(bytes.length > room ? bytes.subarray(0, room) : bytes)
    output.bytes += Math.min(room, bytes.length)
  }
  lines.on('line', (line) => {
    const message = JSON.parse(line) as ToRunner
    if (message.type !== 'start') return worker?.postMessage(message)
    limit = message.maxOutputBytes
    output = { chunks: [], bytes: 0, truncated: false }
    worker = startWorker(message, keep, finish)
  })
  // myc went away: nothing is left to answer to.
  lines.on('close', () => process.exit(0))
}

function startWorker(
  start: Extract<ToRunner, { type: 'start' }>,
  keep: (chunk: Buffer | string) => void,
  finish: (end: RunEnd) => void,
): Worker {
  const worker = new Worker(workerSource(), {
    eval: true,
    workerData: { code: start.code, tools: start.tools },
    resourceLimits: {
      maxOldGenerationSizeMb: Math.max(16, start.memoryMb - BASELINE_MB),
      maxYoungGenerationSizeMb: 16,
    },
    stdout: true,
    stderr: true,
  })
  worker.stdout.on('data', keep)
  worker.stderr.on('data', keep)
  worker.on('message', (message: { type: string; text?: string; end?: RunEnd }) => {
    if (message.type === 'call') send(message)
    else if (message.type === 'out') keep(String(message.text))
    else if (message.type === 'done' && message.end) finish(message.end)
  })
  worker.on('error', (error: Error & { code?: string }) => {
    if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') finish({ ok: false, limit: 'memory' })
    else finish({ ok: false, error: `${error.name}: ${error.message}` })
  })
  worker.on('exit', (code) =>
    finish({
      ok: false,
      error:
        code === 0
          ? 'The code never returned: it awaited something that can never settle.'
          : `The code ended its thread (process.exit(${code})) before returning.`,
    }),
  )
  return worker
}

/*
 * The worker thread's program, sent as text: the functions below are
 * self-contained (they use only their arguments, Node's own modules and
 * each other by name) and are joined into one script that calls workerMain.
 */

/** The worker's script. */
function workerSource(): string {
  return [describeError, toolsApi, captureConsole, compileCode, workerMain]
    .map((f) => f.toString())
    .concat('workerMain()')
    .join('\n')
}

/** An error as the result shows it: its name and message, and the stack lines of the code itself (`code.js`). */
function describeError(error: unknown): string {
  const util = require('node:util')
  if (!(error instanceof Error)) return `Uncaught ${util.inspect(error)}`
  const stack = typeof error.stack === 'string' ? error.stack : ''
  // A syntax error names its place on the stack's first line (code.js:LINE).
  const where = /^code\.js:(\d+)/.exec(stack)
  const frames = where
    ? [`    at code.js:${where[1]}`]
    : stack.split('\n').filter((l) => /^\s+at .*code\.js:\d+:\d+\)?$/.test(l))
  return [`${error.name}: ${error.message}`, ...frames].join('\n')
}

type Table = Array<[string, Array<[string, string]>]>
type Answer = { type: 'answer'; id: number; ok: boolean; value?: unknown; message?: string }

/**
 * `tools`, a plain object kept live: `setTools` changes it in place (a server
 * or tool that goes is deleted, one that comes is added, in the table's
 * order), so a reference the code holds stays the session's view.
 */
function toolsApi(post: (message: unknown) => void): {
  tools: Record<string, Record<string, unknown>>
  setTools: (table: Table) => void
  answer: (message: Answer) => void
} {
  type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void; site: { stack?: string } }
  const pending = new Map<number, Pending>()
  const tools: Record<string, Record<string, unknown>> = {}
  let nextId = 1
  const own = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key)
  const place = (o: object, key: string, value: unknown) =>
    Object.defineProperty(o, key, { value, enumerable: true, configurable: true, writable: false })
  const callable = (wire: string, label: string) => {
    const call = async function (args: unknown = {}) {
      const site: { stack?: string } = {}
      Error.captureStackTrace(site, call)
      if (typeof args !== 'object' || args === null || Array.isArray(args))
        throw new TypeError(`${label} takes one object: its arguments`)
      const id = nextId++
      const copy = JSON.parse(JSON.stringify(args))
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject, site })
        post({ type: 'call', id, name: wire, arguments: copy })
      })
    }
    return Object.defineProperty(call, 'wire', { value: wire })
  }
  const setTools = (table: Table) => {
    const servers = new Set(table.map(([s]) => s))
    for (const key of Object.keys(tools)) if (!servers.has(key)) delete tools[key]
    for (const [server, list] of table) {
      const ns = own(tools, server) ? tools[server]! : {}
      const names = new Map(list)
      for (const key of Object.keys(ns)) if (names.get(key) !== (ns[key] as { wire?: string }).wire) delete ns[key]
      for (const [tool, wire] of list) {
        const fn = own(ns, tool) ? ns[tool] : callable(wire, `tools.${server}.${tool}`)
        delete ns[tool]
        place(ns, tool, fn)
      }
      delete tools[server]
      place(tools, server, ns)
    }
  }
  const answer = (message: Answer) => {
    const call = pending.get(message.id)
    if (!call) return
    pending.delete(message.id)
    if (message.ok) return call.resolve(message.value)
    // The error points at the line of the code that made the call.
    const error = new Error(message.message)
    error.stack = [
      `Error: ${message.message}`,
      ...String(call.site.stack ?? '')
        .split('\n')
        .slice(1),
    ].join('\n')
    call.reject(error)
  }
  return { tools, setTools, answer }
}

/** The console, posted in order with everything else the worker says. */
function captureConsole(post: (message: unknown) => void): void {
  const util = require('node:util')
  const out = (...args: unknown[]) => post({ type: 'out', text: `${util.format(...args)}\n` })
  const writable = console as unknown as Record<string, unknown>
  for (const name of ['log', 'info', 'warn', 'error', 'debug', 'trace']) writable[name] = out
  writable.dir = (value: unknown) => out(util.inspect(value))
}

/**
 * The code as an async function of `tools` in a file of its own name
 * (`code.js`, lines counted from the code's first), its TypeScript types
 * stripped where Node.js can (22.13 and later).
 */
function compileCode(code: string): (tools: unknown) => Promise<unknown> {
  const vm = require('node:vm')
  let source = `(async function (tools) {\n${code}\n})`
  const strip = require('node:module').stripTypeScriptTypes
  if (typeof strip === 'function') {
    // Node's own type stripper warns that it is experimental: not the code's output.
    const warn = process.emitWarning
    process.emitWarning = () => {}
    try {
      source = strip(source, { mode: 'strip' })
    } finally {
      process.emitWarning = warn
    }
  }
  return new vm.Script(source, { filename: 'code.js', lineOffset: -1 }).runInThisContext()
}

/** Runs the code and posts `done` once: with its value as JSON, or its error. */
function workerMain(): void {
  const { parentPort, workerData } = require('node:worker_threads')
  const post = (message: unknown) => parentPort.postMessage(message)
  const done = (end: unknown) => post({ type: 'done', end })
  const api = toolsApi(post)
  parentPort.on('message', (message: { type: 'tools'; tools: Table } | Answer) =>
    message.type === 'tools' ? api.setTools(message.tools) : api.answer(message),
  )
  captureConsole(post)
  process.on('uncaughtException', (error: unknown) => done({ ok: false, error: describeError(error) }))
  process.on('unhandledRejection', (error: unknown) => done({ ok: false, error: describeError(error) }))
  api.setTools(workerData.tools)
  let run: (tools: unknown) => Promise<unknown>
  try {
    run = compileCode(workerData.code)
  } catch (error) {
    return done({ ok: false, error: describeError(error) })
  }
  run(api.tools).then(
    (value: unknown) => {
      let json: string | undefined
      try {
        json = JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v.toString() : v))
      } catch (error) {
        return done({ ok: false, error: `The returned value cannot be written as JSON: ${(error as Error).message}` })
      }
      done(json === undefined ? { ok: true } : { ok: true, value: json })
    },
    (error: unknown) => done({ ok: false, error: describeError(error) }),
  )
}

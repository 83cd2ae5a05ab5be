import { isUtf8 } from 'node:buffer'
import { spawn, type ChildProcess } from 'node:child_process'
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client'
import { MycError } from '../errors.js'
import { byteLineSplitter, type LineBlocks } from '../protocol/byte-lines.js'
import { lineSplitter } from '../protocol/json-lines.js'
import type { LineParser, ParsedLine } from '../protocol/line-parser.js'
import { LineWriter } from '../protocol/line-writer.js'
import { keepResponseBytes, keepResponseLine } from '../protocol/result-lines.js'
import { requestLine } from '../protocol/request-lines.js'
import { DEFAULT_STOP_BUDGET, signalTree, stopTree, type StopBudget } from './process-tree.js'

/** How to start a stdio child. `command` is run directly, never through a shell. */
export interface StdioChildOptions {
  command: string
  args: readonly string[]
  env: Record<string, string>
  cwd?: string
  /** `args` are one command line, escaped already (a `.cmd` through cmd.exe on Windows): passed as they are. */
  windowsVerbatimArguments?: boolean
  /** Each line the child writes to stderr. */
  onStderrLine?: (line: string) => void
  /** The child, started already (prespawn.ts): taken over instead of spawning one. */
  early?: EarlyChild
  /** Parses its large lines off the event loop (one worker for all children: the supervisor's); without it they are parsed here. */
  lines?: LineParser | undefined
}

/** A line this long (in bytes) or longer is parsed off the event loop (`lines`) and relayed as its bytes. */
export const LARGE_LINE_BYTES = 1024 * 1024

/**
 * A response line this long (in bytes) or longer, parsed here, is relayed
 * as its bytes too (valid UTF-8): writing them saves joining its text
 * around the new id and encoding it again, which a large answer pays in
 * fresh memory. Shorter ones are relayed as text.
 */
export const BYTES_KEPT_FROM = 16 * 1024

/**
 * A child process started before its connection existed (startEarly), and
 * what happened to it meanwhile: its output is kept (Node discards the
 * unread output of a child that exits), its events recorded.
 */
export interface EarlyChild {
  process: ChildProcess
  spawned: boolean
  /** The spawn failed (ENOENT, EACCES): what 'error' said. */
  error?: Error
  exit?: ExitInfo
  /** Its stdio closed ('close'): it exited, and all it wrote is in `stdout` and `stderr`. */
  closed: boolean
  stdout: Buffer[]
  stderr: string[]
  /** Stops keeping output (the transport that takes the child over reads it from here on). */
  release(): void
}

/** Starts a child now, for a transport to take over later (`early`); nothing it writes or does is lost meanwhile. */
export function startEarly(
  options: Pick<StdioChildOptions, 'command' | 'args' | 'env' | 'cwd' | 'windowsVerbatimArguments'>,
): EarlyChild {
  const child = spawnStdioChild(options)
  const early: EarlyChild = {
    process: child,
    spawned: false,
    closed: false,
    stdout: [],
    stderr: [],
    release: () => {
      child.stdout!.off('data', keepOut)
      child.stderr!.off('data', keepErr)
    },
  }
  const keepOut = (chunk: Buffer) => void early.stdout.push(chunk)
  const keepErr = (chunk: string) => void early.stderr.push(chunk)
  child.stdout!.on('data', keepOut)
  child.stderr!.setEncoding('utf8').on('data', keepErr)
  child.stdin!.on('error', () => {})
  child.once('spawn', () => (early.spawned = true))
  child.once('error', (error) => (early.error ??= error))
  child.once('exit', (code, signal) => (early.exit = { code, signal }))
  child.once('close', () => (early.closed = true))
  return early
}

/**
 * Starts a stdio child: its own process group (so stopping it ends the
 * whole tree: npx, sh wrappers and the real server), never a shell.
 */
function spawnStdioChild(
  options: Pick<StdioChildOptions, 'command' | 'args' | 'env' | 'cwd' | 'windowsVerbatimArguments'>,
): ChildProcess {
  return spawn(options.command, [...options.args], {
    env: options.env,
    cwd: options.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
    shell: false,
    windowsHide: true,
    windowsVerbatimArguments: options.windowsVerbatimArguments === true,
    detached: process.platform !== 'win32',
  })
}

/**
 * Keeps a response's line for the splice: its bytes when they are given
 * and valid UTF-8 (else `line`, decoded with replacement characters, is
 * the value the checks read, and its text is what goes out).
 */
function keepResponse(line: string, bytes: Buffer | undefined, message: object): void {
  if (bytes !== undefined && isUtf8(bytes)) keepResponseBytes(bytes, bytes.lastIndexOf('"id":'), message)
  else keepResponseLine(line, message)
}

/** A message waiting to be handed on: `ready` once its line is parsed (`message` undefined for one that was no message). */
interface BacklogEntry {
  ready: boolean
  message?: JSONRPCMessage | undefined
}

/** How the child process ended. */
export interface ExitInfo {
  code: number | null
  signal: NodeJS.Signals | null
}

/**
 * An MCP transport over a child process's stdin/stdout. Unlike the SDK's
 * StdioClientTransport it starts the child as its own process group, so
 * closing it ends the whole tree (npx, sh wrappers and the real server), and
 * it parses messages with plain JSON.parse: the SDK's Protocol validates what
 * it handles, and relayed results must pass through untouched.
 *
 * It reads bytes. A line of LARGE_LINE_BYTES or more is never decoded on
 * the event loop: its bytes are collected as they come and parsed by a
 * worker (`lines`), and a response among them goes to a stdio client as
 * those bytes, the id spliced (result-lines.ts); so does a response of
 * BYTES_KEPT_FROM or more parsed here. Messages are handed on in
 * the order the child wrote them: those after a large line wait for it.
 */
export class ChildStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  private child?: ChildProcess
  private closed = false
  /** One write per event-loop turn to the child's stdin. */
  private writer: LineWriter | undefined
  /** Messages read after a large line still being parsed, in the child's order (empty when none is). */
  private readonly backlog: BacklogEntry[] = []
  /** The child's output ended while the backlog waited: closing follows it. */
  private endedWithBacklog = false
  exitInfo?: ExitInfo
  /** How long close() waits at each step; the owner may shorten it before closing. */
  stopBudget: StopBudget = DEFAULT_STOP_BUDGET

  constructor(private readonly options: StdioChildOptions) {}

  get pid(): number | undefined {
    return this.child?.pid
  }

  start(): Promise<void> {
    if (this.child) throw new Error('ChildStdioTransport already started')
    const early = this.options.early
    return new Promise((resolve, reject) => {
      // Inside the promise: spawn throws at once for some arguments (a NUL byte), and that is a failed start like any.
      const child = early ? early.process : spawnStdioChild(this.options)
      this.child = child
      let started = false
      const spawned = () => {
        started = true
        resolve()
      }
      const failed = (error: Error) => {
        if (!started) {
          reject(error)
          this.finish()
          return
        }
        this.onerror?.(error)
      }
      const exited = (code: number | null, signal: NodeJS.Signals | null) => {
        this.exitInfo = { code, signal }
        // Reap anything the child left in its group (a server behind `npx`),
        // which would otherwise hold the pipes open.
        signalTree(child, 'SIGKILL')
      }
      child.stdin!.on('error', (error) => this.onerror?.(error))
      const onStdout = byteLineSplitter(
        (line, bytes) => this.onLine(line, bytes),
        (line) => this.onLargeLine(line),
        LARGE_LINE_BYTES,
        BYTES_KEPT_FROM,
      )
      // A child that never ends its stderr lines must not grow memory forever.
      const onStderr = lineSplitter((line) => this.options.onStderrLine?.(line), { maxLength: 64 * 1024 })
      child.stderr!.setEncoding('utf8')
      if (early) {
        // What an early child wrote so far comes first, then the rest as it arrives (all in this turn: nothing falls between).
        early.release()
        for (const chunk of early.stderr.splice(0)) onStderr(chunk)
        for (const chunk of early.stdout.splice(0)) onStdout(chunk)
      }
      child.stdout!.on('data', onStdout)
      child.stderr!.on('data', onStderr)
      // An early child may have spawned, failed or exited already: what it did meanwhile is replayed.
      if (early?.error) return failed(early.error)
      child.once('error', failed)
      if (early?.exit) exited(early.exit.code, early.exit.signal)
      else child.once('exit', exited)
      // 'close' comes after the last stdout data, unlike 'exit' (an early child's output waited, unread, in its pipe).
      if (early?.closed) setImmediate(() => this.outputEnded())
      else child.once('close', () => this.outputEnded())
      if (early?.spawned) spawned()
      else child.once('spawn', spawned)
    })
  }

  private onLine(line: string, bytes?: Buffer): void {
    const message = this.parse(line, bytes)
    if (!message) return
    if (this.backlog.length === 0) this.onmessage?.(message)
    else this.backlog.push({ ready: true, message })
  }

  /**
   * A line's message, its text (or `bytes`, the UTF-8 it was decoded from)
   * kept when it is a response to one of the relay's requests; undefined
   * (and the error told) when it is none.
   */
  private parse(line: string, bytes?: Buffer): JSONRPCMessage | undefined {
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      message = undefined
    }
    if (typeof message !== 'object' || message === null) {
      this.onerror?.(new Error(`not a JSON-RPC message on stdout: ${line.slice(0, 200)}`))
      return undefined
    }
    // A response to one of the relay's requests (string ids; the SDK numbers its own): its line may go out again as it is.
    if (typeof (message as { id?: unknown }).id === 'string' && (message as { result?: unknown }).result !== undefined)
      keepResponse(line, bytes, message)
    return message as JSONRPCMessage
  }

  /** A large line goes to the worker; what the child writes after it waits in the backlog until it is parsed. */
  private onLargeLine(line: LineBlocks): void {
    const entry: BacklogEntry = { ready: false }
    this.backlog.push(entry)
    const parsing =
      this.options.lines?.parse(line) ?? Promise.resolve<ParsedLine>({ kind: 'unread', bytes: line.concat() })
    void parsing.then((parsed) => {
      entry.message = this.largeMessage(parsed)
      entry.ready = true
      this.deliver()
    })
  }

  /** Hands on the backlog's messages, in order, up to the first large line still being parsed. */
  private deliver(): void {
    while (this.backlog.length > 0 && this.backlog[0]!.ready) {
      const { message } = this.backlog.shift()!
      if (message && !this.closed) this.onmessage?.(message)
    }
    if (this.backlog.length === 0 && this.endedWithBacklog) this.finish()
  }

  /** The message a large line parsed to (its bytes kept for the splice), or undefined (an error told, or a blank line). */
  private largeMessage(parsed: ParsedLine): JSONRPCMessage | undefined {
    switch (parsed.kind) {
      case 'blank':
        return undefined
      case 'unread': {
        const text = parsed.bytes.toString('utf8', 0, parsed.bytes.length - (parsed.bytes.at(-1) === 0x0d ? 1 : 0))
        return text.trim() === '' ? undefined : this.parse(text)
      }
      case 'invalid':
        this.onerror?.(new Error(`not a JSON-RPC message on stdout: ${parsed.start}`))
        return undefined
      case 'lost':
        // Which call it answered is gone with it: closing the connection ends every call in flight at once.
        this.onerror?.(
          new Error(`a large line on stdout was lost (${parsed.reason}): the child's connection is closed`),
        )
        void this.close()
        return undefined
    }
    const { message, bytes } = parsed
    if (bytes && typeof (message as { id?: unknown }).id === 'string')
      keepResponseBytes(bytes, parsed.lastIdAt, message)
    return message as JSONRPCMessage
  }

  /** The child's stdio closed: after the last of its lines is handed on. */
  private outputEnded(): void {
    if (this.backlog.length === 0) this.finish()
    else this.endedWithBacklog = true
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin
    if (!stdin || this.closed || !stdin.writable)
      return Promise.reject(new MycError('child_gone', 'child process is not running'))
    let line: string | Buffer[]
    try {
      // A large call's arguments as the client wrote them, spliced (protocol/request-lines.ts).
      line = requestLine(message) ?? JSON.stringify(message)
    } catch (error) {
      return Promise.reject(error)
    }
    this.writer ??= new LineWriter(stdin, (error) => this.onerror?.(error))
    return this.writer.write(line)
  }

  async close(): Promise<void> {
    const child = this.child
    this.writer?.flush()
    if (!child || this.closed) {
      this.finish()
      return
    }
    await stopTree(child, this.stopBudget)
    this.finish()
  }

  private finish(): void {
    if (this.closed) return
    this.closed = true
    this.onclose?.()
  }
}

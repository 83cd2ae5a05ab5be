import { EventEmitter } from 'node:events'
import { PassThrough, Writable, type Readable } from 'node:stream'
import { Client, ReadBuffer, serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client'
import { runCli } from '../../src/cli.js'
import type { CommandIO } from '../../src/command-io.js'
import { freePort } from './http.js'
import { waitFor } from './wait-for.js'

/**
 * The in-process tier: `myc <args>` run in the test's own process through
 * `runCli`, with the test's own stdin, stdout, stderr, environment, folder
 * and signals (src/command-io.ts), so no bundle is spawned and nothing of
 * this process is touched. The children myc starts are still real
 * processes. What only the program shows (process exit codes, real signals,
 * stdin of a real pipe, terminals, the bundle's contents) stays in
 * tests/e2e/ and spawns build/myc.cjs (tests/helpers/e2e.ts).
 */

/** A stream that keeps what is written to it as text, told of each write. */
class Captured extends Writable {
  text = ''
  private readonly watchers = new Set<(text: string) => void>()

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text += chunk.toString()
    for (const watcher of this.watchers) watcher(this.text)
    done()
  }

  /** Calls `listener` with everything written so far, after each write. */
  onText(watcher: (text: string) => void): void {
    this.watchers.add(watcher)
  }
}

export interface HereOptions {
  /** What stdin holds (it ends after it), or a stream of the test's (it ends when the test ends it). Empty by default. */
  input?: string | Readable
  cwd?: string
  /** Over this process's environment; a variable set to undefined is removed. */
  env?: Record<string, string | undefined>
  /** stdin is a terminal (what decides that `myc` alone chats rather than serves). */
  tty?: boolean
}

/** The io of one in-process run, and its captured output. */
export interface TestIO {
  io: CommandIO
  stdout: Captured
  stderr: Captured
  /** Where the test sends SIGINT or SIGTERM to the command (`signals.emit('SIGINT', 'SIGINT')`). */
  signals: EventEmitter
}

/** An environment made of this process's and `extra`, without the variables `extra` sets to undefined. */
export function testEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = { ...process.env, ...extra }
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete env[key]
  return env as Record<string, string>
}

export function testIO(options: HereOptions = {}): TestIO {
  const stdin = typeof options.input === 'string' || options.input === undefined ? new PassThrough() : options.input
  if (stdin instanceof PassThrough && typeof options.input !== 'object') stdin.end(options.input ?? '')
  if (options.tty) Object.assign(stdin, { isTTY: true })
  const stdout = new Captured()
  const stderr = new Captured()
  if (process.env.MYC_TEST_VERBOSE) stderr.onText((text) => process.stderr.write(text.slice(-200)))
  const signals = new EventEmitter()
  const io: CommandIO = {
    stdin,
    // What myc writes to: streams that are not terminals, as a pipe is.
    stdout: stdout as unknown as NodeJS.WriteStream,
    stderr: stderr as unknown as NodeJS.WriteStream,
    env: testEnv(options.env),
    cwd: options.cwd ?? process.cwd(),
    signals,
  }
  return { io, stdout, stderr, signals }
}

/** What `myc <args>` did, run in this process: its exit code, stdout and stderr. */
export interface HereRun {
  code: number
  stdout: string
  stderr: string
}

/** Runs `myc <args>` in this process to the end (as `runMyc` runs the bundle); stdin holds `input`. */
export async function runHere(args: string[], input = '', options: Omit<HereOptions, 'input'> = {}): Promise<HereRun> {
  const { io, stdout, stderr } = testIO({ ...options, input })
  const code = await runCli(args, io)
  return { code, stdout: stdout.text, stderr: stderr.text }
}

/** `myc <args> --json` in this process, its stdout parsed. */
export async function jsonHere(
  args: string[],
  options: Omit<HereOptions, 'input'> = {},
): Promise<{ code: number; doc: any; stderr: string }> {
  const r = await runHere([...args, '--json'], '', options)
  return { code: r.code, doc: JSON.parse(r.stdout), stderr: r.stderr }
}

/**
 * A client's side of a stdio connection over two streams: newline-delimited
 * JSON-RPC, as the SDK's StdioClientTransport speaks it to a process.
 * Closing it ends myc's stdin (EOF) and waits for `ended`.
 */
class StreamClientTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private readonly buffer = new ReadBuffer()
  private closed = false

  constructor(
    private readonly input: Readable,
    private readonly output: PassThrough,
    private readonly ended: Promise<unknown>,
  ) {}

  async start(): Promise<void> {
    this.input.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk)
      for (;;) {
        let message: JSONRPCMessage | null
        try {
          message = this.buffer.readMessage()
        } catch (error) {
          this.onerror?.(error as Error)
          continue
        }
        if (message === null) break
        this.onmessage?.(message)
      }
    })
    this.input.on('end', () => void this.close())
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => this.output.write(serializeMessage(message), () => resolve()))
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.output.end()
    await this.ended
    this.onclose?.()
  }
}

/** `myc serve` (or `myc <args>`) in this process, on in-memory stdio: an SDK client connected to it. */
export interface ServedHere {
  client: Client
  transport: StreamClientTransport
  stderr(): string
  /** Resolves with the exit code once myc has stopped (after the client closes, or a signal). */
  exited: Promise<number>
  signals: EventEmitter
}

/** Connects an SDK client to `myc <args>` run in this process over in-memory stdio (as `connectToMyc` does to the bundle). */
export async function connectHere(
  args: string[],
  options: {
    capabilities?: Record<string, unknown>
    env?: Record<string, string | undefined>
    cwd?: string
    setup?: (c: Client) => void
    /** The client to connect (a 2026-07-28 one, say) instead of a new 2025 one with `capabilities`. */
    client?: Client
  } = {},
): Promise<ServedHere> {
  const toMyc = new PassThrough()
  const fromMyc = new PassThrough()
  const { io, stderr, signals } = testIO({ ...options, input: toMyc })
  const exited = runCli(args, { ...io, stdout: fromMyc as unknown as NodeJS.WriteStream })
  // A myc that stops by itself (a bad flag, a bad config) ends its stdout: the client then sees the connection close.
  void exited.finally(() => fromMyc.end())
  const transport = new StreamClientTransport(fromMyc, toMyc, exited)
  const client =
    options.client ?? new Client({ name: 'in-process', version: '1.0.0' }, { capabilities: options.capabilities ?? {} })
  options.setup?.(client)
  await client.connect(transport)
  return { client, transport, stderr: () => stderr.text, exited, signals }
}

/** `myc serve --http` in this process, listening on a free loopback port (as `startHttpMyc` runs the bundle). */
export interface HttpHere {
  /** The MCP endpoint (`http://127.0.0.1:<port>/mcp`). */
  url: string
  /** `http://127.0.0.1:<port>`. */
  base: string
  stderr(): string
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number>
}

/** Starts `myc serve --http` over `config` in this process and waits until it listens. */
export async function startHttpHere(
  config: string,
  options: { env?: Record<string, string | undefined>; path?: string; args?: string[] } = {},
): Promise<HttpHere> {
  const port = await freePort()
  const { io, stderr, signals } = testIO({ ...(options.env ? { env: options.env } : {}) })
  let code: number | undefined
  const exited = runCli(['serve', '--http', `127.0.0.1:${port}`, '--config', config, ...(options.args ?? [])], io).then(
    (c) => (code = c),
  )
  await waitFor(
    () => stderr.text.includes('serving MCP over Streamable HTTP') || code !== undefined,
    20_000,
    'myc serve --http to listen',
  )
  if (code !== undefined) throw new Error(`myc serve --http exited with ${code}:\n${stderr.text}`)
  const base = `http://127.0.0.1:${port}`
  return {
    url: `${base}${options.path ?? '/mcp'}`,
    base,
    stderr: () => stderr.text,
    stop: async (signal = 'SIGTERM') => {
      if (code === undefined) signals.emit(signal, signal)
      return exited
    },
  }
}

import { spawn, type ChildProcess } from 'node:child_process'
import type { Writable } from 'node:stream'
import type { Mask } from '../sandbox/masks.js'
import type { OwnFiles } from '../sandbox/own-files.js'
import { runnerArgs } from '../sandbox/runner-args.js'
import { Cancellation } from '../protocol/cancellation.js'
import { trustedCacheDir } from './code-cache.js'
import { runResult, type InnerAnswer, type CodeLimits, type RunOutcome } from './code-result.js'
import { readRunnerLine, RUNNER_SWITCH, type FromRunner, type ToolTable, type ToRunner } from './protocol.js'

/** Everything a run's sandbox is made of, found once when code mode is set up (code-mode.ts). */
export interface RunnerSetup {
  /** Absolute paths of prlimit and bwrap (the sandbox starts with an empty environment: nothing is looked up on a PATH). */
  prlimit: string
  bwrap: string
  /** The runner: myc's own executable, and the bundle it runs when it is Node.js itself. */
  argv: readonly string[]
  own: OwnFiles
  mounts: readonly string[]
  masks: readonly Mask[]
  emptyFile: string
  /** The seccomp filter (sandbox/seccomp.ts). */
  filter: Buffer
  /** Whether the runner strips TypeScript types (Node.js 22.13 and later). */
  typescript: boolean
  /** The launcher's trusted code cache folder, bound read-only (code-mode.ts). */
  codeCache?: string
}

/** What a run asks of its caller (an MCP session, or an agent's run) while it runs. */
export interface RunHooks {
  /** The tools the code may call now. */
  tools(): ToolTable
  /** Calls `listener` when what the caller sees may have changed; returns the function that stops it. */
  onChange(listener: () => void): () => void
  /** One inner call, decided again on the caller's call path. */
  call(name: string, args: Record<string, unknown>): Promise<InnerAnswer>
}

/** What a run needs of a runner: its limits, whether it strips types, and a run (`myc tokens` lists run_code with one that runs nothing). */
export type CodeRuns = Pick<CodeRunner, 'limits' | 'run'> & { setup: Pick<RunnerSetup, 'typescript'> }

/** What one run asks of whoever started it: as {@link RunHooks}, each inner call with a cancellation of its own. */
export interface RunCaller extends Omit<RunHooks, 'call'> {
  call(name: string, args: Record<string, unknown>, cancellation: Cancellation): Promise<InnerAnswer>
}

/**
 * One run_code run: runs `code` and answers its inner calls through
 * `caller`, each with a cancellation that the run's cancels, and the run's
 * end too (nothing of a run outlives it). The result is run_code's answer.
 */
export async function runWith(
  runner: CodeRuns,
  code: string,
  caller: RunCaller,
  cancelled: Cancellation,
): Promise<ReturnType<typeof runResult>> {
  const inFlight = new Set<Cancellation>()
  const cancelAll = (why: string) => {
    for (const c of inFlight) c.cancel(why)
  }
  cancelled.onCancel(() => cancelAll('the run was cancelled'))
  const hooks: RunHooks = {
    tools: () => caller.tools(),
    onChange: (listener) => caller.onChange(listener),
    async call(name, args) {
      const cancellation = new Cancellation()
      inFlight.add(cancellation)
      try {
        return await caller.call(name, args, cancellation)
      } finally {
        inFlight.delete(cancellation)
      }
    },
  }
  const outcome = await runner.run(code, hooks, cancelled)
  cancelAll('the run ended')
  return runResult(outcome, runner.limits)
}

/** The file descriptor of the runner's process that bubblewrap reads the seccomp filter from. */
const FILTER_FD = 3
/** Inner calls a run may have in flight at once; more wait their turn. */
const MAX_IN_FLIGHT = 16
/** The longest line myc reads from a runner, whatever the output limit (a call's arguments may be long). */
const MIN_LINE_BYTES = 16 * 1024 * 1024
/** What myc keeps of a runner's stderr (bubblewrap's own errors), for the message of a run that failed. */
const STDERR_BYTES = 4096
/** How long a runner that sent its answer has to end before it is killed. */
const EXIT_GRACE_MS = 2_000

/**
 * Runs code mode's code (docs/code-mode.md): myc's own executable as the
 * runner, under `prlimit --data` (heap and off-heap memory) inside
 * bubblewrap (runner-args.ts), spoken to over its stdin and stdout. One
 * instance per process, shared by every caller; each run is its own
 * sandbox, discarded with its scratch folder when the run ends.
 */
export class CodeRunner {
  constructor(
    readonly setup: RunnerSetup,
    readonly limits: CodeLimits,
  ) {}

  /** The command line of one run. */
  private command(): string[] {
    const { setup, limits } = this
    const args = runnerArgs({
      own: setup.own,
      // Judged again at each run: a cache folder removed or replaced since the setup is not bound.
      codeCache: setup.codeCache === undefined ? undefined : trustedCacheDir(setup.codeCache),
      mounts: setup.mounts,
      masks: setup.masks,
      emptyFile: setup.emptyFile,
      scratchBytes: limits.memoryMb * 1024 * 1024,
      seccompFd: FILTER_FD,
      env: { [RUNNER_SWITCH]: '1', HOME: '/tmp', TMPDIR: '/tmp', LANG: 'C.UTF-8' },
      argv: setup.argv,
    })
    return [setup.prlimit, `--data=${limits.memoryMb * 1024 * 1024}`, '--core=0', '--', setup.bwrap, ...args]
  }

  /**
   * Runs `code`; resolves once the runner and everything in its sandbox
   * have ended, or with undefined when `cancelled` fired first (the runner
   * is killed either way).
   */
  run(code: string, hooks: RunHooks, cancelled: { onCancel(listener: () => void): void }): Promise<RunOutcome> {
    const [file, ...args] = this.command()
    // An empty environment: the sandbox's first process keeps what bwrap started with.
    const child = spawn(file!, args, { env: {}, stdio: ['pipe', 'pipe', 'pipe', 'pipe'], detached: true })
    const filterPipe = child.stdio[FILTER_FD] as Writable
    filterPipe.on('error', () => {}) // bwrap gone before reading it: the close below says so.
    filterPipe.end(this.setup.filter)
    return new Promise((resolve) => new Run(child, hooks, this.limits, resolve).start(code, cancelled))
  }
}

/** One run: its process, its lines both ways, its inner calls and its limits. */
class Run {
  private ended: RunOutcome | undefined
  private stderr = ''
  private lastTools = ''
  private inFlight = 0
  private readonly queue: Array<Extract<FromRunner, { type: 'call' }>> = []
  private readonly stops: Array<() => void> = []

  constructor(
    private readonly child: ChildProcess,
    private readonly hooks: RunHooks,
    private readonly limits: CodeLimits,
    private readonly resolve: (outcome: RunOutcome) => void,
  ) {}

  start(code: string, cancelled: { onCancel(listener: () => void): void }): void {
    const { child, limits } = this
    child.stdin!.on('error', () => {}) // The runner ended: what was still to be said to it no longer matters.
    this.readLines(child.stdout!, Math.max(MIN_LINE_BYTES, limits.maxOutputBytes * 8))
    child.stderr!.on('data', (chunk: Buffer) => {
      if (this.stderr.length < STDERR_BYTES) this.stderr += chunk.toString('utf8').slice(0, STDERR_BYTES)
    })
    const timer = setTimeout(() => this.stop({ kind: 'limit', limit: 'time' }), limits.timeoutMs)
    this.stops.push(() => clearTimeout(timer))
    this.stops.push(this.hooks.onChange(() => this.pushTools()))
    cancelled.onCancel(() => this.stop({ kind: 'failed', message: 'cancelled' }))
    child.once('error', (error) => this.stop({ kind: 'failed', message: `could not start ${error.message}` }))
    child.once('close', (code, signal) => this.closed(code, signal))
    const tools = this.hooks.tools()
    this.lastTools = JSON.stringify(tools)
    this.send({ type: 'start', code, tools, memoryMb: limits.memoryMb, maxOutputBytes: limits.maxOutputBytes })
  }

  private send(message: ToRunner): void {
    if (this.ended === undefined && this.child.stdin?.writable) this.child.stdin.write(`${JSON.stringify(message)}\n`)
  }

  /** Splits the runner's stdout into lines, none longer than `max` bytes (a longer one ends the run). */
  private readLines(stream: NodeJS.ReadableStream, max: number): void {
    let pending: Buffer[] = []
    let size = 0
    stream.on('data', (chunk: Buffer) => {
      let start = 0
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
        pending.push(chunk.subarray(start, i))
        const line = Buffer.concat(pending).toString('utf8')
        pending = []
        size = 0
        start = i + 1
        this.line(line)
      }
      size += chunk.length - start
      if (size > max) return this.stop({ kind: 'limit', limit: 'output' })
      if (start < chunk.length) pending.push(chunk.subarray(start))
    })
  }

  private line(text: string): void {
    const message = readRunnerLine(text)
    if (!message || this.ended) return
    if (message.type === 'done') {
      const { type: _type, ...end } = message
      return this.stop({ kind: 'done', ...end }, false)
    }
    this.queue.push(message)
    this.next()
  }

  /** Starts queued calls while fewer than MAX_IN_FLIGHT run. */
  private next(): void {
    while (this.inFlight < MAX_IN_FLIGHT && this.queue.length > 0 && this.ended === undefined) {
      const call = this.queue.shift()!
      this.inFlight++
      void this.hooks
        .call(call.name, call.arguments)
        .catch((error: unknown) => ({ ok: false as const, message: `myc could not make the call: ${String(error)}` }))
        .then((answer) => {
          this.inFlight--
          // What the call changed (an activated skill) reaches the code before its answer.
          this.pushTools()
          this.send(
            answer.ok
              ? { type: 'answer', id: call.id, ok: true, value: answer.value }
              : { type: 'answer', id: call.id, ok: false, message: answer.message },
          )
          this.next()
        })
    }
  }

  /** Sends the caller's tools when they differ from what the runner last got. */
  private pushTools(): void {
    if (this.ended !== undefined) return
    const tools = this.hooks.tools()
    const text = JSON.stringify(tools)
    if (text === this.lastTools) return
    this.lastTools = text
    this.send({ type: 'tools', tools })
  }

  /** Ends the run with `outcome`: the runner's whole sandbox is killed unless it is ending by itself (`kill` false). */
  private stop(outcome: RunOutcome, kill = true): void {
    if (this.ended !== undefined) return
    this.ended = outcome
    for (const stop of this.stops.splice(0)) stop()
    // A runner that answered ends by itself; one that does not within a moment is ended all the same.
    if (!kill) return void setTimeout(() => this.kill(), EXIT_GRACE_MS).unref()
    this.kill()
  }

  /** Kills the runner's whole sandbox (a no-op once it has ended). */
  private kill(): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    const pid = this.child.pid
    try {
      // The process group: prlimit became bwrap, and bwrap's sandbox dies with it (--die-with-parent).
      if (pid !== undefined) process.kill(-pid, 'SIGKILL')
    } catch {
      this.child.kill('SIGKILL')
    }
  }

  /** The runner's process ended: the run's outcome, once nothing of it is left. */
  private closed(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.ended === undefined) {
      // V8 aborts when it cannot get memory it must have (the process's data limit): SIGABRT, passed on by bwrap as 128 + 6.
      const aborted = signal === 'SIGABRT' || code === 134
      const why = this.stderr.trim().split('\n')[0]
      this.stop(
        aborted
          ? { kind: 'limit', limit: 'memory' }
          : {
              kind: 'failed',
              message: `the runner ended without an answer (exit code ${code ?? signal})${why ? `: ${why}` : ''}`,
            },
        false,
      )
    }
    this.resolve(this.ended!)
  }
}

import { spawn } from 'node:child_process'

export interface LimitedRun {
  argv: readonly string[]
  env?: Record<string, string>
  cwd?: string
  timeoutMs: number
  outputLimitBytes: number
  /** Called on timeout before the process group is killed (e.g. `docker kill NAME`). */
  onTimeout?: () => void
}

/** How a run ended. `truncated`: stdout or stderr was cut at outputLimitBytes. */
export interface LimitedOutcome {
  exitCode: number | null
  signal: string | null
  stdout: string
  stderr: string
  truncated: boolean
  timedOut: boolean
  durationMs: number
}

/** The marker appended where output was cut. */
const TRUNCATION_MARKER = '\n[… output truncated by myc …]\n'

/**
 * Runs an argument vector (no shell) as its own process group, collects
 * stdout and stderr up to a cap each, and on timeout kills the whole group.
 * Rejects only when the program cannot be started.
 */
export function spawnLimited(run: LimitedRun): Promise<LimitedOutcome> {
  const started = Date.now()
  return new Promise((resolve, reject) => {
    const child = spawn(run.argv[0]!, run.argv.slice(1), {
      env: run.env,
      cwd: run.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
      windowsHide: true,
    })
    const out = { stdout: [] as Buffer[], stderr: [] as Buffer[], sizes: { stdout: 0, stderr: 0 }, truncated: false }
    const collect = (which: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const room = run.outputLimitBytes - out.sizes[which]
      if (room <= 0) {
        out.truncated = true
        return
      }
      if (chunk.length > room) out.truncated = true
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk
      out[which].push(part)
      out.sizes[which] += part.length
    }
    child.stdout.on('data', collect('stdout'))
    child.stderr.on('data', collect('stderr'))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      run.onTimeout?.()
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
      } catch {
        child.kill('SIGKILL')
      }
    }, run.timeoutMs)
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      const text = (which: 'stdout' | 'stderr') =>
        Buffer.concat(out[which]).toString('utf8') + (out.sizes[which] >= run.outputLimitBytes ? TRUNCATION_MARKER : '')
      resolve({
        exitCode: code,
        signal,
        stdout: text('stdout'),
        stderr: text('stderr'),
        truncated: out.truncated,
        timedOut,
        durationMs: Date.now() - started,
      })
    })
  })
}

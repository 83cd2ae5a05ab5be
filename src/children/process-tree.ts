import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'

/** Named budgets for stopping a child: each step waits this long before the next. */
export interface StopBudget {
  /** After closing stdin, how long the child gets to exit by itself. */
  graceMs: number
  /** After SIGTERM to the whole process group, how long before SIGKILL. */
  termMs: number
}

/**
 * An MCP client gives myc about 2 s after closing its stdin before it sends
 * SIGTERM (the SDK's StdioClientTransport does), so myc's own children must be
 * down well within that: myc killed first would orphan them.
 */
export const DEFAULT_STOP_BUDGET: StopBudget = { graceMs: 500, termMs: 1_000 }
/** After SIGINT/SIGTERM to myc: no waiting for a polite exit. */
export const URGENT_STOP_BUDGET: StopBudget = { graceMs: 100, termMs: 500 }

/** Resolves true when the process has exited within `ms`, false otherwise. */
function exitsWithin(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit)
      resolve(false)
    }, ms)
    timer.unref()
    const onExit = () => {
      clearTimeout(timer)
      resolve(true)
    }
    child.once('exit', onExit)
  })
}

/**
 * Sends a signal to the child's whole process tree. On POSIX the child was
 * spawned as a process-group leader (`detached: true`), so `-pid` reaches the
 * `npx`/`sh` wrapper and the server it started alike; killing the wrapper
 * alone leaves the server behind.
 */
export function signalTree(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid
  if (pid === undefined) return
  if (process.platform === 'win32') {
    // taskkill /T ends the tree; /F forces it (Windows has no SIGTERM).
    const args = ['/pid', String(pid), '/T']
    if (signal === 'SIGKILL') args.push('/F')
    spawn('taskkill', args, { stdio: 'ignore', windowsHide: true }).on('error', () => {})
    return
  }
  try {
    process.kill(-pid, signal)
  } catch {
    // The group is gone already; the leader may still need the signal.
    try {
      child.kill(signal)
    } catch {
      // The leader is gone too (ESRCH): nothing left to signal.
    }
  }
}

/**
 * Stops a child and everything it started: end stdin, wait; SIGTERM the
 * group, wait; SIGKILL the group. Always ends within the two budgets plus a
 * moment, and never leaves the group running.
 */
export async function stopTree(child: ChildProcess, budget: StopBudget = DEFAULT_STOP_BUDGET): Promise<void> {
  child.stdin?.end()
  if (await exitsWithin(child, budget.graceMs)) {
    // The leader left; make sure no descendant in its group stays behind.
    signalTree(child, 'SIGKILL')
    return
  }
  signalTree(child, 'SIGTERM')
  if (await exitsWithin(child, budget.termMs)) {
    signalTree(child, 'SIGKILL')
    return
  }
  signalTree(child, 'SIGKILL')
  await exitsWithin(child, 1_000)
}

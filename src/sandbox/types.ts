import type { LimitedOutcome } from './spawn-limited.js'

/** Trust levels (DESIGN.md section 7). */
export type TrustLevel = 'restricted' | 'sandboxed' | 'unrestricted'
/** Executors; `auto` picks the first that really works here. */
export type ExecutorName = 'bubblewrap' | 'sandbox-exec' | 'docker' | 'none'

/** What to run and under which limits. Paths are absolute. */
export interface ExecRequest {
  /** An argument vector (run directly), or a shell command line (run by `sh -c`, guarded first). */
  command: readonly string[] | string
  trust: TrustLevel
  executor: ExecutorName | 'auto'
  workspace: string
  timeoutMs: number
  outputLimitBytes: number
  network: { allow: readonly string[] }
  /** Files inside the workspace that stay read-only (the myc config, for one). */
  protectedPaths?: readonly string[]
  /** Extra environment for the command (the rest is cleared). */
  env?: Record<string, string>
  /** Largest file the command may write, in bytes (where the executor supports it). */
  maxFileBytes?: number
  /** Most processes (where the executor supports it: not for root). */
  maxProcesses?: number
  docker?: { image: string }
}

/** How a run ended, and which executor ran it. */
export interface ExecOutcome extends LimitedOutcome {
  executor: ExecutorName
}

export type ExecResult = { ok: true; outcome: ExecOutcome } | { ok: false; error: { code: 'guard_blocked' | 'sandbox_unavailable' | 'invalid_request' | 'spawn_failed'; message: string; rule?: string } }

/** The environment every sandboxed command gets; everything else is cleared. */
export const MINIMAL_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

import type { ProtectedPath } from './protected-paths.js'
import type { LimitedOutcome } from './spawn-limited.js'

/** Trust levels (docs/sandbox.md). */
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
  /** The person's home folder (default: HOME): empty inside unless the workspace holds it, its start-up files guarded. */
  home?: string
  timeoutMs: number
  outputLimitBytes: number
  network: { allow: readonly string[] }
  /** myc's own state (config, skills, roles, memory, sessions, audit): hidden inside, and never created there. */
  hiddenPaths?: readonly ProtectedPath[]
  /** Paths read-only inside besides the defaults (`sandbox.protect`: relative to the workspace, or absolute). */
  readOnlyPaths?: readonly string[]
  /** One file the command may read although it lies in a hidden folder (run_script's script). */
  exposeFile?: string
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
  /** Protected paths the command created anyway (a race with another myc), moved out of the workspace. */
  warnings?: string[]
}

export type ExecResult =
  | { ok: true; outcome: ExecOutcome }
  | {
      ok: false
      error: {
        code: 'guard_blocked' | 'sandbox_unavailable' | 'invalid_request' | 'spawn_failed'
        message: string
        rule?: string
      }
    }

/** The environment every sandboxed command gets; everything else is cleared. */
export const MINIMAL_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

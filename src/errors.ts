/**
 * Typed errors thrown by the core. Only the CLI edge turns them into exit
 * codes (README.md, Commands): the core never calls `process.exit`.
 */

/** Exit codes of `myc`, per the README's Commands section. */
export const ExitCode = {
  ok: 0,
  runtime: 1,
  /** `myc pin --check`: what a child offers differs from the lock (a CI step fails on it, as on `git diff --exit-code`). */
  differs: 1,
  usage: 2,
  checkFailed: 3,
  interrupted: 130,
} as const
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/**
 * Stable, machine-readable error codes (the `code` of `--json` errors), in
 * lower snake case like every code myc writes (the agent's event codes, the
 * sandbox's); docs/configuration.md has the table.
 */
export type MycErrorCode =
  | 'config_invalid'
  | 'config_not_found'
  | 'usage'
  | 'api_key_missing'
  | 'child_failed'
  | 'check_failed'
  | 'sandbox_unavailable'
  | 'registry_unreachable'
  | 'registry_bad_answer'
  | 'not_in_registry'
  | 'runtime_missing'
  | 'needs_login'
  | 'child_gone'
  | 'runtime'

const exitCodeOf: Record<MycErrorCode, ExitCode> = {
  config_invalid: ExitCode.usage,
  config_not_found: ExitCode.usage,
  usage: ExitCode.usage,
  // Set up wrong before anything starts, as a config naming an unset variable is (exit 2); not a flag, so not `usage`.
  api_key_missing: ExitCode.usage,
  child_failed: ExitCode.runtime,
  check_failed: ExitCode.checkFailed,
  sandbox_unavailable: ExitCode.runtime,
  registry_unreachable: ExitCode.runtime,
  registry_bad_answer: ExitCode.runtime,
  not_in_registry: ExitCode.usage,
  runtime_missing: ExitCode.runtime,
  needs_login: ExitCode.runtime,
  child_gone: ExitCode.runtime,
  runtime: ExitCode.runtime,
}

/**
 * An error whose message a person can act on: it says what is wrong and how
 * to fix it. The CLI prints the message without a stack (unless --verbose).
 */
export class MycError extends Error {
  readonly code: MycErrorCode
  readonly exitCode: ExitCode
  /** What to do about it, when the message does not already end by saying so (`--json`: `error.fix`). */
  readonly fix: string | undefined

  constructor(code: MycErrorCode, message: string, options?: { cause?: unknown; fix?: string }) {
    super(message, options)
    this.name = 'MycError'
    this.code = code
    this.exitCode = exitCodeOf[code]
    this.fix = options?.fix
  }
}

/**
 * The code of the first MycError in an error's cause chain (a library may
 * wrap one), or undefined: what code decides by, never an error's message
 * or name.
 */
export function mycCodeOf(error: unknown): MycErrorCode | undefined {
  let e: unknown = error
  for (let depth = 0; e !== undefined && e !== null && depth < 6; depth++) {
    if (e instanceof MycError) return e.code
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}

/** A usage error: a bad flag or argument on the command line (exit 2). */
export function usageError(message: string): MycError {
  return new MycError('usage', message)
}

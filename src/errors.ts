/**
 * Typed errors thrown by the core. Only the CLI edge turns them into exit
 * codes (DESIGN.md section 3): the core never calls `process.exit`.
 */

/** Exit codes of `myc`, per DESIGN.md section 3. */
export const ExitCode = {
  ok: 0,
  runtime: 1,
  usage: 2,
  checkFailed: 3,
  interrupted: 130,
} as const
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/** Stable, machine-readable error codes (the `code` of `--json` errors). */
export type MycErrorCode =
  | 'CONFIG_INVALID'
  | 'CONFIG_NOT_FOUND'
  | 'USAGE'
  | 'CHILD_FAILED'
  | 'CHECK_FAILED'
  | 'SANDBOX_UNAVAILABLE'
  | 'RUNTIME'

const exitCodeOf: Record<MycErrorCode, ExitCode> = {
  CONFIG_INVALID: ExitCode.usage,
  CONFIG_NOT_FOUND: ExitCode.usage,
  USAGE: ExitCode.usage,
  CHILD_FAILED: ExitCode.runtime,
  CHECK_FAILED: ExitCode.checkFailed,
  SANDBOX_UNAVAILABLE: ExitCode.runtime,
  RUNTIME: ExitCode.runtime,
}

/**
 * An error whose message a person can act on: it says what is wrong and how
 * to fix it. The CLI prints the message without a stack (unless --verbose).
 */
export class MycError extends Error {
  readonly code: MycErrorCode
  readonly exitCode: ExitCode

  constructor(code: MycErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'MycError'
    this.code = code
    this.exitCode = exitCodeOf[code]
  }
}

/** A usage error: a bad flag or argument on the command line (exit 2). */
export function usageError(message: string): MycError {
  return new MycError('USAGE', message)
}

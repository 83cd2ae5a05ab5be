import type { Readable } from 'node:stream'
import { MycError } from './errors.js'

/**
 * What a command reads and writes, and what it runs in: stdin, stdout and
 * stderr, the environment, the working folder, and where SIGINT and SIGTERM
 * come from. When myc runs as a program these are the process's own
 * ({@link processIO}); a test that runs a command in its own process gives
 * its own (tests/helpers/cli.ts), so that commands never touch the
 * process's streams, environment or signals themselves.
 */
export interface CommandIO {
  readonly stdin: Readable & { readonly isTTY?: boolean }
  readonly stdout: NodeJS.WriteStream
  readonly stderr: NodeJS.WriteStream
  readonly env: Record<string, string | undefined>
  readonly cwd: string
  readonly signals: NodeJS.EventEmitter
}

/** This process's streams, environment, folder and signals (what build/myc.cjs runs with). */
export function processIO(): CommandIO {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    signals: process,
  }
}

/** What citty hands a command as `data` (src/cli.ts runs every command with it). */
export interface CommandData {
  io: CommandIO
}

/** A command's io, from the `data` of its citty context. */
export function commandIO(data: unknown): CommandIO {
  const io = (data as Partial<CommandData> | undefined)?.io
  if (io === undefined)
    throw new MycError('runtime', 'a command ran without its io: run it through runCli (src/cli.ts)')
  return io
}

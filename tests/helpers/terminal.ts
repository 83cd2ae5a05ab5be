import { execFileSync, spawnSync } from 'node:child_process'

/**
 * A real terminal for a test: a tmux server on a socket of its own (named
 * for the test and this process, so test files running side by side never
 * share one), whose sessions run a shell line at a fixed size.
 */
export class Terminal {
  private readonly socket: string

  constructor(name: string) {
    this.socket = `myc-${name}-${process.pid}`
  }

  /** Runs a tmux command on this terminal's server; its output. */
  readonly tmux = (...args: string[]): string =>
    execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' })

  /** Starts session `session` running `command` (a shell line), `cols` columns by `rows` rows (200 × 50), in `cwd`. */
  open(session: string, command: string, options: { cols?: number; rows?: number; cwd?: string } = {}): void {
    this.tmux(
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      String(options.cols ?? 200),
      '-y',
      String(options.rows ?? 50),
      ...(options.cwd !== undefined ? ['-c', options.cwd] : []),
      command,
    )
  }

  /** Ends the server and every session on it; never throws (it may never have started). */
  close(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server'])
  }
}

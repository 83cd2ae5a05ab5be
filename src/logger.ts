import { createConsola, type ConsolaInstance } from 'consola'

/** The logger every core module takes. Always writes to stderr. */
export type Logger = Pick<ConsolaInstance, 'debug' | 'info' | 'warn' | 'error' | 'success' | 'start' | 'log' | 'withTag' | 'level'>

/**
 * Creates the process's logger. stdout belongs to the protocol (serve) or to
 * the command's result, so every level goes to stderr.
 */
export function createLogger(options: { verbose?: boolean; quiet?: boolean } = {}): Logger {
  return createConsola({
    level: options.verbose ? 4 : options.quiet ? 1 : 3,
    stdout: process.stderr,
    stderr: process.stderr,
    formatOptions: { date: false, colors: process.stderr.isTTY === true },
  })
}

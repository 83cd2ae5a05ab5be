import { createConsola, type ConsolaInstance } from 'consola'
import { colourAwareStream, useColour, type ColourEnv } from './terminal-colour.js'

/** The logger every core module takes. Always writes to stderr. */
export type Logger = Pick<ConsolaInstance, 'debug' | 'info' | 'warn' | 'error' | 'success' | 'start' | 'log' | 'withTag' | 'level'>

/**
 * Creates the process's logger. stdout belongs to the protocol (serve) or to
 * the command's result, so every level goes to stderr, coloured only when
 * stderr may have colour ({@link useColour}).
 */
export function createLogger(options: { verbose?: boolean; quiet?: boolean; stream?: NodeJS.WriteStream; env?: ColourEnv } = {}): Logger {
  const env = options.env ?? process.env
  const stream = colourAwareStream(options.stream ?? process.stderr, env)
  return createConsola({
    level: options.verbose ? 4 : options.quiet ? 1 : 3,
    stdout: stream,
    stderr: stream,
    formatOptions: { date: false, colors: useColour(options.stream ?? process.stderr, env) },
  })
}

import { inspect } from 'node:util'
import { createConsola, type ConsolaInstance, type ConsolaReporter, type LogObject } from 'consola'
import { redactUrls } from './redact.js'
import { useColour, type ColourEnv } from './terminal-colour.js'
import { logText } from './terminal-text.js'

/** The logger every core module takes. Always writes to stderr. */
export type Logger = Pick<
  ConsolaInstance,
  'debug' | 'info' | 'warn' | 'error' | 'success' | 'start' | 'log' | 'withTag' | 'level'
>

/**
 * Creates the process's logger. stdout belongs to the protocol (serve) or to
 * the command's result, so every level goes to stderr, one line per entry in
 * myc's one style ({@link lineReporter}), coloured only when stderr may have
 * colour ({@link useColour}).
 */
export function createLogger(
  options: { verbose?: boolean; quiet?: boolean; stream?: NodeJS.WriteStream; env?: ColourEnv } = {},
): Logger {
  const env = options.env ?? process.env
  const stream = options.stream ?? process.stderr
  const outlet: LogOutlet = {}
  const logger = createConsola({
    level: options.verbose ? 4 : options.quiet ? 1 : 3,
    // Loggers made by withTag share these reporters, so their lines pass the outlet too.
    reporters: [outletReporter(lineReporter(stream, useColour(stream, env), options.verbose === true), outlet)],
  })
  return Object.assign(logger, { [OUTLET]: outlet })
}

/** Where a logger's lines pass on their way out: through `above` while live lines hold the bottom of the terminal. */
interface LogOutlet {
  above?: ((write: () => void) => void) | undefined
}

const OUTLET = Symbol('myc.logOutlet')

/** A reporter whose lines go through `outlet.above` when it is set. */
function outletReporter(reporter: ConsolaReporter, outlet: LogOutlet): ConsolaReporter {
  return {
    log: (logObj, ctx) => (outlet.above ? outlet.above(() => reporter.log(logObj, ctx)) : reporter.log(logObj, ctx)),
  }
}

/**
 * Makes the lines of `logger` (one {@link createLogger} made, and the
 * loggers made from it with `withTag`) go through `above` (live lines'
 * {@link import('./terminal-lines.js').LiveLines.above}) until the returned
 * function is called. A logger made elsewhere is left as it is.
 */
export function logAbove(logger: Logger, above: (write: () => void) => void): () => void {
  const outlet = (logger as Logger & { [OUTLET]?: LogOutlet })[OUTLET]
  if (!outlet) return () => {}
  outlet.above = above
  return () => {
    if (outlet.above === above) outlet.above = undefined
  }
}

/** The word after `myc:` for a level (none for info and the like), and its colour (an SGR code). */
const LEVEL_WORDS: Readonly<Record<string, readonly [string, number]>> = {
  fatal: ['error', 31],
  error: ['error', 31],
  warn: ['warning', 33],
  debug: ['debug', 2],
  trace: ['debug', 2],
  verbose: ['debug', 2],
}

/**
 * Every log entry as one line, `myc: [level: ][tag: ]text`, the style of
 * every command's own error (`myc: …`, docs/development.md), on a terminal
 * and in a pipe alike: a client's log that gathers many servers' stderr
 * still says whose line it is. Its text is cleaned ({@link cleanLogValue}):
 * the secrets of URLs hidden and control characters shown as escapes. An
 * error's stack only with `--verbose`.
 */
function lineReporter(stream: NodeJS.WritableStream, colour: boolean, verbose: boolean): ConsolaReporter {
  const paint = (text: string, sgr: number) => (colour ? `\u001b[${sgr}m${text}\u001b[${sgr === 2 ? 22 : 39}m` : text)
  return {
    log: (logObj: LogObject) => {
      const level = LEVEL_WORDS[logObj.type]
      const word = level ? `${paint(`${level[0]}:`, level[1])} ` : ''
      const tag = logObj.tag ? `${cleanLogValue(logObj.tag) as string}: ` : ''
      const text = logObj.args.map((arg) => argText(cleanLogValue(arg), verbose)).join(' ')
      stream.write(`myc: ${word}${tag}${text}\n`)
    },
  }
}

/** One argument of a log call as text: a string as it is, an error by its message (its stack with --verbose), anything else inspected. */
function argText(value: unknown, verbose: boolean): string {
  if (typeof value === 'string') return value
  if (value instanceof Error) return verbose && value.stack ? value.stack : value.message
  return logText(inspect(value, { depth: 4, breakLength: Infinity }))
}

/** One argument of a log call, cleaned: strings, and errors (message, stack, cause); other values as they are (inspected, then cleaned, when written). */
export function cleanLogValue(value: unknown): unknown {
  if (typeof value === 'string') return logText(redactUrls(value))
  if (value instanceof Error) {
    const copy = new Error(
      logText(redactUrls(value.message)),
      value.cause === undefined ? {} : { cause: cleanLogValue(value.cause) },
    )
    copy.name = value.name
    copy.stack = value.stack === undefined ? undefined : logText(redactUrls(value.stack))
    return copy
  }
  return value
}

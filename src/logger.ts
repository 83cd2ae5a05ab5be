import { createConsola, type ConsolaInstance, type ConsolaReporter, type LogObject } from 'consola'
import { redactUrls } from './redact.js'
import { colourAwareStream, useColour, type ColourEnv } from './terminal-colour.js'
import { logText } from './terminal-text.js'

/** The logger every core module takes. Always writes to stderr. */
export type Logger = Pick<
  ConsolaInstance,
  'debug' | 'info' | 'warn' | 'error' | 'success' | 'start' | 'log' | 'withTag' | 'level'
>

/**
 * Creates the process's logger. stdout belongs to the protocol (serve) or to
 * the command's result, so every level goes to stderr, coloured only when
 * stderr may have colour ({@link useColour}).
 */
export function createLogger(
  options: { verbose?: boolean; quiet?: boolean; stream?: NodeJS.WriteStream; env?: ColourEnv } = {},
): Logger {
  const env = options.env ?? process.env
  const stream = colourAwareStream(options.stream ?? process.stderr, env)
  const consola = createConsola({
    level: options.verbose ? 4 : options.quiet ? 1 : 3,
    stdout: stream,
    stderr: stream,
    formatOptions: { date: false, colors: useColour(options.stream ?? process.stderr, env) },
  })
  // Log lines carry children's errors and names: cleaned before consola formats and colours them (loggers made by withTag share these reporters).
  const outlet: LogOutlet = {}
  const logger = consola.setReporters(consola.options.reporters.map((r) => outletReporter(cleaningReporter(r), outlet)))
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

/**
 * A reporter that hands `reporter` the log object with its text cleaned:
 * the secrets of URLs hidden ({@link redactUrls}) and control characters
 * shown as escapes ({@link logText}), in the message, the tag and every
 * string or error argument.
 */
function cleaningReporter(reporter: ConsolaReporter): ConsolaReporter {
  return {
    log: (logObj: LogObject, ctx) => {
      const clean = { ...logObj, tag: cleanLogValue(logObj.tag) as string, args: logObj.args.map(cleanLogValue) }
      if (typeof logObj.message === 'string') clean.message = cleanLogValue(logObj.message) as string
      reporter.log(clean, ctx)
    },
  }
}

/** One argument of a log call, cleaned: strings, and errors (message, stack, cause); other values as they are (consola inspects them, which escapes controls). */
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

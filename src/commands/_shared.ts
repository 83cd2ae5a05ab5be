import type { ArgDef } from 'citty'
import type { CommandIO } from '../command-io.js'
import { MycError } from '../errors.js'
import { createLogger, type Logger } from '../logger.js'
import { jsonText, terminalText } from '../terminal-text.js'

/** Flags every command accepts (README.md, Commands). */
export const commonArgs = {
  config: {
    type: 'string',
    description: 'Config file (default: ./mycelium.config.json, then .yaml/.yml)',
    valueHint: 'file',
  },
  verbose: { type: 'boolean', description: 'Verbose logs on stderr' },
} as const satisfies Record<string, ArgDef>

/** `--json`: one JSON document on stdout instead of text. */
export const jsonArgs = {
  json: { type: 'boolean', description: 'Print one JSON document on stdout' },
} as const satisfies Record<string, ArgDef>

/**
 * Writes a command's text result to stdout: the only place results go. The
 * text quotes what children, skills, memory and sessions say, so control
 * characters are shown as escapes ({@link terminalText}); no command's own
 * text has any.
 */
export function printResult(io: CommandIO, text: string): void {
  const safe = terminalText(text)
  io.stdout.write(safe.endsWith('\n') ? safe : `${safe}\n`)
}

/**
 * A line saying what a report shows (its mode, its role): above the result
 * on a terminal, else on stderr (`myc: …`), so that a piped result stays
 * only the result. Never with `--json`, which has fields for it.
 */
export function printHeader(io: CommandIO, text: string): void {
  if (io.stdout.isTTY === true) io.stdout.write(`${terminalText(text)}\n`)
  else io.stderr.write(`myc: ${terminalText(text)}\n`)
}

/** Writes a `--json` result document to stdout: the exact text, every control character JSON-escaped ({@link jsonText}). */
export function printJson(io: CommandIO, value: unknown): void {
  io.stdout.write(`${jsonText(value, 2)}\n`)
}

/** A command's logger: on the io's stderr, coloured as that stream and environment allow. */
export function commandLogger(io: CommandIO, options: { verbose?: boolean; quiet?: boolean }): Logger {
  return createLogger({ ...options, stream: io.stderr, env: io.env })
}

/** `--role R` and `--skills a,b`: who the session is (chosen by whoever launches myc). */
export const principalArgs = {
  role: {
    type: 'string',
    description: 'Role of the session (else MYCELIUM_ROLE, else roles.default)',
    valueHint: 'role',
  },
  skills: { type: 'string', description: 'Skills active from the start, comma-separated', valueHint: 'a,b' },
} as const satisfies Record<string, ArgDef>

/** `--principal NAME`: whose logins or secrets (an http.tokens entry's `name`, or `jwt:SUBJECT`); undefined is the local person. */
export function principalFlag(value: string | undefined): string | undefined {
  if (value !== undefined && (value.trim() === '' || /[\0\n\r]/.test(value) || /^jwt:\s*$/.test(value)))
    throw new MycError('usage', '--principal takes a name: an http.tokens entry\'s "name", or jwt:SUBJECT')
  return value
}

/** Splits a comma-separated flag value; undefined stays undefined. */
export function splitList(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
}

/** How the command line treats an argument beyond its citty type (see {@link argRule}). */
export interface ArgRule {
  /** A string flag that may be given without a value (`--http` alone): it is then the empty string. */
  optionalValue?: boolean
  /** A positional that takes every remaining word (the command after `--`), so extra words are not errors. */
  rest?: boolean
}

const ARG_RULE = Symbol('myc.argRule')

/** Marks a string flag whose value may be left out: `--flag` alone is `--flag=`. */
export function optionalValue<const T extends ArgDef & { type: 'string' }>(def: T): T {
  return Object.assign(def, { [ARG_RULE]: { optionalValue: true } satisfies ArgRule })
}

/** Marks a positional that takes every remaining word (`myc sandbox exec -- cmd args…`). */
export function restPositional<const T extends ArgDef & { type: 'positional' }>(def: T): T {
  return Object.assign(def, { [ARG_RULE]: { rest: true } satisfies ArgRule })
}

/** What {@link optionalValue} or {@link restPositional} said of an argument definition. */
export function argRule(def: ArgDef): ArgRule {
  return (def as { [ARG_RULE]?: ArgRule })[ARG_RULE] ?? {}
}

/** `--era`: which protocol eras `myc serve` answers on stdio; a global flag (myc with no command serves). */
export const eraArgs = {
  era: {
    type: 'string',
    description:
      "Protocol eras served on stdio: auto (each connection's first message decides), legacy (2025 only), modern (2026-07-28 only)",
    valueHint: 'auto|legacy|modern',
    default: 'auto',
  },
} as const satisfies Record<string, ArgDef>

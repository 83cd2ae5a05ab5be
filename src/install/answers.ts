import { usageError } from '../errors.js'
import { flagOf, slotKey, type Slot, type SlotTarget } from './slots.js'

/** Values given on the command line, by slot target and id, in the order given (`--arg p=a --arg p=b`). */
export type Given = Record<SlotTarget, Map<string, string[]>>

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const ARG_NAME = /^[A-Za-z0-9_.-]+$/

/**
 * Reads `--env`, `--header` and `--arg` words into {@link Given}: `NAME=VALUE`
 * each; `--env NAME` alone takes NAME's value from `env` (myc's environment).
 * A malformed word is a usage error naming it and the form.
 */
export function parseGiven(
  words: { env: readonly string[]; header: readonly string[]; arg: readonly string[] },
  env: Record<string, string | undefined>,
): Given {
  const given: Given = { env: new Map(), header: new Map(), arg: new Map() }
  const add = (target: SlotTarget, name: string, value: string) =>
    given[target].set(name, [...(given[target].get(name) ?? []), value])
  for (const word of words.env) {
    const eq = word.indexOf('=')
    const name = eq === -1 ? word : word.slice(0, eq)
    if (!ENV_NAME.test(name))
      throw usageError(
        `--env takes NAME=VALUE, or NAME alone for the value of NAME in your environment (a NAME is letters, digits and "_"), not "${word}"`,
      )
    if (eq !== -1) add('env', name, word.slice(eq + 1))
    else if (env[name] === undefined)
      throw usageError(`--env ${name} takes the value of ${name} in your environment, where it is not set`)
    else add('env', name, env[name])
  }
  for (const word of words.header) {
    const eq = word.indexOf('=')
    if (eq <= 0 || !HEADER_NAME.test(word.slice(0, eq)))
      throw usageError(`--header takes NAME=VALUE with an HTTP header name (X-API-Key=…), not "${word}"`)
    add('header', word.slice(0, eq), word.slice(eq + 1))
  }
  for (const word of words.arg) {
    const eq = word.indexOf('=')
    const name = eq === -1 ? '' : word.slice(0, eq).replace(/^-+/, '')
    if (!ARG_NAME.test(name))
      throw usageError(
        `--arg takes NAME=VALUE, NAME being an argument's name without its dashes or its valueHint, not "${word}"`,
      )
    add('arg', name, word.slice(eq + 1))
  }
  return given
}

export interface AnswerOptions {
  given: Given
  /** `--yes`: a value left open takes its default. */
  yes: boolean
  /** `--dry-run`: a secret is shown as its reference, so its value is not needed. */
  dryRun: boolean
  /** Asks a person for one slot's value (a terminal is there); absent, nothing is asked. */
  ask?: ((slot: Slot) => Promise<string>) | undefined
  /** Whether the chosen package or remote takes headers (a remote does). */
  headers: boolean
}

/** What each slot is filled with (by slotKey; a slot left out has no entry), and the extra `--env`/`--header` values the server does not declare. */
export interface Answers {
  values: Map<string, string[]>
  extra: { env: Map<string, string>; header: Map<string, string> }
}

/**
 * Fills every slot: from the command line, else (with --yes) its default,
 * else by asking on a terminal when it is required. A required slot left
 * open, an --arg the server does not take, or a value outside a slot's
 * choices is one usage error naming each.
 */
export async function answerSlots(slots: readonly Slot[], options: AnswerOptions): Promise<Answers> {
  const { given } = options
  checkUnknown(slots, options)
  const values = new Map<string, string[]>()
  const missing: Slot[] = []
  for (const slot of slots) {
    const filled = await fill(slot, options)
    if (filled === 'missing') missing.push(slot)
    else if (filled.length > 0)
      values.set(
        slotKey(slot.target, slot.id),
        filled.map((v) => checked(slot, v)),
      )
  }
  if (missing.length > 0) throw missingError(missing)
  const declared = (target: SlotTarget, id: string) => slots.some((s) => s.target === target && s.id === id)
  const extra = { env: new Map<string, string>(), header: new Map<string, string>() }
  for (const target of ['env', 'header'] as const)
    for (const [id, list] of given[target]) if (!declared(target, id)) extra[target].set(id, list.at(-1)!)
  return { values, extra }
}

async function fill(slot: Slot, options: AnswerOptions): Promise<string[] | 'missing'> {
  const given = options.given[slot.target].get(slot.id)
  if (given) return slot.repeated ? given : [given.at(-1)!]
  const { input } = slot
  const required = input.isRequired === true
  // A dry run prints a secret as its reference: its value is not asked for.
  if (options.dryRun && input.isSecret) return required ? [''] : []
  if (options.yes && input.default !== undefined) return [input.default]
  if (required && options.ask) return [await options.ask(slot)]
  return required ? 'missing' : []
}

function checkUnknown(slots: readonly Slot[], options: AnswerOptions): void {
  if (options.given.header.size > 0 && !options.headers)
    throw usageError('--header is for a remote server (an HTTP endpoint); this one runs as a package: use --env')
  const args = slots.filter((s) => s.target === 'arg').map((s) => s.id)
  for (const id of options.given.arg.keys())
    if (!args.includes(id))
      throw usageError(
        `--arg ${id}: the server takes no argument or variable "${id}"${args.length ? ` (it takes: ${args.join(', ')})` : ''}`,
      )
}

/** A value checked against its slot's choices and format. */
function checked(slot: Slot, value: string): string {
  const { choices, format } = slot.input
  if (choices && choices.length > 0 && !choices.includes(value) && !(slot.input.isSecret && value === ''))
    throw usageError(`${flagOf(slot)} takes one of ${choices.join(', ')}, not "${value}"`)
  if (format === 'number' && (value.trim() === '' || !Number.isFinite(Number(value))))
    throw usageError(`${flagOf(slot)} takes a number, not "${value}"`)
  if (format === 'boolean' && value !== 'true' && value !== 'false')
    throw usageError(`${flagOf(slot)} takes true or false, not "${value}"`)
  return value
}

function missingError(missing: readonly Slot[]) {
  const lines = missing.map((slot) => {
    const { description, isSecret, default: fallback } = slot.input
    const notes = [
      ...(description ? [oneLine(description)] : []),
      ...(isSecret ? ['secret'] : []),
      ...(fallback !== undefined ? [`default ${fallback}`] : []),
    ]
    return `  ${flagOf(slot)}${notes.length ? ` (${notes.join('; ')})` : ''}`
  })
  const withDefault = missing.some((s) => s.input.default !== undefined)
  return usageError(
    `the server needs ${missing.length === 1 ? 'a value' : 'values'} this command did not give:\n${lines.join('\n')}\ngive ${missing.length === 1 ? 'it' : 'each'} as NAME=VALUE (--env NAME alone takes your environment's value)${withDefault ? ', or add --yes to take the defaults' : ''}, or run myc add on a terminal to be asked`,
  )
}

/** A description on one line, at most 100 characters. */
export function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > 100 ? `${line.slice(0, 97)}...` : line
}

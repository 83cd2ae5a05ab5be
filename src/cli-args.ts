import type { ArgDef, ArgsDef, CommandDef } from 'citty'
import { argRule } from './commands/_shared.js'
import { closest } from './config/suggest.js'
import { MycError } from './errors.js'

/**
 * The command line, read from citty's own command tree: each command's
 * `args` say which flags it has, which take a value (`string`) and which do
 * not (`boolean`), and which positionals it takes. There is no other list of
 * flags. Words after `--` belong to the command myc runs and are never read
 * as flags.
 */

type Resolvable<T> = T | Promise<T> | (() => T | Promise<T>)
export type AnyCommand = CommandDef<any>
export type SubCommands = Record<string, Resolvable<AnyCommand>>

async function resolve<T>(value: Resolvable<T>): Promise<T> {
  return typeof value === 'function' ? await (value as () => T | Promise<T>)() : await value
}

/** A command's argument definitions (citty allows them lazy). */
export async function argsOf(cmd: AnyCommand): Promise<ArgsDef> {
  return cmd.args === undefined ? {} : ((await resolve(cmd.args as Resolvable<ArgsDef>)) ?? {})
}

/** A command's subcommands, or undefined for a command that runs. */
export async function subCommandsOf(cmd: AnyCommand): Promise<SubCommands | undefined> {
  const subs =
    cmd.subCommands === undefined
      ? undefined
      : ((await resolve(cmd.subCommands as Resolvable<SubCommands>)) as SubCommands | undefined)
  return subs && Object.keys(subs).length > 0 ? subs : undefined
}

/** One subcommand, loaded. */
export async function loadSubCommand(subs: SubCommands, name: string): Promise<AnyCommand> {
  return resolve(subs[name]!)
}

/** A word that is written as a flag: `-x`, `--name`, `--name=value` (not `-` alone, which means stdin, nor `--`). */
export function isFlagWord(word: string): boolean {
  return word.length > 1 && word.startsWith('-') && word !== '--'
}

/** A word a value flag may take as its value when written apart (`--max-turns 3`, `--task -`, `--n -1`); not another flag, nor `--`. */
function canBeValue(word: string | undefined): word is string {
  return word !== undefined && word !== '--' && (!word.startsWith('-') || word === '-' || /^-\d/.test(word))
}

interface Flag {
  /** The name in the definitions (`max-turns`). */
  name: string
  def: ArgDef
  /** Whether it takes a value (`string`, `enum`) or not (`boolean`). */
  takesValue: boolean
  /** Whether the value may be left out (`--http` alone). */
  optionalValue: boolean
}

function flagOf(name: string, def: ArgDef): Flag | undefined {
  if (def.type === 'positional') return undefined
  const takesValue = def.type === 'string' || def.type === 'enum'
  return { name, def, takesValue, optionalValue: takesValue && argRule(def).optionalValue === true }
}

/** The flags of some definitions, by the words that name them: `--name`, and `-a`/`--alias` for citty aliases. */
function flagTable(...defs: ArgsDef[]): Map<string, Flag> {
  const table = new Map<string, Flag>()
  for (const args of defs) {
    for (const [name, def] of Object.entries(args)) {
      const flag = flagOf(name, def)
      if (!flag) continue
      const words = [`--${name}`, ...aliasesOf(def).map((a) => (a.length === 1 ? `-${a}` : `--${a}`))]
      for (const word of words) if (!table.has(word)) table.set(word, flag)
    }
  }
  return table
}

function aliasesOf(def: ArgDef): string[] {
  const alias = (def as { alias?: string | string[] }).alias
  return alias === undefined ? [] : Array.isArray(alias) ? alias : [alias]
}

/** The flag a word names (`--json`, `--role=x`, `-r`), with the value written in it, if any. */
function splitFlagWord(word: string): { name: string; value: string | undefined } {
  const eq = word.indexOf('=')
  return eq === -1 ? { name: word, value: undefined } : { name: word.slice(0, eq), value: word.slice(eq + 1) }
}

/**
 * The index of the first bare word before `--` (a command's name), skipping
 * the values of value flags. `defs` says which flags take values; a flag it
 * does not know is taken to have none, unless `more` (asked for once, at the
 * first such flag) knows it.
 */
export async function findCommandWord(
  words: readonly string[],
  defs: ArgsDef[],
  more?: () => Promise<ArgsDef>,
): Promise<number> {
  let table = flagTable(...defs)
  let askedMore = more === undefined
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (word === '--') return -1
    if (!isFlagWord(word)) return i
    const { name, value } = splitFlagWord(word)
    if (value !== undefined) continue
    let flag = table.get(name)
    if (!flag && !askedMore) {
      askedMore = true
      table = flagTable(...defs, await more!())
      flag = table.get(name)
    }
    if (flag?.takesValue && canBeValue(words[i + 1])) i++
  }
  return -1
}

/**
 * Checks a command's words (its path removed) against its definitions and
 * the global flags (`myc`'s own, accepted with every command, before or
 * after it), and returns them as citty should read them: global flags the
 * command does not define are left out, and a flag whose value may be left
 * out and is (`--http`) is written `--http=`. Throws a usage error naming
 * the first word that is wrong, with the nearest valid one.
 */
export function checkWords(
  words: readonly string[],
  command: { path: string; args: ArgsDef; globals: ArgsDef },
): string[] {
  const { path, args, globals } = command
  const table = flagTable(args, globals)
  const positionals = Object.entries(args).filter(([, def]) => def.type === 'positional')
  const rest = positionals.some(([, def]) => argRule(def).rest === true)
  const where = `myc ${path}`
  const out: string[] = []
  const given = new Set<string>()
  let taken = 0
  const positional = (word: string): void => {
    if (!rest && taken >= positionals.length)
      throw extraArgument(
        word,
        where,
        positionals.map(([name]) => name),
        [...table.keys()],
      )
    taken++
  }
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (word === '--') {
      // The command's own words (`sandbox exec -- cmd --help`): never flags; positionals of this command when it has no rest.
      for (const after of words.slice(i + 1)) positional(after)
      out.push(...words.slice(i))
      break
    }
    if (!isFlagWord(word)) {
      positional(word)
      out.push(word)
      continue
    }
    const { name, value } = splitFlagWord(word)
    let flag = table.get(name)
    let negated = false
    if (!flag && name.startsWith('--no-')) {
      const base = table.get(`--${name.slice(5)}`)
      if (base && !base.takesValue) {
        flag = base
        negated = true
      }
    }
    if (!flag) throw unknownFlag(name, where, [...table.keys()])
    given.add(flag.name)
    // A global flag this command does not define is left out: citty would read `--era modern` as a flag and a positional.
    const keep = Object.hasOwn(args, flag.name)
    if (!flag.takesValue) {
      if (value !== undefined && (negated || (value !== 'true' && value !== 'false')))
        throw new MycError('usage', `${name} takes no value (got "${word}") for ${where}`)
      if (keep) out.push(word)
      continue
    }
    if (value !== undefined) {
      if (keep) out.push(word)
      continue
    }
    const next = words[i + 1]
    if (canBeValue(next)) {
      i++
      if (keep) out.push(word, next)
      continue
    }
    if (!flag.optionalValue) {
      const hint = flag.def.valueHint ?? flag.name
      throw new MycError('usage', `${name} needs a value for ${where}: ${name} <${hint}> (or ${name}=<${hint}>)`)
    }
    if (keep) out.push(`${name}=`)
  }
  const missing = positionals.slice(taken).find(([, def]) => isRequired(def)) ?? requiredFlag(args, given)
  if (missing) throw missingArgument(missing, where)
  return out
}

/** Whether citty requires an argument: a positional unless `required: false` or it has a default; a flag when `required: true` without a default. */
function isRequired(def: ArgDef): boolean {
  if (def.default !== undefined) return false
  return def.type === 'positional' ? def.required !== false : def.required === true
}

function requiredFlag(args: ArgsDef, given: ReadonlySet<string>): [string, ArgDef] | undefined {
  return Object.entries(args).find(([name, def]) => def.type !== 'positional' && isRequired(def) && !given.has(name))
}

/**
 * What is missing, in the words of its definition (which say where to find
 * a value: `myc sessions list` shows the ids), with the command's usage line.
 */
function missingArgument([name, def]: [string, ArgDef], where: string): MycError {
  const word = def.type === 'positional' ? name.toUpperCase() : `--${name} <${def.valueHint ?? name}>`
  const what = def.description ? `: ${def.description}` : ''
  return new MycError('usage', `\`${where}\` needs ${word}${what}; see \`${where} --help\``)
}

/** A usage error about one flag, with the valid flag nearest it when one is near. */
export class FlagError extends MycError {
  constructor(
    message: string,
    readonly suggestion: string | undefined,
  ) {
    super('usage', message)
  }
}

function unknownFlag(name: string, where: string, known: string[]): FlagError {
  // Only the long spellings are offered, and `--no-x` of booleans is not (a typo is nearer its positive form).
  const long = known.filter((k) => k.startsWith('--')).map((k) => k.slice(2))
  const bare = name.replace(/^-+/, '')
  let suggestion = nearest(bare, long)
  if (suggestion === undefined && bare.length === 1) {
    const starting = long.filter((k) => k.startsWith(bare))
    if (starting.length === 1) suggestion = starting[0]
  }
  return new FlagError(
    `unknown flag ${name} for ${where}${suggestion !== undefined ? ` (did you mean --${suggestion}?)` : ` (see \`${where} --help\`)`}`,
    suggestion,
  )
}

function extraArgument(word: string, where: string, positionals: string[], known: string[]): MycError {
  const flag = nearest(
    word.replace(/^-+/, ''),
    known.filter((k) => k.startsWith('--')).map((k) => k.slice(2)),
  )
  const takes =
    positionals.length === 0
      ? 'it takes no arguments'
      : `it takes ${positionals.map((p) => p.toUpperCase()).join(' ')}; quote an argument that has spaces`
  return new MycError(
    'usage',
    `unexpected argument "${word}" for ${where} (${takes}${flag !== undefined ? `; did you mean --${flag}?` : ''})`,
  )
}

/**
 * The candidate nearest `word` by edit distance (a swap of two neighbours
 * counts once), if near enough to be a typo, or one that `word` begins.
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const target = word.toLowerCase()
  const { best, distance: bestDistance } = closest(target, candidates)
  const limit = Math.max(1, Math.floor(target.length / 3))
  if (best !== undefined && bestDistance <= limit && bestDistance < target.length) return best
  if (target.length >= 3) return candidates.find((c) => c.toLowerCase().startsWith(target))
  return undefined
}

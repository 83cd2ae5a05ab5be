import type { Argument, Input, Package, Remote } from './server-json.js'

/**
 * The values a server's entry leaves open (its environment variables,
 * headers, arguments, and the `{variables}` inside any of them), each a
 * slot a person fills: given on the command line (`--env`, `--header`,
 * `--arg`), asked on a terminal, or taken from its default with `--yes`.
 */

/** Which flag fills a slot. */
export type SlotTarget = 'env' | 'header' | 'arg'

export interface Slot {
  target: SlotTarget
  /** What the flag names it: a variable's or header's name, a named argument without its dashes, a positional's valueHint. */
  id: string
  input: Input
  /** It may take several values (`--arg NAME=a --arg NAME=b`). */
  repeated: boolean
}

/** A slot's key in maps: `env:TOKEN`, `arg:port`. */
export const slotKey = (target: SlotTarget, id: string): string => `${target}:${id}`

/** The flag that fills a slot, as a person writes it (`--env TOKEN`). */
export const flagOf = (slot: Pick<Slot, 'target' | 'id'>): string => `--${slot.target} ${slot.id}`

/** `{name}` in a value: a variable of its input. */
const VARIABLE = /\{([A-Za-z0-9_.-]+)\}/g

/** The variables a value names that its input defines. */
export function variablesIn(value: string, variables: Record<string, Input> | undefined): string[] {
  return [...value.matchAll(VARIABLE)].map((m) => m[1]!).filter((name) => variables?.[name] !== undefined)
}

/** `value` with each `{variable}` replaced (one not given is left as written, as the server.json schema says). */
export function fillVariables(value: string, fill: (name: string) => string | undefined): string {
  return value.replace(VARIABLE, (match, name: string) => fill(name) ?? match)
}

/** The id of an argument's open value: a named one's flag without its dashes, a positional's valueHint (or its place). */
export function argumentId(arg: Argument, index: number): string {
  return arg.type === 'named' ? arg.name.replace(/^-+/, '') : (arg.valueHint ?? `argument${index + 1}`)
}

/** The slots of one input with variables: its own value when it leaves it open, else the variables its value names. */
function slotsOf(
  target: SlotTarget,
  id: string,
  input: Input & { variables?: Record<string, Input> | undefined },
  repeated: boolean,
): Slot[] {
  if (input.value === undefined) return [{ target, id, input, repeated }]
  // A variable is filled with --arg, whatever it is part of; a secret parent makes its variables secret.
  return variablesIn(input.value, input.variables).map((name) => ({
    target: 'arg',
    id: name,
    input: {
      ...input.variables![name]!,
      isSecret: input.variables![name]!.isSecret === true || input.isSecret === true,
    },
    repeated,
  }))
}

/** Every slot of a package (runtime and package arguments, environment variables) or of a remote (URL variables, headers), each once. */
export function slotsFor(source: { pkg: Package } | { remote: Remote }): Slot[] {
  const all: Slot[] = []
  if ('pkg' in source) {
    const { pkg } = source
    const args = [...(pkg.runtimeArguments ?? []), ...(pkg.packageArguments ?? [])]
    args.forEach((arg, i) => all.push(...slotsOf('arg', argumentId(arg, i), arg, arg.isRepeated === true)))
    for (const env of pkg.environmentVariables ?? []) all.push(...slotsOf('env', env.name, env, false))
  } else {
    const { remote } = source
    for (const name of variablesIn(remote.url, remote.variables))
      all.push({ target: 'arg', id: name, input: remote.variables![name]!, repeated: false })
    for (const header of remote.headers ?? []) all.push(...slotsOf('header', header.name, header, false))
  }
  const byKey = new Map<string, Slot>()
  for (const slot of all) if (!byKey.has(slotKey(slot.target, slot.id))) byKey.set(slotKey(slot.target, slot.id), slot)
  return [...byKey.values()]
}

import { secretRef } from '../config/expand-env.js'
import { MycError, usageError } from '../errors.js'
import type { Answers } from './answers.js'
import type { Candidate } from './choose.js'
import { argumentId, fillVariables, slotKey, variablesIn, type SlotTarget } from './slots.js'
import type { Argument, Input, Package, Remote } from './server-json.js'

/** Where a secret goes: sealed in this machine's secret store, or left for the person to export. */
export type SecretMode = 'sealed' | 'export'

/** One secret of an entry: what the entry holds in its place, and its value (for the trial start and the store only). */
export interface SecretPlan {
  /** The text standing for it in the entry: `${secret:NAME}` (sealed) or `${VARIABLE}` (export). */
  ref: string
  /** Its name in the secret store (sealed). */
  name: string
  /** The variable to export (export). */
  variable: string
  /** The flag that gives it (`--env BRAVE_API_KEY`), for messages. */
  what: string
  value: string
}

/** A config entry for a server, as written to the config (secrets as references), with its secrets apart. */
export interface BuiltEntry {
  entry: Record<string, unknown>
  secrets: SecretPlan[]
}

const DEFAULT_NPM_REGISTRY = 'https://registry.npmjs.org'

/** A literal for the config: `$` is written `$$`, so that env expansion gives it back as it was. */
export function literal(text: string): string {
  return text.replaceAll('$', '$$$$')
}

/**
 * How a secret of server `key` is written: `${secret:KEY.ID}` (sealed), or
 * `${VARIABLE}` to export, VARIABLE being an environment variable's own
 * name, else `KEY_ID` in capitals.
 */
export function secretFor(key: string, target: SlotTarget, id: string, value: string, mode: SecretMode): SecretPlan {
  const name = `${key}.${id.replace(/[^A-Za-z0-9._-]/g, '_')}`
  const variable =
    target === 'env' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(id)
      ? id
      : `${key}_${id}`.toUpperCase().replace(/[^A-Z0-9_]/g, '_')
  const ref = mode === 'sealed' ? secretRef(name) : `\${${variable}}`
  return { ref, name, variable, what: `--${target} ${id}`, value }
}

/** Turns values into config text, keeping each secret as a reference (and its value apart). */
class Composer {
  readonly secrets: SecretPlan[] = []

  constructor(
    private readonly key: string,
    private readonly mode: SecretMode,
    private readonly answers: Answers,
  ) {}

  /** The reference for a secret value, recorded once. */
  secret(target: SlotTarget, id: string, value: string): string {
    const plan = secretFor(this.key, target, id, value, this.mode)
    if (!this.secrets.some((s) => s.ref === plan.ref)) this.secrets.push(plan)
    return plan.ref
  }

  /** How many times an argument appears: once per value given to it, or to the variables in its fixed value (once at least). */
  count(arg: Argument, id: string): number {
    if (arg.value === undefined) return this.answers.values.get(slotKey('arg', id))?.length ?? 0
    const lengths = variablesIn(arg.value, arg.variables).map(
      (n) => this.answers.values.get(slotKey('arg', n))?.length ?? 0,
    )
    return Math.max(1, ...lengths)
  }

  /**
   * The config text of an input's value: the value given for it, or its
   * fixed value with its variables filled (the `index`-th value of each).
   * Undefined when it is left open and nothing was given.
   */
  text(
    target: SlotTarget,
    id: string,
    input: Input & { variables?: Record<string, Input> },
    index = 0,
  ): string | undefined {
    if (input.value === undefined) {
      const value = this.answers.values.get(slotKey(target, id))?.[index]
      if (value === undefined) return undefined
      return input.isSecret ? this.secret(target, id, value) : literal(value)
    }
    return fillVariables(literal(input.value), (name) => {
      const values = this.answers.values.get(slotKey('arg', name))
      const value = values?.[index] ?? values?.[0]
      if (value === undefined) return undefined
      const secret = input.isSecret === true || input.variables?.[name]?.isSecret === true
      return secret ? this.secret('arg', name, value) : literal(value)
    })
  }
}

/**
 * The config entry for the chosen package or remote, filled with the
 * answers: an npm package `npx -y pkg@version …`, a PyPI one `uvx
 * pkg==version …`, an OCI image `docker run -i --rm … image:tag …`, a
 * remote an HTTP child. The version is always pinned; a secret is a
 * reference (SecretMode) and its value only in `secrets`.
 */
export function buildEntry(candidate: Candidate, answers: Answers, key: string, mode: SecretMode): BuiltEntry {
  const c = new Composer(key, mode, answers)
  const entry =
    candidate.kind === 'remote' ? remoteEntry(candidate.remote, c, answers) : packageEntry(candidate, c, answers)
  return { entry, secrets: c.secrets }
}

function remoteEntry(remote: Remote, c: Composer, answers: Answers): Record<string, unknown> {
  for (const name of variablesIn(remote.url, remote.variables))
    if (remote.variables![name]!.isSecret)
      throw usageError(`the remote's URL takes a secret ({${name}}): myc add keeps no secret in a URL; add it by hand`)
  const url = fillVariables(literal(remote.url), (name) => {
    const value = answers.values.get(slotKey('arg', name))?.[0]
    return value === undefined ? undefined : literal(encodeURIComponent(value))
  })
  const headers: Record<string, string> = {}
  for (const header of remote.headers ?? []) {
    const text = c.text('header', header.name, header)
    if (text !== undefined) headers[header.name] = text
  }
  for (const [name, value] of answers.extra.header) headers[name] = c.secret('header', name, value)
  return {
    type: remote.type === 'sse' ? 'sse' : 'http',
    url,
    ...(Object.keys(headers).length ? { headers } : {}),
  }
}

function packageEntry(
  candidate: Exclude<Candidate, { kind: 'remote' }>,
  c: Composer,
  answers: Answers,
): Record<string, unknown> {
  const { pkg } = candidate
  const env: Record<string, string> = {}
  for (const variable of pkg.environmentVariables ?? []) {
    const text = c.text('env', variable.name, variable)
    if (text !== undefined) env[variable.name] = text
  }
  for (const [name, value] of answers.extra.env) env[name] = c.secret('env', name, value)
  const runtime = argumentWords(pkg.runtimeArguments ?? [], c, 0)
  const own = argumentWords(pkg.packageArguments ?? [], c, (pkg.runtimeArguments ?? []).length)
  let command: string
  let args: string[]
  if (candidate.kind === 'npm') {
    const registry = pkg.registryBaseUrl && pkg.registryBaseUrl.replace(/\/+$/, '') !== DEFAULT_NPM_REGISTRY
    command = 'npx'
    args = ['-y', ...(registry ? ['--registry', literal(pkg.registryBaseUrl!)] : []), ...runtime]
    args.push(literal(`${pkg.identifier}@${pinned(pkg)}`), ...own)
  } else if (candidate.kind === 'pypi') {
    command = 'uvx'
    args = [...runtime, literal(`${pkg.identifier}==${pinned(pkg)}`), ...own]
  } else {
    command = 'docker'
    // The container gets each variable by name from docker's own environment (the entry's env): no value on the command line.
    const passEnv = Object.keys(env).flatMap((name) => ['-e', name])
    args = ['run', '-i', '--rm', ...runtime, ...passEnv, literal(imageOf(pkg)), ...own]
  }
  return { command, args, ...(Object.keys(env).length ? { env } : {}) }
}

/** The words of a list of arguments (`offset`: how many came before, for the ids of positionals without a valueHint). */
function argumentWords(args: readonly Argument[], c: Composer, offset: number): string[] {
  const words: string[] = []
  args.forEach((arg, i) => {
    const id = argumentId(arg, offset + i)
    for (let n = 0; n < c.count(arg, id); n++) {
      const text = c.text('arg', id, arg, n)
      if (text === undefined) continue
      if (arg.type === 'positional') words.push(text)
      else words.push(...(text === '' ? [arg.name] : [arg.name, text]))
    }
  })
  return words
}

/** A version range or `latest`: not a pin. */
const UNPINNED = /^(latest|\*|x)$|[\^~<>=*|]|\s-\s|\.x\b|\.\*/i

/** The package's exact version, or an error: myc add pins every package, never `latest`. */
function pinned(pkg: Package): string {
  const version = pkg.version?.trim() ?? ''
  if (version === '' || UNPINNED.test(version)) throw unpinned(pkg, version === '' ? 'none' : `"${version}"`)
  return version
}

function unpinned(pkg: Package, what: string): MycError {
  return new MycError(
    'registry_bad_answer',
    `the ${pkg.registryType} package ${pkg.identifier} has no exact version in its server.json (${what}): myc add pins every package`,
    { fix: 'add it by hand with an exact version, or ask its publisher for one' },
  )
}

/** An OCI image pinned to a tag (not `latest`) or a digest: `identifier` as given when it has one, else `identifier:version`. */
function imageOf(pkg: Package): string {
  const name = pkg.identifier
  if (name.includes('@sha256:')) return name
  const lastPart = name.slice(name.lastIndexOf('/') + 1)
  if (!lastPart.includes(':')) return `${name}:${pinned(pkg)}`
  if (lastPart.endsWith(':latest')) throw unpinned(pkg, 'the tag "latest"')
  return name
}

import type { ServerConfig } from '../config/server-schema.js'
import { replaceSecretRefs, secretRefsIn } from '../config/expand-env.js'
import { SecretStore } from '../oauth/secret-store.js'

/** Where a child's secrets come from: the value, or undefined when none is kept. */
export type SecretLookup = (name: string) => Promise<string | undefined>

/**
 * The secrets of the person a scoped server's instance runs for (`{
 * "secret": "NAME" }` in its `env`), and what to tell them when one is not
 * kept (the command, and the route where they may set it themselves).
 */
export interface PersonSecrets {
  person: string
  lookup: SecretLookup
  fix(name: string): string
}

/**
 * A person's own secret that is not kept: the call that needed it fails
 * with this (naming the secret and how to set it), and no process starts.
 * Never filled from anyone else's secrets or from the environment.
 */
export class MissingSecretError extends Error {
  readonly missingSecret = true
  constructor(
    readonly person: string,
    readonly names: readonly string[],
    fix: string,
  ) {
    super(
      `needs ${names.length === 1 ? 'the secret' : 'the secrets'} ${names.map((n) => `"${n}"`).join(', ')} of ${person === 'local' ? 'the person who runs myc' : person}, and none is kept: ${fix}`,
    )
    this.name = 'MissingSecretError'
  }
}

/** The MissingSecretError in an error's cause chain, or undefined. */
export function missingSecretIn(error: unknown): MissingSecretError | undefined {
  let e: unknown = error
  for (let depth = 0; e !== undefined && e !== null && depth < 6; depth++) {
    if (e instanceof MissingSecretError) return e
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}

/** The strings of a server's entry that may hold `${secret:NAME}` (config/expand-env.ts, isSecretRefPath). */
function refHolders(config: ServerConfig): string[] {
  return config.type === 'stdio'
    ? [...config.args, ...Object.values(config.env).filter((v) => typeof v === 'string')]
    : Object.values(config.headers)
}

/** Whether a stdio entry's `env` names a person's own secret (`{ "secret": "NAME" }`). */
export function hasPersonSecrets(config: ServerConfig): boolean {
  return config.type === 'stdio' && Object.values(config.env).some((v) => typeof v !== 'string')
}

/** Whether a server's entry names a sealed secret (then it starts only once the secrets are read). */
export function hasSecretRefs(config: ServerConfig): boolean {
  return refHolders(config).some((text) => secretRefsIn(text).length > 0) || hasPersonSecrets(config)
}

/** The local user's secret store, read as a lookup (opened on the first secret a child needs). */
export function userSecrets(env: Record<string, string | undefined> = process.env): SecretLookup {
  let store: SecretStore | undefined
  return (name) => (store ??= SecretStore.forUser(env)).value(name)
}

/**
 * The entry a child is started with: every `${secret:NAME}` replaced by the
 * value this machine keeps (`machine`, the local person's), and every
 * `{ "secret": "NAME" }` of `env` by the value `person` keeps. Throws an
 * error naming each secret that is not kept and the fix (a person's own:
 * MissingSecretError). The entry as configured is unchanged (it stays what
 * a reload compares).
 */
export async function withSecrets(
  config: ServerConfig,
  machine: SecretLookup,
  person?: PersonSecrets,
): Promise<ServerConfig> {
  // This machine's first, then the person's: a person's value is put in as it is, never read for references.
  return fillPersonSecrets(await fillMachineSecrets(config, machine), person)
}

/** Every `${secret:NAME}` of an entry replaced by this machine's value (an error naming every one not kept). */
async function fillMachineSecrets(config: ServerConfig, machine: SecretLookup): Promise<ServerConfig> {
  const names = [...new Set(refHolders(config).flatMap(secretRefsIn))]
  if (names.length === 0) return config
  const values = new Map<string, string>()
  const missing: string[] = []
  for (const name of names) {
    const value = await machine(name)
    if (value === undefined) missing.push(name)
    else values.set(name, value)
  }
  if (missing.length > 0)
    throw new Error(
      `${missing.length === 1 ? 'secret' : 'secrets'} ${missing.map((n) => `"${n}"`).join(', ')} not kept on this machine (myc add keeps them in the sealed secret store of your user config folder): run myc add for this server here, or write \${VARIABLE} in place of \${secret:…} and export the variable`,
    )
  const fill = (text: string) => replaceSecretRefs(text, (name) => values.get(name)!)
  if (config.type !== 'stdio')
    return { ...config, headers: Object.fromEntries(Object.entries(config.headers).map(([k, v]) => [k, fill(v)])) }
  const env = Object.fromEntries(Object.entries(config.env).map(([k, v]) => [k, typeof v === 'string' ? fill(v) : v]))
  return { ...config, args: config.args.map(fill), env }
}

/** `{ "secret": "NAME" }` values of a stdio entry's `env`, filled from `person`'s secrets (a MissingSecretError naming every one not kept). */
async function fillPersonSecrets(config: ServerConfig, person: PersonSecrets | undefined): Promise<ServerConfig> {
  if (config.type !== 'stdio') return config
  const wanted = Object.entries(config.env).filter(([, v]) => typeof v !== 'string')
  if (wanted.length === 0) return config
  if (!person) throw new Error("its env names a person's own secret, and this process runs for no one")
  const env: Record<string, string> = {}
  const missing: string[] = []
  for (const [key, value] of Object.entries(config.env)) {
    if (typeof value === 'string') env[key] = value
    else {
      const kept = await person.lookup(value.secret)
      if (kept === undefined) missing.push(value.secret)
      else env[key] = kept
    }
  }
  if (missing.length > 0) {
    const unique = [...new Set(missing)]
    throw new MissingSecretError(person.person, unique, unique.map((n) => person.fix(n)).join('; '))
  }
  return { ...config, env }
}

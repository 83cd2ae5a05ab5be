import type { ServerConfig } from '../config/schema.js'
import { replaceSecretRefs, secretRefsIn } from '../config/expand-env.js'
import { SecretStore } from '../oauth/secret-store.js'

/** Where a child's `${secret:NAME}` values come from: the value, or undefined when none is kept. */
export type SecretLookup = (name: string) => Promise<string | undefined>

/** The strings of a server's entry that may hold `${secret:NAME}` (config/expand-env.ts, isSecretRefPath). */
function refHolders(config: ServerConfig): string[] {
  return config.type === 'stdio' ? [...config.args, ...Object.values(config.env)] : Object.values(config.headers)
}

/** Whether a server's entry names a sealed secret (then it starts only once the secrets are read). */
export function hasSecretRefs(config: ServerConfig): boolean {
  return refHolders(config).some((text) => secretRefsIn(text).length > 0)
}

/** The local user's secret store, read as a lookup (opened on the first secret a child needs). */
export function userSecrets(env: Record<string, string | undefined> = process.env): SecretLookup {
  let store: SecretStore | undefined
  return (name) => (store ??= SecretStore.forUser(env)).value(name)
}

/**
 * The entry a child is started with: every `${secret:NAME}` replaced by the
 * secret's value. Throws an error naming each secret that is not kept here
 * and the fix. The entry as configured is unchanged (it stays what a reload
 * compares).
 */
export async function withSecrets(config: ServerConfig, lookup: SecretLookup): Promise<ServerConfig> {
  const names = [...new Set(refHolders(config).flatMap(secretRefsIn))]
  if (names.length === 0) return config
  const values = new Map<string, string>()
  const missing: string[] = []
  for (const name of names) {
    const value = await lookup(name)
    if (value === undefined) missing.push(name)
    else values.set(name, value)
  }
  if (missing.length > 0)
    throw new Error(
      `${missing.length === 1 ? 'secret' : 'secrets'} ${missing.map((n) => `"${n}"`).join(', ')} not kept on this machine (myc add keeps them in the sealed secret store of your user config folder): run myc add for this server here, or write \${VARIABLE} in place of \${secret:…} and export the variable`,
    )
  const fill = (text: string) => replaceSecretRefs(text, (name) => values.get(name)!)
  const fillAll = (map: Record<string, string>) => Object.fromEntries(Object.entries(map).map(([k, v]) => [k, fill(v)]))
  return config.type === 'stdio'
    ? { ...config, args: config.args.map(fill), env: fillAll(config.env) }
    : { ...config, headers: fillAll(config.headers) }
}

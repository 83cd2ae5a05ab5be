import { secretRef } from '../config/expand-env.js'
import { SecretStore } from '../oauth/secret-store.js'
import { literal, type SecretMode, type SecretPlan } from './build-entry.js'

/** How one secret of an added server was kept, for the person (never its value). */
export interface KeptSecret {
  /** The flag that gave it (`--env BRAVE_API_KEY`). */
  what: string
  /** `sealed`: in this machine's secret store as `name`; `export`: the person exports `variable`. */
  kept: SecretMode
  name?: string
  variable?: string
}

/** Every string inside `value` passed through `fn`. */
function mapStrings<T>(value: T, fn: (text: string) => string): T {
  if (typeof value === 'string') return fn(value) as T
  if (Array.isArray(value)) return value.map((v: unknown) => mapStrings(v, fn)) as T
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, fn)])) as T
  return value
}

/** The entry a trial start runs: each secret's reference replaced by its value (as a literal of the config). */
export function withSecretValues<T>(entry: T, secrets: readonly SecretPlan[]): T {
  return mapStrings(entry, (text) => secrets.reduce((t, s) => t.split(s.ref).join(literal(s.value)), text))
}

/**
 * Keeps an entry's secrets: sealed in the user's secret store (under its
 * name, or `name-2`… when that name holds another value already, the entry's
 * references renamed to match), or left to the person to export. Resolves
 * to the entry as it is to be written and what became of each secret.
 */
export async function keepSecrets<T>(
  entry: T,
  secrets: readonly SecretPlan[],
  mode: SecretMode,
  env: Record<string, string | undefined>,
): Promise<{ entry: T; kept: KeptSecret[] }> {
  if (mode === 'export') return { entry, kept: planned(secrets, mode) }
  const store = SecretStore.forUser(env)
  const kept: KeptSecret[] = []
  let written = entry
  for (const secret of secrets) {
    const name = await store.keep(secret.name, secret.value)
    if (name !== secret.name) written = mapStrings(written, (t) => t.split(secret.ref).join(secretRef(name)))
    kept.push({ what: secret.what, kept: 'sealed', name })
  }
  return { entry: written, kept }
}

/** What would become of each secret (a dry run): its name in the store, or the variable to export. */
export function planned(secrets: readonly SecretPlan[], mode: SecretMode): KeptSecret[] {
  return secrets.map((s) =>
    mode === 'sealed'
      ? { what: s.what, kept: 'sealed', name: s.name }
      : { what: s.what, kept: 'export', variable: s.variable },
  )
}

/** The environment the written config is checked with: the variables to export given stand-in values. */
export function withExported(env: Record<string, string | undefined>, kept: readonly KeptSecret[]) {
  const out = { ...env }
  for (const k of kept) if (k.variable !== undefined) out[k.variable] ??= 'exported-later'
  return out
}

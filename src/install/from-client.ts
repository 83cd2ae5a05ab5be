import { MycError } from '../errors.js'
import { secretFor, type SecretMode, type SecretPlan } from './build-entry.js'
import { readClientServers, type ClientName, type ImportedServer, type Place } from './client-configs.js'
import { configTarget, writeAdded, type AddContext, type ConfigTarget } from './config-target.js'
import { keepSecrets, planned, withExported, withSecretValues, type KeptSecret } from './keep-secrets.js'
import { checkKey } from './server-key.js'
import { trialStart } from './trial.js'

export interface ImportRequest extends AddContext {
  client: ClientName
  place: Place
}

/** One server imported (or that would be, with --dry-run). */
interface Imported {
  key: string
  from: string
  entry: Record<string, unknown>
  tools: string[]
  secrets: KeptSecret[]
}

export interface ImportResult {
  client: ClientName
  /** The client's config files read. */
  files: string[]
  /** The config written (or that would be). */
  file: string
  added: Imported[]
  skipped: { name: string; from: string; why: string }[]
  dryRun: boolean
}

/** A client's server name as a config key: its characters outside the key's kept as `-`. */
function keyOf(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '')
}

/** A value with a `${VAR}` or `$VAR` in it refers to the environment; any other is kept as a secret. */
const refersToEnvironment = (text: string) => /\$(\{[A-Za-z_]|[A-Za-z_])/.test(text.replaceAll('$$', ''))

/** An entry with each literal value of its `env` and `headers` (the config's secrets) made a reference. */
function withSecretRefs(key: string, entry: Record<string, unknown>, mode: SecretMode) {
  const secrets: SecretPlan[] = []
  const out: Record<string, unknown> = { ...entry }
  for (const field of ['env', 'headers'] as const) {
    const map = entry[field] as Record<string, string> | undefined
    if (!map) continue
    out[field] = Object.fromEntries(
      Object.entries(map).map(([name, text]) => {
        if (refersToEnvironment(text)) return [name, text]
        const plan = secretFor(key, field === 'env' ? 'env' : 'header', name, text.replaceAll('$$', '$'), mode)
        secrets.push(plan)
        return [name, plan.ref]
      }),
    )
  }
  return { entry: out, secrets }
}

/**
 * `myc add --from-client CLIENT`: the servers of an installed client's
 * config, each under its name (one whose key is taken, or that is myc
 * itself, is skipped with why), its env and header values kept as secrets,
 * all started once; those that start are written (and pinned), the others
 * reported. None starting is an error, and then nothing is written.
 */
export async function importFromClient(request: ImportRequest): Promise<ImportResult> {
  const target = await configTarget(request)
  const read = await readClientServers(request.client, request.place)
  const skipped = [...read.skipped]
  const toImport = plan(read.servers, target, request.secrets, skipped)
  const base = { client: request.client, files: read.files, file: target.file, skipped, dryRun: request.dryRun }
  if (request.dryRun || toImport.length === 0)
    return {
      ...base,
      added: toImport.map((p) => ({ ...p.imported, tools: [], secrets: planned(p.secrets, request.secrets) })),
    }
  const outcomes = await trialStart({
    entries: new Map(toImport.map((p) => [p.imported.key, withSecretValues(p.imported.entry, p.secrets)])),
    configFile: target.file,
    env: request.env,
    host: request.host,
    logger: request.logger,
  })
  const added: Imported[] = []
  for (const p of toImport) {
    const outcome = outcomes.get(p.imported.key)!
    if (!outcome.ok) {
      skipped.push({ name: p.name, from: p.imported.from, why: `it did not start: ${outcome.why}` })
      continue
    }
    const kept = await keepSecrets(p.imported.entry, p.secrets, request.secrets, request.env)
    added.push({ ...p.imported, entry: kept.entry, secrets: kept.kept, tools: outcome.tools.map((t) => t.name) })
  }
  if (added.length === 0)
    throw new MycError(
      'child_failed',
      `none of the ${request.client} servers started, so nothing was written: ${skipped.map((s) => `${s.name}: ${s.why}`).join('; ')}`,
    )
  const written = added.map((a) => {
    const outcome = outcomes.get(a.key)!
    return {
      key: a.key,
      entry: a.entry,
      tools: outcome.ok ? outcome.tools : [],
      prompts: outcome.ok ? outcome.prompts : [],
    }
  })
  await writeAdded(
    target,
    written,
    withExported(
      request.env,
      added.flatMap((a) => a.secrets),
    ),
    request.logger,
  )
  return { ...base, added }
}

/** The servers to import, each with its key checked (and one key once), and its secrets planned. */
function plan(
  servers: readonly ImportedServer[],
  target: ConfigTarget,
  mode: SecretMode,
  skipped: ImportResult['skipped'],
) {
  const out: { name: string; imported: Omit<Imported, 'tools' | 'secrets'>; secrets: SecretPlan[] }[] = []
  for (const server of servers) {
    const key = keyOf(server.name)
    try {
      checkKey(key, target.config, target.file, `the key "${key}"`)
      if (out.some((o) => o.imported.key.toLowerCase() === key.toLowerCase()))
        throw new Error(`another of its servers is named "${key}" already`)
    } catch (error) {
      skipped.push({ name: server.name, from: server.from, why: (error as Error).message })
      continue
    }
    const { entry, secrets } = withSecretRefs(key, server.entry, mode)
    out.push({ name: server.name, imported: { key, from: server.from, entry }, secrets })
  }
  return out
}

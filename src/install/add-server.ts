import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { homeFolder } from '../config/state-roots.js'
import { MycError, usageError } from '../errors.js'
import { answerSlots, type Given } from './answers.js'
import { buildEntry } from './build-entry.js'
import { choose } from './choose.js'
import { configTarget, writeAdded, type AddContext } from './config-target.js'
import { keepSecrets, planned, withExported, withSecretValues, type KeptSecret } from './keep-secrets.js'
import { RegistryClient } from './registry-client.js'
import { checkRuntime, type PackageKind } from './runtimes.js'
import { checkKey, keyFor } from './server-key.js'
import { parseServerJson, type ServerJson } from './server-json.js'
import type { Slot } from './slots.js'
import { slotsFor } from './slots.js'
import { trialFailed, trialStart } from './trial.js'

/** A registry name: a reverse-DNS namespace, one `/`, a name (the registry's own pattern). */
const REGISTRY_NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/

export interface AddRequest extends AddContext {
  /** `NAME[@VERSION]` in the registry, or the path of a server.json. */
  source: string
  key?: string | undefined
  given: Given
  forced?: PackageKind | undefined
  yes: boolean
  /** Asks a person for a slot's value (there is a terminal). */
  ask?: ((slot: Slot) => Promise<string>) | undefined
  fetch?: typeof fetch
}

export interface AddResult {
  key: string
  /** The config file written (or that would be, with --dry-run). */
  file: string
  name: string
  version: string
  kind: PackageKind
  /** The entry as written: secrets as references. */
  entry: Record<string, unknown>
  /** What the trial start listed (none with --dry-run). */
  tools: { name: string; description?: string | undefined }[]
  secrets: KeptSecret[]
  dryRun: boolean
  /** Said when --dry-run chose a package that would not run here. */
  warning?: string | undefined
}

/** Whether a source names a server.json file rather than a registry name. */
function isFileSource(source: string): boolean {
  return /\.json$/i.test(source) || /^(\.{1,2}[\\/]|[\\/]|~|[A-Za-z]:[\\/])/.test(source)
}

/** `NAME[@VERSION]`, checked: a usage error names the form. */
export function parseSource(source: string): { name: string; version: string | undefined } {
  const at = source.indexOf('@')
  const name = at === -1 ? source : source.slice(0, at)
  const version = at === -1 ? undefined : source.slice(at + 1)
  if (!REGISTRY_NAME.test(name))
    throw usageError(
      `"${source}" is not a registry name: one is NAMESPACE/NAME, such as io.github.user/weather (myc search finds them), optionally @VERSION; or give the path of a server.json`,
    )
  if (version !== undefined && (version === '' || /[\s/]/.test(version)))
    throw usageError(`"${source}": the version after @ is missing or malformed (io.github.user/weather@1.2.0)`)
  return { name, version: version === 'latest' ? undefined : version }
}

/**
 * `myc add`: reads a server's server.json (the registry's, or a file),
 * chooses how it runs, fills what it leaves open, starts it once to list its
 * tools, and only then keeps its secrets and writes its entry into the
 * config (and pins it, once the lock file exists). With --dry-run, the
 * entry is returned and nothing is started or written.
 */
export async function addServer(request: AddRequest): Promise<AddResult> {
  const target = await configTarget(request)
  const server = await readServer(request, target.config.registry.url)
  const { candidate, warning } = await choose(server, {
    forced: request.forced,
    check: (kind) => checkRuntime(kind, request.host),
    dryRun: request.dryRun,
  })
  const key = request.key ?? keyFor(server.name)
  checkKey(
    key,
    target.config,
    target.file,
    request.key !== undefined ? `--key "${key}"` : `the key derived from its name ("${key}")`,
  )
  const answers = await answerSlots(slotsFor(candidate), {
    given: request.given,
    yes: request.yes,
    dryRun: request.dryRun,
    ask: request.ask,
    headers: candidate.kind === 'remote',
  })
  const built = buildEntry(candidate, answers, key, request.secrets)
  const base = { key, file: target.file, name: server.name, version: server.version, kind: candidate.kind }
  if (request.dryRun)
    return {
      ...base,
      entry: built.entry,
      tools: [],
      secrets: planned(built.secrets, request.secrets),
      dryRun: true,
      warning,
    }
  request.logger.info(`starting ${server.name} ${server.version} (${candidate.kind}) once to list its tools…`)
  const outcome = (
    await trialStart({
      entries: new Map([[key, withSecretValues(built.entry, built.secrets)]]),
      configFile: target.file,
      env: request.env,
      host: request.host,
      logger: request.logger,
    })
  ).get(key)!
  if (!outcome.ok) throw trialFailed(`${server.name} ${server.version}`, outcome.why)
  const { entry, kept } = await keepSecrets(built.entry, built.secrets, request.secrets, request.env)
  await writeAdded(
    target,
    [{ key, entry, tools: outcome.tools, prompts: outcome.prompts }],
    withExported(request.env, kept),
    request.logger,
  )
  const tools = outcome.tools.map((t) => ({ name: t.name, description: t.description }))
  return { ...base, entry, tools, secrets: kept, dryRun: false }
}

/** The server.json of a request: a file's, or the registry's for NAME@VERSION (the latest without one). */
async function readServer(request: AddRequest, registryUrl: string): Promise<ServerJson> {
  if (!isFileSource(request.source)) {
    const { name, version } = parseSource(request.source)
    return new RegistryClient(registryUrl, request.fetch).version(name, version ?? 'latest')
  }
  const file = path.resolve(request.cwd, request.source.replace(/^~(?=[\\/])/, homeFolder(request.env)))
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw usageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
  }
  let document: unknown
  try {
    document = JSON.parse(text)
  } catch (error) {
    throw new MycError('usage', `${file} is not JSON: ${(error as Error).message}`)
  }
  const parsed = parseServerJson(document)
  if (!parsed.ok) throw new MycError('usage', `${file} is not a server.json: ${parsed.problem}`)
  return parsed.value
}

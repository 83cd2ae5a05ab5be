import { MycError } from '../errors.js'
import { isObject } from '../protocol/facts.js'
import { canonicalJson, digestOf, type PinKind, type PinnedDefinition } from './definitions.js'

/**
 * The definition lock, `mycelium.lock.json` beside the config (docs/pinning.md):
 * per server, each tool's and prompt's pinned definition and its digest.
 * Pure: text in, lock out, and back; the file is lock-file.ts's.
 */

const LOCKFILE_VERSION = 1

export interface LockEntry {
  /** `sha256:<hex>` of the definition's canonical JSON. */
  digest: string
  /** The pinned fields, as they were approved: what a review reads and a diff is made from. */
  definition: PinnedDefinition
}

/** One server's pinned tools and prompts, by the child's own names. */
export interface ServerPins {
  tools: ReadonlyMap<string, LockEntry>
  prompts: ReadonlyMap<string, LockEntry>
}

export interface DefinitionLock {
  servers: ReadonlyMap<string, ServerPins>
}

/** The lock's key for each kind. */
export const LIST_OF: Readonly<Record<PinKind, 'tools' | 'prompts'>> = { tool: 'tools', prompt: 'prompts' }

export function emptyLock(): DefinitionLock {
  return { servers: new Map() }
}

const DIGEST = /^sha256:[0-9a-f]{64}$/
const REWRITE = 'run `myc pin` to review what the servers offer and write the lock again'

/**
 * Reads a lock's text. Throws MycError('config_invalid') naming the file,
 * the key path and the fix: bad JSON (a merge's conflict markers), a
 * version this myc does not know, a malformed entry, or an entry whose
 * digest is not its definition's (a review would read one text while
 * another is approved).
 */
export function parseLock(text: string, file: string): DefinitionLock {
  let raw: unknown
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''))
  } catch (error) {
    throw new MycError('config_invalid', `Invalid JSON in ${file}: ${(error as Error).message}`, {
      fix: `resolve any merge conflict in it, or delete it and ${REWRITE}`,
    })
  }
  const at = (where: string, message: string) =>
    new MycError('config_invalid', `${file}: ${where}: ${message}`, { fix: REWRITE })
  if (!isObject(raw)) throw at('(top)', 'must be an object { "lockfileVersion": 1, "servers": { … } }')
  if (raw.lockfileVersion !== LOCKFILE_VERSION)
    throw at(
      'lockfileVersion',
      `must be ${LOCKFILE_VERSION} (got ${JSON.stringify(raw.lockfileVersion) ?? 'nothing'}); a newer myc wrote it, or it was edited`,
    )
  if (!isObject(raw.servers)) throw at('servers', 'must be an object of server keys')
  const servers = new Map<string, ServerPins>()
  for (const [server, pins] of Object.entries(raw.servers)) {
    if (!isObject(pins)) throw at(`servers.${server}`, 'must be an object { "tools": { … }, "prompts": { … } }')
    servers.set(server, {
      tools: parseEntries(pins.tools, 'tool', `servers.${server}.tools`, at),
      prompts: parseEntries(pins.prompts, 'prompt', `servers.${server}.prompts`, at),
    })
  }
  return { servers }
}

function parseEntries(
  raw: unknown,
  kind: PinKind,
  where: string,
  at: (where: string, message: string) => MycError,
): Map<string, LockEntry> {
  const entries = new Map<string, LockEntry>()
  if (raw === undefined) return entries
  if (!isObject(raw)) throw at(where, `must be an object of ${kind} names`)
  for (const [name, entry] of Object.entries(raw)) {
    const path = `${where}.${name}`
    if (!isObject(entry)) throw at(path, 'must be an object { "definition": { … }, "digest": "sha256:…" }')
    const { digest, definition } = entry
    if (typeof digest !== 'string' || !DIGEST.test(digest))
      throw at(`${path}.digest`, 'must be "sha256:" and 64 hex digits')
    if (!isObject(definition) || definition.name !== name)
      throw at(`${path}.definition`, `must be the ${kind}'s definition, with "name": ${JSON.stringify(name)}`)
    if (digestOf(definition) !== digest)
      throw at(path, 'its digest is not the digest of its definition (was one of them edited by hand?)')
    entries.set(name, { digest, definition })
  }
  return entries
}

/** A lock's text: keys sorted at every depth, two-space indent, one line per field, so a review shows what changed. */
export function lockText(lock: DefinitionLock): string {
  const servers: Record<string, unknown> = {}
  for (const [server, pins] of lock.servers)
    servers[server] = { tools: Object.fromEntries(pins.tools), prompts: Object.fromEntries(pins.prompts) }
  return `${canonicalJson({ lockfileVersion: LOCKFILE_VERSION, servers }, 2)}\n`
}

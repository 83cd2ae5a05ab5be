import { digestOf, pinnedDefinition, type PinKind, type PinnedDefinition } from './definitions.js'
import { hiddenTextOf, type HiddenTextKind } from './hidden-text.js'
import { LIST_OF, type DefinitionLock, type LockEntry, type ServerPins } from './lock.js'

/** What one running child offers now: its tool and prompt definitions as it listed them. */
export interface Offered {
  tools: readonly object[]
  prompts: readonly object[]
}

/** One difference between what a child offers and the lock. */
export interface LockChange {
  server: string
  kind: PinKind
  name: string
  change: 'added' | 'changed' | 'removed'
  /** The pinned definition (changed, removed). */
  before?: PinnedDefinition
  /** The offered definition (added, changed). */
  after?: PinnedDefinition
}

/** A tool or prompt withheld for its hidden text: never pinned, never compared. */
export interface HiddenItem {
  server: string
  kind: PinKind
  name: string
  text: HiddenTextKind[]
}

export interface LockComparison {
  changes: LockChange[]
  hidden: HiddenItem[]
}

export interface CompareOptions {
  /** Whether a server's config allows hidden text (`dangerouslyAllowHiddenText`). */
  allowsHiddenText: (server: string) => boolean
  /** Servers that offer nothing now but keep their pins (disabled, or not started): neither compared nor dropped. */
  kept: ReadonlySet<string>
}

interface Judged {
  name: string
  pinned: PinnedDefinition
  digest: string
  hidden: HiddenTextKind[]
}

/** A child's definitions of one kind by name (the first of two with one name, as the catalogue keeps), judged. */
function judgeAll(kind: PinKind, defs: readonly object[]): Map<string, Judged> {
  const out = new Map<string, Judged>()
  for (const def of defs) {
    const name = (def as { name?: unknown }).name
    if (typeof name !== 'string' || out.has(name)) continue
    const pinned = pinnedDefinition(kind, def)
    out.set(name, { name, pinned, digest: digestOf(pinned), hidden: hiddenTextOf(pinned) })
  }
  return out
}

const KINDS: readonly PinKind[] = ['tool', 'prompt']

/**
 * What differs between the running children and the lock (`myc pin
 * --check`): a definition the lock lacks is `added`, one whose digest
 * differs `changed`, one the lock has and the child no longer offers
 * `removed` (so is every entry of a server no longer configured). Items
 * with hidden text are reported apart and never compared: they are
 * withheld whatever the lock says.
 */
export function compareToLock(
  lock: DefinitionLock | undefined,
  offered: ReadonlyMap<string, Offered>,
  options: CompareOptions,
): LockComparison {
  const result: LockComparison = { changes: [], hidden: [] }
  for (const [server, lists] of offered)
    for (const kind of KINDS) compareKind(server, kind, lists, lock?.servers.get(server), options, result)
  for (const [server, pins] of lock?.servers ?? [])
    if (!offered.has(server) && !options.kept.has(server))
      for (const kind of KINDS)
        for (const [name, entry] of pins[LIST_OF[kind]])
          result.changes.push({ server, kind, name, change: 'removed', before: entry.definition })
  return result
}

function compareKind(
  server: string,
  kind: PinKind,
  lists: Offered,
  pins: ServerPins | undefined,
  options: CompareOptions,
  result: LockComparison,
): void {
  const pinned = pins?.[LIST_OF[kind]] ?? new Map<string, LockEntry>()
  const current = judgeAll(kind, lists[LIST_OF[kind]])
  const allowed = options.allowsHiddenText(server)
  for (const item of current.values()) {
    const entry = pinned.get(item.name)
    if (item.hidden.length > 0 && !allowed) result.hidden.push({ server, kind, name: item.name, text: item.hidden })
    else if (!entry) result.changes.push({ server, kind, name: item.name, change: 'added', after: item.pinned })
    else if (entry.digest !== item.digest)
      result.changes.push({
        server,
        kind,
        name: item.name,
        change: 'changed',
        before: entry.definition,
        after: item.pinned,
      })
  }
  for (const [name, entry] of pinned)
    if (!current.has(name)) result.changes.push({ server, kind, name, change: 'removed', before: entry.definition })
}

/**
 * The lock after pinning what the children offer now (`myc pin`): each
 * offered server's entries are what it offers, but for items with hidden
 * text (never approved: an entry they had stays as it was, so the old
 * definition comes back if the child returns to it); kept servers keep
 * theirs; any other server's entries go.
 */
export function recordOffered(
  lock: DefinitionLock | undefined,
  offered: ReadonlyMap<string, Offered>,
  options: CompareOptions,
): { lock: DefinitionLock; hidden: HiddenItem[] } {
  const servers = new Map<string, ServerPins>()
  const hidden: HiddenItem[] = []
  for (const [server, pins] of lock?.servers ?? []) if (options.kept.has(server)) servers.set(server, pins)
  for (const [server, lists] of offered) {
    const before = lock?.servers.get(server)
    const allowed = options.allowsHiddenText(server)
    const record = (kind: PinKind) => {
      const entries = new Map<string, LockEntry>()
      for (const item of judgeAll(kind, lists[LIST_OF[kind]]).values()) {
        if (item.hidden.length > 0 && !allowed) {
          hidden.push({ server, kind, name: item.name, text: item.hidden })
          const old = before?.[LIST_OF[kind]].get(item.name)
          if (old) entries.set(item.name, old)
        } else entries.set(item.name, { digest: item.digest, definition: item.pinned })
      }
      return entries
    }
    servers.set(server, { tools: record('tool'), prompts: record('prompt') })
  }
  return { lock: { servers: new Map([...servers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) }, hidden }
}

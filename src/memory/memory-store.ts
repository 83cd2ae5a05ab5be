import { randomBytes } from 'node:crypto'
import { mkdir, readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import type { AuditSink } from '../audit.js'
import { withFileLock, writeFileAtomic } from './atomic-file.js'
import {
  parseMemoryFile,
  renderMemoryFile,
  type MemoryEntry,
  type MemoryProblem,
  type MemoryType,
} from './memory-file.js'
import { isRoleName, ROLE_NAME_RULE } from '../config/role-name.js'
import { MycError } from '../errors.js'

/** One role's memory as read from disk. */
export interface RoleMemory {
  role: string
  file: string
  exists: boolean
  entries: MemoryEntry[]
  kept: string[]
  problems: MemoryProblem[]
  /** Size of the file in bytes (0 when it does not exist). */
  bytes: number
}

export interface MemoryStoreOptions {
  /** The folder of `<role>.memory.md` files (absolute). */
  dir: string
  maxEntryBytes: number
  maxRoleBytes: number
  audit?: AuditSink
  now?: () => Date
}

export interface NewEntry {
  content: string
  type: MemoryType
  tags: readonly string[]
}

export type SaveResult = { ok: true; entry: MemoryEntry } | { ok: false; error: string }

/** What `recall` filters by (all optional). */
export interface MemoryQuery {
  query?: string
  type?: MemoryType
  tags?: readonly string[]
  limit?: number
}

const SUFFIX = '.memory.md'

/** The words of a text, lower-cased (letters, digits and `_`, any script). */
function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter(Boolean)
}

/**
 * The entries that match, newest first (pure). Every query word must begin
 * a word of the entry's content or tags, case-insensitively ("deploy"
 * matches "Deployment", not "redeploy"); an empty query matches all. Every
 * tag asked for must be on the entry.
 */
export function matchEntries(entries: readonly MemoryEntry[], q: MemoryQuery): MemoryEntry[] {
  const wanted = words(q.query ?? '')
  const tags = (q.tags ?? []).map((t) => t.toLowerCase())
  const out = entries.filter((e) => {
    if (q.type && e.type !== q.type) return false
    const own = e.tags.map((t) => t.toLowerCase())
    if (!tags.every((t) => own.includes(t))) return false
    if (wanted.length === 0) return true
    const have = [...words(e.content), ...own.flatMap(words)]
    return wanted.every((w) => have.some((h) => h.startsWith(w)))
  })
  out.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))
  return q.limit !== undefined ? out.slice(0, q.limit) : out
}

/** A role name that is safe as a file name, or an error saying the rule. */
function memoryFileOf(dir: string, role: string): string {
  if (!isRoleName(role)) throw new Error(`"${role}" is not a role name: ${ROLE_NAME_RULE}`)
  return path.join(dir, `${role}${SUFFIX}`)
}

/**
 * Role memory on disk: one Markdown file per role. Writes are atomic,
 * serialized within the process (per role) and locked across processes,
 * and re-read under the lock, so concurrent savers lose nothing. Reads are
 * cached by the file's identity and size and parsed again when it changes.
 */
export class MemoryStore {
  private readonly chains = new Map<string, Promise<unknown>>()
  private readonly cache = new Map<string, { key: string; memory: RoleMemory }>()

  constructor(private readonly options: MemoryStoreOptions) {}

  get dir(): string {
    return this.options.dir
  }

  get limits(): { maxEntryBytes: number; maxRoleBytes: number } {
    return { maxEntryBytes: this.options.maxEntryBytes, maxRoleBytes: this.options.maxRoleBytes }
  }

  private now(): string {
    return (this.options.now?.() ?? new Date()).toISOString()
  }

  /** The roles that have a memory file, in name order (none when the folder does not exist; an unreadable folder throws {@link unreadable}). */
  async roles(): Promise<string[]> {
    let names: string[]
    try {
      names = await readdir(this.options.dir)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw unreadable('folder', this.options.dir, error)
    }
    return names
      .filter((n) => n.endsWith(SUFFIX))
      .map((n) => n.slice(0, -SUFFIX.length))
      .filter(isRoleName)
      .sort()
  }

  /** A role's memory (empty when it has no file). Throws for a name that is not a role name. */
  async read(role: string): Promise<RoleMemory> {
    const file = memoryFileOf(this.options.dir, role)
    let info: { ino: number; mtimeMs: number; size: number }
    try {
      info = await stat(file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        // The folder is the likelier culprit (not a folder, no permission): named as `roles()` names it.
        await this.roles()
        throw unreadable('file', file, error)
      }
      return { role, file, exists: false, entries: [], kept: [], problems: [], bytes: 0 }
    }
    const key = `${info.ino}:${info.mtimeMs}:${info.size}`
    const cached = this.cache.get(role)
    if (cached?.key === key) return cached.memory
    const text = await readFile(file, 'utf8').catch((error: unknown) => {
      throw unreadable('file', file, error)
    })
    const parsed = parseMemoryFile(text, role, new Date(info.mtimeMs).toISOString())
    const memory: RoleMemory = { role, file, exists: true, ...parsed, bytes: Buffer.byteLength(text) }
    this.cache.set(role, { key, memory })
    return memory
  }

  /** Entries of these roles matching the query, newest first. */
  async recall(roles: readonly string[], q: MemoryQuery): Promise<MemoryEntry[]> {
    const all = await Promise.all(roles.map((r) => this.read(r)))
    return matchEntries(
      all.flatMap((m) => m.entries),
      q,
    )
  }

  /** Adds an entry to a role's memory; refused (not truncated) when it or the file would be too big. */
  async save(role: string, input: NewEntry, by: 'agent' | 'operator'): Promise<SaveResult> {
    const bytes = Buffer.byteLength(input.content)
    if (bytes > this.options.maxEntryBytes) {
      return {
        ok: false,
        error: `The entry is ${formatBytes(bytes)}; the most one entry may hold is ${formatBytes(this.options.maxEntryBytes)} (memory.maxEntryBytes). Save a shorter summary, or split it.`,
      }
    }
    const file = memoryFileOf(this.options.dir, role)
    return this.serialized(role, () =>
      withFileLock(`${file}.lock`, async () => {
        const current = await this.read(role)
        const now = this.now()
        const entry: MemoryEntry = {
          id: newId(new Set(current.entries.map((e) => e.id))),
          role,
          type: input.type,
          tags: [...input.tags],
          createdAt: now,
          content: input.content,
        }
        const text = renderMemoryFile(role, [...current.entries, entry], current.kept, now)
        const size = Buffer.byteLength(text)
        if (size > this.options.maxRoleBytes) {
          return {
            ok: false as const,
            error: `The memory of role ${role} would grow to ${formatBytes(size)}; it may hold ${formatBytes(this.options.maxRoleBytes)} (memory.maxRoleBytes). Forget old entries (myc memory forget ${role} ID) or raise the limit.`,
          }
        }
        await writeFileAtomic(file, text)
        this.options.audit?.write({ event: 'memory_saved', role, id: entry.id, type: entry.type, bytes, by })
        return { ok: true as const, entry }
      }),
    )
  }

  /** Removes an entry; false when the role has no entry with that id. */
  async forget(role: string, id: string, by: 'agent' | 'operator'): Promise<boolean> {
    const file = memoryFileOf(this.options.dir, role)
    return this.serialized(role, () =>
      withFileLock(`${file}.lock`, async () => {
        const current = await this.read(role)
        const entry = current.entries.find((e) => e.id === id)
        if (!entry) return false
        await writeFileAtomic(
          file,
          renderMemoryFile(
            role,
            current.entries.filter((e) => e !== entry),
            current.kept,
            this.now(),
          ),
        )
        this.options.audit?.write({
          event: 'memory_forgotten',
          role,
          id,
          type: entry.type,
          bytes: Buffer.byteLength(entry.content),
          by,
        })
        return true
      }),
    )
  }

  /** One write at a time per role within this process (the lock file orders processes). */
  private serialized<T>(role: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(role) ?? Promise.resolve()
    const next = previous.then(async () => {
      await mkdir(this.options.dir, { recursive: true })
      return fn()
    })
    const settled = next.catch(() => {})
    this.chains.set(role, settled)
    void settled.then(() => {
      if (this.chains.get(role) === settled) this.chains.delete(role)
    })
    return next
  }
}

function newId(taken: ReadonlySet<string>): string {
  for (;;) {
    const id = `mem_${randomBytes(9).toString('base64url')}`
    if (!taken.has(id)) return id
  }
}

/**
 * A memory folder or file that exists but cannot be read: one error, said
 * the same way by every reader (`myc memory list`, `show`, the memory tools).
 */
function unreadable(what: 'folder' | 'file', where: string, error: unknown): MycError {
  const code = (error as NodeJS.ErrnoException).code
  const reason =
    code === 'EACCES' || code === 'EPERM'
      ? 'permission denied'
      : code === 'EISDIR'
        ? 'it is a folder, not a file'
        : code === 'ENOTDIR'
          ? 'a part of its path is a file, not a folder'
          : error instanceof Error
            ? error.message
            : String(error)
  const fix =
    code === 'EACCES' || code === 'EPERM'
      ? `give the user running myc read and write access to it`
      : `move it away: myc keeps one \`<role>.memory.md\` file per role in the folder \`memory.dir\``
  return new MycError(
    'runtime',
    `memory ${what} ${where} cannot be read (${reason}${code !== undefined && !reason.includes(code) ? `, ${code}` : ''})`,
    { cause: error, fix },
  )
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024
    ? `${(n / 1024 / 1024).toFixed(1)} MiB`
    : n >= 1024
      ? `${(n / 1024).toFixed(1)} KiB`
      : `${n} bytes`
}

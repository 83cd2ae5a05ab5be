import type { CallToolResult, Tool } from '@modelcontextprotocol/client'
import { mayRead, type MemoryAccess } from '../policy/memory-access.js'
import { MEMORY_TYPES, type MemoryEntry, type MemoryType } from './memory-file.js'
import type { MemoryStore } from './memory-store.js'
import { isRoleName } from '../config/role-name.js'

export type MemoryToolName = 'save_memory' | 'recall_memory' | 'list_memories'

const typeSchema = { type: 'string', enum: [...MEMORY_TYPES] }
const tagsSchema = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, maxItems: 32 }

/** Definitions of the memory built-ins (canonical names; the view renames them for the wire). */
export const MEMORY_TOOL_DEFS: Record<MemoryToolName, Omit<Tool, 'name'>> = {
  save_memory: {
    title: 'Save to memory',
    description:
      "Saves something worth remembering to this role's memory (kept across sessions): a preference, fact, decision or note. Returns the new entry's id.",
    inputSchema: {
      type: 'object',
      properties: {
        content: { type: 'string', minLength: 1, description: 'What to remember, in a sentence or a few' },
        type: { ...typeSchema, description: 'preference, fact, decision or note (default note)' },
        tags: { ...tagsSchema, description: 'Words to find it by' },
      },
      required: ['content'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  recall_memory: {
    title: 'Recall from memory',
    description:
      "Finds remembered entries, newest first. Every word of `query` must begin a word of the entry (case-insensitive); no query lists them. Reads this role's memory, or `role` / `all_roles` where policy lets this session read others'.",
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string' },
        type: typeSchema,
        tags: { ...tagsSchema, description: 'Entries must carry every one of these tags' },
        limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'At most this many (default 20)' },
        role: { type: 'string', description: "Another role's memory" },
        all_roles: { type: 'boolean', description: 'Every role this session may read' },
      },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  list_memories: {
    title: 'List memories',
    description:
      'Counts remembered entries per role and type, with the newest entry’s time, for the roles this session may read.',
    inputSchema: { type: 'object', properties: { role: { type: 'string' } }, additionalProperties: false },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
}

function text(message: string, isError = false, structured?: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: 'text', text: message }],
    ...(structured ? { structuredContent: structured } : {}),
    ...(isError ? { isError: true } : {}),
  }
}

type Checked<T> = { ok: true; value: T } | { ok: false; error: string }

/** Checks arguments against the tool's schema, naming the first field that does not fit. */
function check<T>(tool: MemoryToolName, args: Record<string, unknown>): Checked<T> {
  const props = (MEMORY_TOOL_DEFS[tool].inputSchema.properties ?? {}) as Record<string, unknown>
  for (const key of Object.keys(args))
    if (!(key in props))
      return { ok: false, error: `${tool}: unknown argument "${key}" (arguments: ${Object.keys(props).join(', ')})` }
  const { content, type, tags, limit, role, all_roles, query } = args
  if (tool === 'save_memory' && (typeof content !== 'string' || content.trim() === ''))
    return { ok: false, error: 'save_memory: "content" must be a non-empty string' }
  if (type !== undefined && !MEMORY_TYPES.includes(type as MemoryType))
    return { ok: false, error: `${tool}: "type" must be one of ${MEMORY_TYPES.join(', ')}` }
  if (
    tags !== undefined &&
    (!Array.isArray(tags) ||
      tags.length > 32 ||
      !tags.every((t) => typeof t === 'string' && t.trim() !== '' && t.length <= 64 && !/[\r\n]/.test(t)))
  ) {
    return { ok: false, error: `${tool}: "tags" must be a list of at most 32 one-line strings of 1-64 characters` }
  }
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1000))
    return { ok: false, error: `${tool}: "limit" must be a whole number from 1 to 1000` }
  if (role !== undefined && typeof role !== 'string') return { ok: false, error: `${tool}: "role" must be a string` }
  if (all_roles !== undefined && typeof all_roles !== 'boolean')
    return { ok: false, error: `${tool}: "all_roles" must be true or false` }
  if (query !== undefined && typeof query !== 'string') return { ok: false, error: `${tool}: "query" must be a string` }
  if (role !== undefined && all_roles === true)
    return { ok: false, error: `${tool}: give "role" or "all_roles", not both` }
  return { ok: true, value: args as T }
}

/** The roles a read covers: one asked-for role (nothing when it may not be read: exactly like a role with no memory), every readable one, or the session's own. */
async function rolesToRead(
  store: MemoryStore,
  access: MemoryAccess,
  role: string | undefined,
  all: boolean,
): Promise<string[]> {
  if (role !== undefined) return isRoleName(role) && mayRead(access, role) ? [role] : []
  if (!all) return [access.role]
  return access.readable === 'all' ? store.roles() : [...access.readable].filter(isRoleName).sort()
}

/** What a reader may take for the end of a line: newlines, CR, NEL, vertical tab, form feed, the Unicode line and paragraph separators. */
const LINE_BREAK = /\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029]/

/**
 * One entry as `recall_memory`'s text gives it: a header line
 * (`[mem_…] role · type · tags · time`) at the start of a line, then every
 * line of the content indented by two spaces, so that no content (saved by
 * a model, or by another role) can read as the header of another entry, a
 * section or anything else at the start of a line. The header's fields are
 * kept on its one line. `structuredContent` has the entries exactly.
 */
export function describeEntry(e: MemoryEntry): string {
  const header =
    `[${e.id}] ${e.role} · ${e.type}${e.tags.length ? ` · tags: ${e.tags.join(', ')}` : ''} · ${e.createdAt}`
      .split(LINE_BREAK)
      .join(' ')
  return `${header}\n${e.content
    .split(LINE_BREAK)
    .map((line) => `  ${line}`)
    .join('\n')}`
}

/** Per-role counts by type and the newest entry's time (roles without entries are left out). */
export function summarize(
  entries: readonly MemoryEntry[],
): Array<{ role: string; total: number; byType: Record<MemoryType, number>; newest: string }> {
  const byRole = new Map<string, MemoryEntry[]>()
  for (const e of entries) byRole.set(e.role, [...(byRole.get(e.role) ?? []), e])
  return [...byRole]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([role, list]) => ({
      role,
      total: list.length,
      byType: Object.fromEntries(MEMORY_TYPES.map((t) => [t, list.filter((e) => e.type === t).length])) as Record<
        MemoryType,
        number
      >,
      newest: list.reduce((m, e) => (e.createdAt > m ? e.createdAt : m), ''),
    }))
}

/**
 * Runs a memory built-in for a principal with the given access. Another
 * role's memory the principal may not read answers exactly as a role with no
 * memory does: whether it exists is not told.
 */
export async function callMemoryTool(
  tool: MemoryToolName,
  args: Record<string, unknown>,
  store: MemoryStore,
  access: MemoryAccess,
): Promise<CallToolResult> {
  if (tool === 'save_memory') {
    const checked = check<{ content: string; type?: MemoryType; tags?: string[] }>(tool, args)
    if (!checked.ok) return text(checked.error, true)
    const { content, type = 'note', tags = [] } = checked.value
    const result = await store.save(
      access.role,
      { content: content.trim(), type, tags: [...new Set(tags.map((t) => t.trim()))] },
      'agent',
    )
    if (!result.ok) return text(result.error, true)
    return text(`Saved ${result.entry.id} to the memory of role ${access.role} (${type}).`, false, {
      id: result.entry.id,
      role: access.role,
      type,
      tags: result.entry.tags,
      createdAt: result.entry.createdAt,
    })
  }
  if (tool === 'recall_memory') {
    const checked = check<{
      query?: string
      type?: MemoryType
      tags?: string[]
      limit?: number
      role?: string
      all_roles?: boolean
    }>(tool, args)
    if (!checked.ok) return text(checked.error, true)
    const q = checked.value
    const roles = await rolesToRead(store, access, q.role, q.all_roles === true)
    const entries = await store.recall(roles, {
      ...(q.query !== undefined ? { query: q.query } : {}),
      ...(q.type ? { type: q.type } : {}),
      ...(q.tags ? { tags: q.tags } : {}),
      limit: q.limit ?? 20,
    })
    return text(entries.length ? entries.map(describeEntry).join('\n\n') : 'No memories found.', false, { entries })
  }
  const checked = check<{ role?: string }>(tool, args)
  if (!checked.ok) return text(checked.error, true)
  const roles = await rolesToRead(store, access, checked.value.role, checked.value.role === undefined)
  const summary = summarize((await Promise.all(roles.map((r) => store.read(r)))).flatMap((m) => m.entries))
  const lines = summary.map(
    (s) => `${s.role}: ${s.total} (${MEMORY_TYPES.map((t) => `${t} ${s.byType[t]}`).join(', ')}), newest ${s.newest}`,
  )
  return text(lines.length ? lines.join('\n') : 'No memories found.', false, { roles: summary })
}

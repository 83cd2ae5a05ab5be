import type {
  Client,
  Prompt,
  Resource,
  ResourceTemplateType,
  ServerCapabilities,
  Tool,
} from '@modelcontextprotocol/client'
import { SKILLS_EXTENSION_ID, type Skill as SkillEntry } from '@modelcontextprotocol/core/ext/skills'
import { RpcCode } from '../protocol/facts.js'
import { passthrough } from '../protocol/passthrough.js'

/** The lists a child serves, each in the child's own order. */
export interface ChildLists {
  tools: Tool[]
  prompts: Prompt[]
  resources: Resource[]
  resourceTemplates: ResourceTemplateType[]
  /** Skills the child serves over the Skills extension (empty when it does not declare it). */
  skills: SkillEntry[]
}
export type ListKind = keyof ChildLists

export const LIST_METHODS: Record<
  ListKind,
  { method: string; field: string; has: (caps: ServerCapabilities | undefined) => boolean }
> = {
  tools: { method: 'tools/list', field: 'tools', has: (c) => Boolean(c?.tools) },
  prompts: { method: 'prompts/list', field: 'prompts', has: (c) => Boolean(c?.prompts) },
  resources: { method: 'resources/list', field: 'resources', has: (c) => Boolean(c?.resources) },
  resourceTemplates: {
    method: 'resources/templates/list',
    field: 'resourceTemplates',
    has: (c) => Boolean(c?.resources),
  },
  skills: { method: 'skills/list', field: 'skills', has: (c) => hasSkillsExtension(c) },
}
// The Skills extension announces skill changes with resources/list_changed.
export const LIST_CHANGED: Record<string, ListKind[]> = {
  'notifications/tools/list_changed': ['tools'],
  'notifications/prompts/list_changed': ['prompts'],
  'notifications/resources/list_changed': ['resources', 'resourceTemplates', 'skills'],
}

/** Whether a server declares the Skills extension. */
export function hasSkillsExtension(caps: ServerCapabilities | undefined): boolean {
  return Boolean((caps as { extensions?: Record<string, unknown> } | undefined)?.extensions?.[SKILLS_EXTENSION_ID])
}

/** A child that never stops paginating is cut off here. */
const MAX_PAGES = 1_000

export const EMPTY_LISTS: ChildLists = Object.freeze({
  tools: [],
  prompts: [],
  resources: [],
  resourceTemplates: [],
  skills: [],
}) as ChildLists

/**
 * Reads some of a child's lists afresh (the others kept from `current`),
 * each followed through its pages. A child's own skill files reach clients
 * only through the skill mapping, never as plain resources.
 */
export async function fetchLists(
  client: Client,
  capabilities: ServerCapabilities | undefined,
  kinds: readonly ListKind[],
  current: ChildLists,
  options: { timeoutMs: number; warn: (message: string) => void },
): Promise<ChildLists> {
  const next: ChildLists = { ...current }
  await Promise.all(
    kinds.map(async (kind) => {
      const spec = LIST_METHODS[kind]
      if (!spec.has(capabilities)) return void (next[kind] = [])
      const listing = listAll(client, spec.method, spec.field, options)
      next[kind] = (await (kind === 'tools' ? listing : orNone(listing, spec.method, options.warn))) as never
    }),
  )
  if (hasSkillsExtension(capabilities)) {
    next.resources = next.resources.filter((r) => !r.uri.startsWith('skill://'))
    next.resourceTemplates = next.resourceTemplates.filter((t) => !t.uriTemplate.startsWith('skill://'))
  }
  return next
}

/**
 * A list the server declares but does not answer (Method not found: the
 * SDK's low-level Server without that handler, most often for
 * resources/templates/list): none, said once a listing, where its tools
 * would otherwise go unlisted too. Tools are not spared: a server that
 * declares them and cannot list them fails its start, naming the error.
 */
async function orNone(
  listing: Promise<unknown[]>,
  method: string,
  warn: (message: string) => void,
): Promise<unknown[]> {
  try {
    return await listing
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== RpcCode.methodNotFound) throw error
    warn(`${method}: the server declares it but does not answer it (Method not found); taken as an empty list`)
    return []
  }
}

/** Follows a list's pagination to the end (a cursor seen twice ends it, and so do MAX_PAGES pages). */
async function listAll(
  client: Client,
  method: string,
  field: string,
  options: { timeoutMs: number; warn: (message: string) => void },
): Promise<unknown[]> {
  const items: unknown[] = []
  const seen = new Set<string>()
  let cursor: string | undefined
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.request({ method, params: cursor === undefined ? {} : { cursor } }, passthrough, {
      timeout: options.timeoutMs,
    })
    const pageItems = result[field]
    if (Array.isArray(pageItems)) items.push(...pageItems)
    const next = result.nextCursor
    if (typeof next !== 'string' || next === '' || seen.has(next)) return items
    seen.add(next)
    cursor = next
  }
  options.warn(`${method}: stopped after ${MAX_PAGES} pages`)
  return items
}

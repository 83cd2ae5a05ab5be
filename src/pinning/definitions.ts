import { createHash } from 'node:crypto'

/**
 * What of a child's tool or prompt is pinned (docs/pinning.md): the fields a
 * model reads and a person reviews. `_meta` and `icons` are left out: they
 * are not read as instructions, and `_meta` is where servers put what changes
 * from run to run.
 */
export type PinKind = 'tool' | 'prompt'

const PINNED_FIELDS: Readonly<Record<PinKind, readonly string[]>> = {
  tool: ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'],
  prompt: ['name', 'title', 'description', 'arguments'],
}

/** A pinned definition: the pinned fields of a child's definition, keys sorted at every depth. */
export type PinnedDefinition = Record<string, unknown>

/** The pinned fields of `def` (those it has), keys sorted at every depth. */
export function pinnedDefinition(kind: PinKind, def: object): PinnedDefinition {
  const source = def as Record<string, unknown>
  const picked: Record<string, unknown> = {}
  for (const field of PINNED_FIELDS[kind]) if (source[field] !== undefined) picked[field] = source[field]
  return JSON.parse(canonicalJson(picked)) as PinnedDefinition
}

/** JSON with the keys of every object sorted (arrays keep their order), so equal definitions give equal text. */
export function canonicalJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, sortKeys, indent) ?? 'null'
}

function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  // No prototype: a key named __proto__ (a tool's, a schema property's) is a key like any other.
  const sorted = Object.create(null) as Record<string, unknown>
  for (const key of Object.keys(value).sort()) sorted[key] = (value as Record<string, unknown>)[key]
  return sorted
}

/** `sha256:<hex>` of the canonical JSON of a pinned definition. */
export function digestOf(definition: PinnedDefinition): string {
  return `sha256:${createHash('sha256').update(canonicalJson(definition)).digest('hex')}`
}

import type { MyceliumConfig } from './schema.js'
import type { ServerConfig } from './server-schema.js'

/** What changed between two validated configs, as a running `myc serve` applies it. */
export interface ConfigDiff {
  servers: {
    /** New keys (or ones no longer disabled), in the new config's order. */
    added: string[]
    /** Keys gone (or now disabled). */
    removed: string[]
    /** Keys whose entry changed in any way: restarted with the new entry. */
    changed: string[]
  }
  /** Skills or role definitions changed: the policy is rebuilt. */
  policy: boolean
  /** Top-level keys that changed but take effect only after a restart. */
  needsRestart: string[]
  /** Whether the order of the servers changed (it decides which of two clashing names wins). */
  order: boolean
}

/**
 * Keys a running server applies live; every other changed key is reported in
 * `needsRestart` (`session` and `roles.default` shape a session when it
 * starts, `sandbox`, `namespace`, `limits`… the process).
 */
const LIVE_KEYS = new Set(['mcpServers', 'servers', 'skills', 'roles', '$schema'])
const POLICY_KEYS = ['skills', 'roles'] as const

/** Deep equality of JSON-like values, independent of object key order. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a))
    return a.length === (b as unknown[]).length && a.every((x, i) => sameValue(x, (b as unknown[])[i]))
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return (
    ka.length === kb.length &&
    ka.every(
      (k) => Object.hasOwn(b, k) && sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  )
}

function enabled(servers: ReadonlyMap<string, ServerConfig>): Map<string, ServerConfig> {
  return new Map([...servers].filter(([, s]) => !s.disabled))
}

/** Compares two configs (both already validated, env expanded). Pure. */
export function diffConfig(before: MyceliumConfig, after: MyceliumConfig): ConfigDiff {
  const was = enabled(before.servers)
  const now = enabled(after.servers)
  const added = [...now.keys()].filter((k) => !was.has(k))
  const removed = [...was.keys()].filter((k) => !now.has(k))
  const changed = [...now.keys()].filter((k) => was.has(k) && !sameValue(was.get(k), now.get(k)))
  const order = !sameValue([...before.servers.keys()], [...after.servers.keys()])
  const policy = POLICY_KEYS.some((k) => !sameValue(before[k], after[k]))
  const keys = new Set([...Object.keys(before), ...Object.keys(after)])
  const needsRestart = [...keys]
    .filter(
      (k) =>
        !LIVE_KEYS.has(k) && !sameValue((before as Record<string, unknown>)[k], (after as Record<string, unknown>)[k]),
    )
    .sort()
  return { servers: { added, removed, changed }, policy, needsRestart, order }
}

/** Whether a diff changes anything at all. */
export function isEmptyDiff(diff: ConfigDiff): boolean {
  const { added, removed, changed } = diff.servers
  return (
    added.length + removed.length + changed.length === 0 &&
    !diff.policy &&
    diff.needsRestart.length === 0 &&
    !diff.order
  )
}

import type { MemoryGrant } from './skill-definition.js'

/** Whose memory a principal may read and write (pure data; docs/policy.md, seed semantics). */
export interface MemoryAccess {
  grant: MemoryGrant
  /** The role it writes to: always its own. */
  role: string
  /** Roles it may read: every role (`all`), or these. Empty when the grant is none. */
  readable: 'all' | ReadonlySet<string>
}

const ORDER: readonly MemoryGrant[] = ['none', 'isolated', 'team', 'all']

/**
 * The memory access of a principal from the grants of its active skills:
 * the strongest grant wins (`all > team > isolated > none`); `team` reads
 * the role's own memory plus the `memoryTeamRoles` of every active skill
 * that grants team or all (merged; active skills include those the role
 * inherits); `all` reads every role. `chain` is the role's inheritance
 * chain (itself first): a chain that repeats a role is a cycle, and a cycle
 * gives none (a safe fallback; config loading refuses cycles anyway).
 */
export function memoryAccess(
  role: string,
  chain: readonly string[],
  grants: ReadonlyArray<{ memory: MemoryGrant; memoryTeamRoles: readonly string[] }>,
): MemoryAccess {
  if (new Set(chain).size !== chain.length) return { grant: 'none', role, readable: new Set() }
  let grant: MemoryGrant = 'none'
  for (const g of grants) if (ORDER.indexOf(g.memory) > ORDER.indexOf(grant)) grant = g.memory
  if (grant === 'none') return { grant, role, readable: new Set() }
  if (grant === 'all') return { grant, role, readable: 'all' }
  const readable = new Set([role])
  if (grant === 'team')
    for (const g of grants)
      if (g.memory === 'team' || g.memory === 'all') for (const r of g.memoryTeamRoles) readable.add(r)
  return { grant, role, readable }
}

/** Whether the principal may read a role's memory. */
export function mayRead(access: MemoryAccess, role: string): boolean {
  return access.grant !== 'none' && (access.readable === 'all' || access.readable.has(role))
}

import { parsePattern, PatternSet, type ToolPattern } from './patterns.js'
import type { ResolvedRole } from './roles.js'
import type { MemoryGrant, Skill } from './skill-definition.js'
import { memoryAccess, type MemoryAccess } from './memory-access.js'

/** The reserved server key of myc's built-in tools. */
export const BUILTIN_SERVER = 'mycelium'
/** The meta tools: always served in policy mode unless `session.metaTools` is false. */
export const META_BUILTINS = [
  'list_skills',
  'activate_skill',
  'deactivate_skill',
  'get_context',
  'search_tools',
] as const
/** Built-ins an active skill's patterns must allow (docs/policy.md). */
export const GATED_BUILTINS = ['exec', 'run_script'] as const
/** Code mode's tool (docs/code-mode.md): offered by the session's code mode, not by skills, so no pattern names it. */
export const RUN_CODE_TOOL = 'run_code'
/** Built-ins visible when an active skill grants memory (`grants.memory` other than none); patterns play no part. */
export const MEMORY_BUILTINS = ['save_memory', 'recall_memory', 'list_memories'] as const

const META_SET: ReadonlySet<string> = new Set(META_BUILTINS)
const MEMORY_SET: ReadonlySet<string> = new Set(MEMORY_BUILTINS)
/** Every tool name of server `mycelium`. */
export const BUILTIN_TOOLS: ReadonlySet<string> = new Set<string>([
  ...META_BUILTINS,
  ...GATED_BUILTINS,
  ...MEMORY_BUILTINS,
])

/** What policy needs to know of the live catalogue. */
interface CatalogueFacts {
  /** The tool names of a server, or undefined while its list is not known (not started, crashed). */
  toolsOf(server: string): ReadonlySet<string> | undefined
}

/** Everything a {@link Policy} is built from: plain data, no I/O. */
export interface PolicyInput {
  skills: readonly Skill[]
  roles: ReadonlyMap<string, ResolvedRole>
  /** Configured server keys. */
  servers: ReadonlySet<string>
  separator: string
  catalogue: CatalogueFacts
  /** Strict loading (docs/policy.md); false only reports. */
  strict?: boolean
}

/** Why a skill is disabled (for logs and lint only: never told to the agent). */
export interface DisabledSkill {
  skill: string
  reasons: string[]
}

/** What one principal (role plus active skills) sees. Pure and cached per principal. */
export interface PrincipalFilter {
  readonly role: string
  readonly active: ReadonlySet<string>
  /**
   * Whether `server:tool` is visible: some active skill's pattern matches it
   * and no deny pattern of the role does. Memory built-ins instead follow the
   * memory grant (minus deny). Meta tools are not decided here (see
   * {@link visibleBuiltins}).
   */
  toolVisible(server: string, tool: string): boolean
  /** Whether an active skill touches the server (its prompts, resources, logs, instructions). */
  serverReached(server: string): boolean
  /** The strongest memory grant among active skills. */
  readonly memory: MemoryGrant
  /** Whose memory it reads and writes (from the active skills' grants). */
  readonly memoryAccess: MemoryAccess
}

/**
 * The compiled policy: skills (with strict loading applied against the live
 * catalogue), roles and their deny lists, and a cache of principal filters.
 * Rebuild it when skills, config or a child's tool list change; it is cheap.
 */
export class Policy {
  readonly skills: ReadonlyMap<string, Skill>
  readonly roles: ReadonlyMap<string, ResolvedRole>
  readonly disabled: ReadonlyMap<string, DisabledSkill>
  /** Compiled allowedTools of each enabled skill. */
  private readonly compiled = new Map<string, ToolPattern[]>()
  /** Every pattern that parsed, of every skill, disabled ones included (for explanations). */
  private readonly parsedAll = new Map<string, ToolPattern[]>()
  private readonly denies = new Map<string, PatternSet>()
  private readonly denyErrors = new Map<string, string[]>()
  private readonly filters = new Map<string, PrincipalFilter>()
  private readonly context: { separator: string; servers: ReadonlySet<string> }

  constructor(input: PolicyInput) {
    this.skills = new Map(input.skills.map((s) => [s.name, s]))
    this.roles = input.roles
    const known = new Set([...input.servers, BUILTIN_SERVER])
    const context = { separator: input.separator, servers: known }
    this.context = context
    const disabled = new Map<string, DisabledSkill>()
    for (const skill of input.skills) {
      const reasons: string[] = []
      const patterns: ToolPattern[] = []
      for (const source of skill.allowedTools) {
        const parsed = parsePattern(source, context)
        if (!parsed.ok) {
          reasons.push(parsed.error)
          continue
        }
        const p = parsed.pattern
        if (p.server !== '*' && p.server !== BUILTIN_SERVER && !input.servers.has(p.server))
          reasons.push(`"${source}" names server "${p.server}", which is not configured`)
        else if (p.server === BUILTIN_SERVER && p.exact !== undefined && !BUILTIN_TOOLS.has(p.exact))
          reasons.push(
            `"${source}": the built-in server "${BUILTIN_SERVER}" has no tool "${p.exact}" (built-ins: ${[...BUILTIN_TOOLS].join(', ')})`,
          )
        else if (p.exact !== undefined && p.server !== '*' && p.server !== BUILTIN_SERVER) {
          const tools = input.catalogue.toolsOf(p.server)
          if (tools && !tools.has(p.exact)) reasons.push(`"${source}": server "${p.server}" has no tool "${p.exact}"`)
        }
        patterns.push(p)
      }
      this.parsedAll.set(skill.name, patterns)
      for (const host of skill.hostTools)
        reasons.push(`allowed-tools entry "${host}" names a host tool, not a Mycelium pattern (server:tool)`)
      if (reasons.length > 0 && input.strict !== false) disabled.set(skill.name, { skill: skill.name, reasons })
      else this.compiled.set(skill.name, patterns)
    }
    this.disabled = disabled
  }

  /** The enabled skills a role reaches, in name order. */
  reachable(role: string): Skill[] {
    const r = this.roles.get(role)
    if (!r) return []
    return [...r.skills]
      .filter((name) => this.compiled.has(name))
      .sort()
      .map((name) => this.skills.get(name)!)
  }

  /** Whether a role can activate a skill (exists, enabled, reachable). */
  reaches(role: string, skill: string): boolean {
    return this.compiled.has(skill) && (this.roles.get(role)?.skills.has(skill) ?? false)
  }

  /** The compiled patterns of an enabled skill. */
  patternsOf(skill: string): readonly ToolPattern[] | undefined {
    return this.compiled.get(skill)
  }

  /** The patterns of any skill that parsed, even of a disabled one (for `myc explain`). */
  parsedPatternsOf(skill: string): readonly ToolPattern[] {
    return this.parsedAll.get(skill) ?? []
  }

  /**
   * A role's deny patterns, compiled. A deny naming a server that is not
   * configured simply matches nothing; one that does not parse at all is
   * left out and reported by {@link denyProblems}.
   */
  denyOf(role: string): PatternSet {
    let set = this.denies.get(role)
    if (!set) {
      const patterns: ToolPattern[] = []
      const errors: string[] = []
      for (const source of this.roles.get(role)?.deny ?? []) {
        const parsed = parsePattern(source, this.context)
        if (parsed.ok) patterns.push(parsed.pattern)
        else errors.push(parsed.error)
      }
      set = new PatternSet(patterns)
      this.denies.set(role, set)
      this.denyErrors.set(role, errors)
    }
    return set
  }

  /** Deny patterns of a role (its own and inherited) that do not parse, for lint and `myc policy check`. */
  denyProblems(role: string): readonly string[] {
    this.denyOf(role)
    return this.denyErrors.get(role) ?? []
  }

  /**
   * The filter of a principal. Active skills the role cannot reach (or that
   * strict loading disabled) count for nothing. Cached per principal.
   */
  filter(role: string, active: ReadonlySet<string>): PrincipalFilter {
    const effective = [...active].filter((s) => this.reaches(role, s)).sort()
    const key = `${role}\u0000${effective.join('\u0000')}`
    const cached = this.filters.get(key)
    if (cached) return cached
    const allow = new PatternSet(effective.flatMap((s) => this.compiled.get(s) ?? []))
    const deny = this.denyOf(role)
    const access = memoryAccess(
      role,
      this.roles.get(role)?.chain ?? [role],
      effective.map((s) => this.skills.get(s)!.grants),
    )
    const memory = access.grant
    const filter: PrincipalFilter = {
      role,
      active: new Set(effective),
      toolVisible:
        memory === 'none'
          ? (server, tool) =>
              !(server === BUILTIN_SERVER && MEMORY_SET.has(tool)) &&
              allow.matches(server, tool) &&
              !deny.matches(server, tool)
          : (server, tool) =>
              (server === BUILTIN_SERVER && MEMORY_SET.has(tool) ? true : allow.matches(server, tool)) &&
              !deny.matches(server, tool),
      serverReached: (server) => allow.touches(server) && !denyAll(deny, server),
      memory,
      memoryAccess: access,
    }
    this.filters.set(key, filter)
    return filter
  }
}

/**
 * The built-in tools (server `mycelium`, bare names) a principal sees, in a
 * stable order: the meta tools unless `metaTools` is false (deny does not
 * remove them: they only ever reach what the role reaches), then `exec` and
 * `run_script` when an active skill's patterns allow them, then the memory
 * tools when an active skill grants memory. `available` narrows to the
 * built-ins this process can actually run (no sandbox: no exec).
 */
export function visibleBuiltins(
  filter: PrincipalFilter,
  options: { metaTools?: boolean; available?: ReadonlySet<string> } = {},
): string[] {
  const out: string[] = options.metaTools === false ? [] : [...META_BUILTINS]
  for (const name of [...GATED_BUILTINS, ...MEMORY_BUILTINS])
    if (filter.toolVisible(BUILTIN_SERVER, name)) out.push(name)
  return options.available ? out.filter((n) => META_SET.has(n) || options.available!.has(n)) : out
}

/** Whether the deny list removes every tool of a server (`server:*` or `*`). */
function denyAll(deny: PatternSet, server: string): boolean {
  return deny.patterns.some((p) => (p.server === '*' || p.server === server) && p.glob?.source === '^.*$')
}

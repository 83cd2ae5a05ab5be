import type { Skill } from './skill-definition.js'

/** A role definition from config (`roles.definitions`) or `roles/<id>.yaml`. */
export interface RoleDefinitionInput {
  allowedSkills?: readonly string[]
  deny?: readonly string[]
  inherits?: string
  description?: string
  /** The agent's spending caps for this role (src/agent/budget.ts). */
  budget?: { maxUsd?: number | undefined; maxInputTokens?: number | undefined; maxOutputTokens?: number | undefined }
  /** Code mode for this role's sessions (docs/code-mode.md); absent: its parent's, else session.codeMode. */
  codeMode?: boolean | undefined
}

/** A role with everything resolved: which skills it reaches and what it may never see. */
export interface ResolvedRole {
  name: string
  /** Skill names this role may activate (before strict loading removes disabled ones). */
  skills: ReadonlySet<string>
  /** Deny patterns, its own and every ancestor's. */
  deny: readonly string[]
  /** The role itself, then its parent, grandparent… */
  chain: readonly string[]
  /** Where the role comes from, for `myc roles`. */
  sources: readonly string[]
  /** The cap (`allowedSkills`) of this role itself, if any. */
  cap?: ReadonlySet<string>
}

/**
 * `warnings` are for lint and logs only (never the agent): an `allowedSkills`
 * entry naming no loaded skill, which caps nothing. `warningsByRole` holds
 * the same messages by the role definition they are about.
 */
export type RolesResult =
  | {
      ok: true
      roles: ReadonlyMap<string, ResolvedRole>
      warnings: string[]
      warningsByRole: ReadonlyMap<string, readonly string[]>
    }
  | { ok: false; error: string }

/**
 * Inverted RBAC (docs/policy.md): a role exists because a skill names
 * it in `allowedRoles` or a definition names it. `"*"` expands, in a second
 * pass, to every named role. A role reaches the skills that allow it plus
 * those its parent reaches (`inherits`), capped by its own `allowedSkills`;
 * it is denied its own `deny` patterns and all its ancestors'. A parent's
 * cap limits what the parent passes on; the child's cap limits the total.
 * Unknown parents, inheritance cycles and a definition named `*` are errors
 * naming them (and the fix).
 */
export function resolveRoles(
  skills: readonly Skill[],
  definitions: ReadonlyMap<string, RoleDefinitionInput>,
): RolesResult {
  const sources = new Map<string, string[]>()
  const addSource = (role: string, source: string) => {
    const list = sources.get(role)
    if (list) list.push(source)
    else sources.set(role, [source])
  }
  for (const skill of skills)
    for (const role of skill.allowedRoles) if (role !== '*') addSource(role, `skill ${skill.name}`)
  for (const role of definitions.keys()) {
    if (role === '*')
      return {
        ok: false,
        error: 'roles.definitions: "*" is not a role name (in allowedRoles it means every role); rename the definition',
      }
    addSource(role, 'definition')
  }

  const direct = new Map<string, Set<string>>()
  for (const role of sources.keys()) direct.set(role, new Set())
  for (const skill of skills) {
    const targets = skill.allowedRoles.includes('*') ? [...sources.keys()] : skill.allowedRoles
    for (const role of targets) direct.get(role)?.add(skill.name)
  }

  const badInheritance = inheritanceError(definitions, sources)
  if (badInheritance !== undefined) return { ok: false, error: badInheritance }

  const { warnings, warningsByRole } = unknownSkillWarnings(skills, definitions)

  const resolved = new Map<string, ResolvedRole>()
  const resolve = (role: string): ResolvedRole => {
    const done = resolved.get(role)
    if (done) return done
    const def = definitions.get(role)
    const parent = def?.inherits !== undefined ? resolve(def.inherits) : undefined
    const reach = new Set(direct.get(role) ?? [])
    if (parent) for (const s of parent.skills) reach.add(s)
    const cap = def?.allowedSkills ? new Set(def.allowedSkills) : undefined
    const skillsOut = cap ? new Set([...reach].filter((s) => cap.has(s))) : reach
    const result: ResolvedRole = {
      name: role,
      skills: skillsOut,
      deny: [...(parent?.deny ?? []), ...(def?.deny ?? [])],
      chain: [role, ...(parent?.chain ?? [])],
      sources: sources.get(role) ?? [],
      ...(cap ? { cap } : {}),
    }
    resolved.set(role, result)
    return result
  }
  for (const role of [...sources.keys()].sort()) resolve(role)
  return {
    ok: true,
    roles: new Map([...resolved].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    warnings,
    warningsByRole,
  }
}

/** What is wrong with the roles' inheritance (an unknown parent, a cycle), or undefined. */
function inheritanceError(
  definitions: ReadonlyMap<string, RoleDefinitionInput>,
  sources: ReadonlyMap<string, string[]>,
): string | undefined {
  for (const [role, def] of definitions)
    if (def.inherits !== undefined && !sources.has(def.inherits))
      return `roles.definitions.${role}.inherits: unknown role "${def.inherits}" (known roles: ${[...sources.keys()].sort().join(', ') || 'none'})`
  // Cycle check: follow each chain.
  for (const role of definitions.keys()) {
    const path: string[] = [role]
    let current = definitions.get(role)?.inherits
    while (current !== undefined) {
      if (path.includes(current))
        return `roles.definitions: inheritance cycle ${[...path.slice(path.indexOf(current)), current].join(' → ')} (remove one "inherits")`
      path.push(current)
      current = definitions.get(current)?.inherits
    }
  }
  return undefined
}

/** A role's allowedSkills naming no skill: warnings, in all and by role. */
function unknownSkillWarnings(
  skills: readonly Skill[],
  definitions: ReadonlyMap<string, RoleDefinitionInput>,
): { warnings: string[]; warningsByRole: Map<string, string[]> } {
  const warnings: string[] = []
  const warningsByRole = new Map<string, string[]>()
  const skillNames = new Set(skills.map((s) => s.name))
  for (const [role, def] of definitions) {
    for (const s of def.allowedSkills ?? []) {
      if (skillNames.has(s)) continue
      const message = `roles.definitions.${role}.allowedSkills: no skill is named "${s}" (remove it or fix the name)`
      warnings.push(message)
      warningsByRole.set(role, [...(warningsByRole.get(role) ?? []), message])
    }
  }
  return { warnings, warningsByRole }
}

/** The chosen role, or an error naming where the bad name came from and the known roles. */
export type RoleChoice = { ok: true; role: string } | { ok: false; error: string }

/**
 * The role of a session: `--role`, else `MYCELIUM_ROLE`, else `roles.default`
 * (the person launching myc decides, never the agent). An unknown role is an
 * error listing the known ones.
 */
export function chooseRole(
  input: { flag?: string; flagFrom?: string; env?: string; configDefault?: string },
  roles: ReadonlyMap<string, ResolvedRole>,
): RoleChoice {
  const [name, from] = input.flag
    ? [input.flag, input.flagFrom ?? '--role']
    : input.env
      ? [input.env, 'MYCELIUM_ROLE']
      : input.configDefault
        ? [input.configDefault, 'roles.default']
        : [undefined, undefined]
  const known = [...roles.keys()]
  if (name === undefined) {
    if (known.length === 1) return { ok: true, role: known[0]! }
    return {
      ok: false,
      error: `no role chosen: pass --role (or set MYCELIUM_ROLE, or roles.default in the config); roles: ${known.join(', ') || 'none (no skill names a role)'}`,
    }
  }
  if (!roles.has(name))
    return {
      ok: false,
      error: `unknown role "${name}" (from ${from}); roles: ${known.join(', ') || 'none (no skill names a role)'}`,
    }
  return { ok: true, role: name }
}

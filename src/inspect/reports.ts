import { existsSync } from 'node:fs'
import path from 'node:path'
import type { Tool } from '@modelcontextprotocol/client'
import type { LoadedConfig } from '../config/load.js'
import { projectState } from '../config/state-roots.js'
import { previewActivation, type PreviewTool } from '../policy/escalation.js'
import { patternMatches } from '../policy/patterns.js'
import {
  BUILTIN_SERVER,
  BUILTIN_TOOLS,
  GATED_BUILTINS,
  MEMORY_BUILTINS,
  META_BUILTINS,
  visibleBuiltins,
  type Policy,
  type PrincipalFilter,
} from '../policy/policy.js'
import { resolveRoles, type RoleDefinitionInput } from '../policy/roles.js'
import type { Skill, SkillProblem } from '../policy/skill-definition.js'
import type { Catalogue, ToolEntry } from '../registry/catalogue.js'
import { clientNameWarnings, toWireName, type WireNameOptions } from '../registry/wire-names.js'
import { EXEC_TOOL_DEFS } from '../principal/builtin-exec.js'
import { META_TOOL_DEFS } from '../principal/meta-tools.js'
import { MEMORY_TOOL_DEFS } from '../memory/memory-tools.js'

/** One row of `myc tools`. */
export interface ToolRow {
  id: string
  wireName: string
  server: string
  name: string
  description: string
  visible: boolean
  warnings: string[]
}

function row(entry: ToolEntry, visible: boolean): ToolRow {
  return {
    id: entry.id,
    wireName: entry.wireName,
    server: entry.server,
    name: entry.name,
    description: entry.def.description ?? '',
    visible,
    warnings: clientNameWarnings(entry.wireName),
  }
}

/**
 * The built-ins `myc serve` runs in policy mode besides the meta tools: the
 * sandboxed `exec` and `run_script`, and the memory tools.
 */
export const SERVED_BUILTINS: ReadonlySet<string> = new Set([...GATED_BUILTINS, ...MEMORY_BUILTINS])

const BUILTIN_DEFS: Readonly<Record<string, Omit<Tool, 'name'>>> = {
  ...META_TOOL_DEFS,
  ...EXEC_TOOL_DEFS,
  ...MEMORY_TOOL_DEFS,
}

/** A built-in tool of server `mycelium` as a principal would get it. */
export interface BuiltinTool {
  /** Bare name (`list_skills`, `exec`). */
  name: string
  wireName: string
  /** The definition sent to the client, with its wire name. */
  wire: Tool
  visible: boolean
}

/**
 * The built-ins `myc serve` can offer a principal, each marked visible or not
 * as {@link visibleBuiltins} decides (meta tools unless `metaTools` is false,
 * then those of {@link SERVED_BUILTINS} an active skill allows), in the order
 * the server lists them.
 */
export function builtinTools(
  filter: PrincipalFilter,
  options: { metaTools: boolean; naming: WireNameOptions },
): BuiltinTool[] {
  const visible = new Set(visibleBuiltins(filter, { metaTools: options.metaTools, available: SERVED_BUILTINS }))
  const candidates = [...(options.metaTools ? META_BUILTINS : []), ...SERVED_BUILTINS]
  return candidates.map((name) => {
    const wireName = toWireName(BUILTIN_SERVER, name, options.naming)
    return { name, wireName, wire: { name: wireName, ...BUILTIN_DEFS[name]! } as Tool, visible: visible.has(name) }
  })
}

/** The bare name of the built-in whose wire name is `wireName` (`mycelium__exec` → `exec`), if any. */
export function builtinByWireName(wireName: string, naming: WireNameOptions): string | undefined {
  return [...BUILTIN_TOOLS].find((name) => toWireName(BUILTIN_SERVER, name, naming) === wireName)
}

/**
 * The tools a principal sees (open mode: all), built-ins first. With `all`,
 * every tool, each marked visible or not (a person's view: the agent never
 * gets it).
 */
export function toolsReport(
  catalogue: Catalogue,
  visible: (e: ToolEntry) => boolean,
  builtins: readonly BuiltinTool[],
  all: boolean,
): ToolRow[] {
  const rows: ToolRow[] = builtins
    .filter((b) => b.visible || all)
    .map((b) => ({
      id: `${BUILTIN_SERVER}:${b.name}`,
      wireName: b.wireName,
      server: BUILTIN_SERVER,
      name: b.name,
      description: b.wire.description ?? '',
      visible: b.visible,
      warnings: clientNameWarnings(b.wireName),
    }))
  for (const entry of catalogue.tools()) {
    const v = visible(entry)
    if (v || all) rows.push(row(entry, v))
  }
  return rows
}

/** What {@link roleWarnings} returns: every role warning, and the same by role definition. */
export interface RoleWarnings {
  warnings: readonly string[]
  byRole: ReadonlyMap<string, readonly string[]>
}

/**
 * The warnings of the role graph ({@link resolveRoles}: an `allowedSkills`
 * entry naming no skill), from the skills and definitions policy mode was
 * built from. For people (roles, lint, policy check), never the agent.
 */
export function roleWarnings(sources: {
  skills: readonly Skill[]
  definitions: ReadonlyMap<string, RoleDefinitionInput>
}): RoleWarnings {
  const result = resolveRoles(sources.skills, sources.definitions)
  return result.ok ? { warnings: result.warnings, byRole: result.warningsByRole } : { warnings: [], byRole: new Map() }
}

/** The file a role definition is written in: the config (`roles.definitions`) or `roles/<role>.yaml` beside it. */
export function roleDefinitionFile(loaded: Pick<LoadedConfig, 'file' | 'dir' | 'config'>, role: string): string {
  if (Object.hasOwn(loaded.config.roles.definitions, role)) return loaded.file ?? '(embedded config)'
  const roles = projectState(loaded).rolesDir.path
  const yml = path.join(roles, `${role}.yml`)
  return existsSync(yml) && !existsSync(path.join(roles, `${role}.yaml`)) ? yml : path.join(roles, `${role}.yaml`)
}

/** Role warnings as lint problems (severity warning), each naming the file of its role definition. */
export function roleWarningProblems(warnings: RoleWarnings, fileOf: (role: string) => string): LintProblem[] {
  return [...warnings.byRole].flatMap(([role, messages]) =>
    messages.map((message) => ({ file: fileOf(role), severity: 'warning' as const, message })),
  )
}

/** `myc roles`: each role, where it comes from, what it reaches. */
export function rolesReport(policy: Policy) {
  return [...policy.roles.values()].map((r) => ({
    name: r.name,
    sources: [...r.sources],
    inherits: r.chain.slice(1),
    skills: policy.reachable(r.name).map((s) => s.name),
    deny: [...r.deny],
    ...(r.cap ? { allowedSkills: [...r.cap] } : {}),
  }))
}

/** `myc skills list`: every loaded skill with its status and, when served over MCP, its URI. */
export function skillsReport(policy: Policy, served: ReadonlySet<string> = new Set()) {
  return [...policy.skills.values()]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((s) => ({
      name: s.name,
      description: s.description,
      origin: s.dir,
      uri: served.has(s.name) ? `skill://mycelium/${encodeURIComponent(s.name)}/SKILL.md` : null,
      file: s.file,
      allowedRoles: s.allowedRoles,
      allowedTools: s.allowedTools,
      triggers: s.triggers,
      grants: s.grants,
      protected: s.protected,
      enabled: !policy.disabled.has(s.name),
      disabledReasons: policy.disabled.get(s.name)?.reasons ?? [],
    }))
}

/** Children's skills for `myc skills list`: origin is the server key. */
export function childSkillsReport(catalogue: Catalogue) {
  return catalogue.childSkills().map((c) => ({
    name: String(c.entry.frontmatter.name),
    description: String(c.entry.frontmatter.description),
    origin: c.server,
    uri: c.entry.uri,
    enabled: true,
  }))
}

/** A lint finding: which file, what is wrong, how to fix it. */
export interface LintProblem {
  skill?: string
  file: string
  severity: 'error' | 'warning'
  message: string
}

/**
 * `myc skills lint`: malformed skills, strict-loading failures, host tools,
 * `*` patterns, skills no role can use, and the role graph's warnings
 * (`roleProblems`, from {@link roleWarningProblems}).
 */
export function lintSkills(
  policy: Policy,
  problems: readonly SkillProblem[],
  unserved: ReadonlyArray<{ name: string; file: string; reason: string }> = [],
  roleProblems: readonly LintProblem[] = [],
): LintProblem[] {
  const out: LintProblem[] = problems.map((p) => ({
    file: p.file,
    severity: 'error' as const,
    message: `${p.path ? `${p.path}: ` : ''}${p.message}`,
  }))
  for (const u of unserved)
    out.push({
      skill: u.name,
      file: u.file,
      severity: u.reason.startsWith('SKILL.yaml') ? 'warning' : 'error',
      message: `not served over MCP: ${u.reason}`,
    })
  for (const skill of policy.skills.values()) {
    for (const reason of policy.disabled.get(skill.name)?.reasons ?? [])
      out.push({ skill: skill.name, file: skill.file, severity: 'error', message: `disabled: ${reason}` })
    if (skill.allowedTools.includes('*'))
      out.push({
        skill: skill.name,
        file: skill.file,
        severity: 'warning',
        message:
          'allowedTools has "*": every tool of every server, built-ins included; name the servers instead (fs:*)',
      })
    if (skill.allowedRoles.length === 0)
      out.push({
        skill: skill.name,
        file: skill.file,
        severity: 'warning',
        message: 'allowedRoles is empty: no role can use this skill',
      })
  }
  out.push(...roleProblems)
  return out
}

/**
 * `myc policy check --role R`: what R reaches, the rules it violates (a
 * disabled skill, a pattern or deny matching no tool, a deny that does not
 * parse), and the role graph's warnings about R and the roles it inherits.
 */
export function policyCheck(
  policy: Policy,
  catalogue: Catalogue,
  role: string,
  warnings: RoleWarnings = { warnings: [], byRole: new Map() },
) {
  const reachable = policy.reachable(role)
  const filter = policy.filter(role, new Set(reachable.map((s) => s.name)))
  const tools = catalogue
    .tools()
    .filter((e) => filter.toolVisible(e.server, e.name))
    .map((e) => e.id)
  const servers = catalogue.servers().filter((s) => filter.serverReached(s))
  const violations: string[] = []
  for (const name of policy.roles.get(role)?.skills ?? []) {
    const disabled = policy.disabled.get(name)
    if (disabled) violations.push(`skill ${name}: ${disabled.reasons.join('; ')}`)
  }
  for (const skill of reachable) {
    for (const p of policy.patternsOf(skill.name) ?? []) {
      if (p.server === 'mycelium') continue
      if (!catalogue.tools().some((e) => patternMatches(p, e.server, e.name)))
        violations.push(`skill ${skill.name}: "${p.source}" matches no tool in the catalogue`)
    }
  }
  const deny = policy.denyOf(role)
  for (const p of deny.patterns)
    if (!catalogue.tools().some((e) => patternMatches(p, e.server, e.name)))
      violations.push(`role ${role}: deny "${p.source}" matches no tool (a typo leaves the tool visible)`)
  for (const problem of policy.denyProblems(role))
    violations.push(`role ${role}: deny ${problem} (it is ignored, so it denies nothing)`)
  const chain = policy.roles.get(role)?.chain ?? [role]
  const access = filter.memoryAccess
  const memoryWarnings: string[] = []
  if (access.readable !== 'all')
    for (const r of access.readable)
      if (!policy.roles.has(r))
        memoryWarnings.push(`memory: team role "${r}" (grants.memoryTeamRoles) is no role; it has no memory to read`)
  return {
    role,
    servers,
    skills: reachable.map((s) => s.name),
    tools,
    memory: filter.memory,
    memoryReads: access.readable === 'all' ? ('all' as const) : [...access.readable].sort(),
    memoryWrites: access.grant === 'none' ? null : access.role,
    violations,
    warnings: [...chain.flatMap((r) => warnings.byRole.get(r) ?? []), ...memoryWarnings],
  }
}

/**
 * `myc preview skill ID --role R`: the tool-list diff activating the skill
 * would cause ({@link previewActivation}), over the catalogue and the
 * built-ins `myc serve` runs (activating a skill that allows `mycelium:exec`
 * adds it), with wire names for each added tool.
 */
/**
 * Why `role` cannot activate `skill`, for the person at the CLI (who has the
 * config): unlike the agent's answer, it says whether the skill exists, is
 * disabled, or is out of the role's reach, and which roles reach it.
 */
function unreachableForPerson(policy: Policy, role: string, skill: string): string {
  if (!policy.skills.has(skill)) return `no skill is named "${skill}" (\`myc skills\` lists them)`
  const disabled = policy.disabled.get(skill)
  if (disabled) return `skill "${skill}" is disabled: ${disabled.reasons.join('; ')} (\`myc skills lint\` explains)`
  const roles = [...policy.roles.keys()].filter((r) => policy.reaches(r, skill)).sort()
  const which =
    roles.length === 0
      ? "no role can reach it (add it to a role's allowedSkills, or the skill's allowed-roles)"
      : `roles that can: ${roles.join(', ')}`
  return `skill "${skill}" exists, but role "${role}" cannot reach it; ${which}`
}

export function previewSkill(
  policy: Policy,
  catalogue: Catalogue,
  role: string,
  active: ReadonlySet<string>,
  skill: string,
  naming: WireNameOptions,
) {
  const wireNames = new Map<string, string>()
  const tools: PreviewTool[] = []
  for (const name of SERVED_BUILTINS) {
    const wireName = toWireName(BUILTIN_SERVER, name, naming)
    wireNames.set(`${BUILTIN_SERVER}:${name}`, wireName)
    tools.push({ server: BUILTIN_SERVER, name, def: { name: wireName, ...BUILTIN_DEFS[name] } })
  }
  for (const e of catalogue.tools()) {
    wireNames.set(e.id, e.wireName)
    tools.push({ server: e.server, name: e.name, def: e.wire })
  }
  if (!policy.reaches(role, skill)) return { ok: false as const, error: unreachableForPerson(policy, role, skill) }
  const result = previewActivation(policy, role, active, skill, tools)
  if (!result.ok) return result
  return {
    ok: true as const,
    skill,
    role,
    active: [...policy.filter(role, active).active],
    alreadyActive: result.alreadyActive,
    added: result.added.map((id) => ({ id, wireName: wireNames.get(id) ?? id })),
    addedTokens: result.addedTokens,
  }
}

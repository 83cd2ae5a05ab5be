import type { Tool } from '@modelcontextprotocol/client'
import { unknownSkill } from '../policy/escalation.js'
import { patternMatches } from '../policy/patterns.js'
import type { Policy } from '../policy/policy.js'
import type { SkillProblem } from '../policy/skill.js'
import type { Catalogue, ToolEntry } from '../registry/catalogue.js'
import { clientNameWarnings } from '../registry/wire-names.js'

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
  return { id: entry.id, wireName: entry.wireName, server: entry.server, name: entry.name, description: entry.def.description ?? '', visible, warnings: clientNameWarnings(entry.wireName) }
}

/**
 * The tools a principal sees (open mode: all). With `all`, every catalogue
 * tool, each marked visible or not (a person's view: the agent never gets it).
 */
export function toolsReport(catalogue: Catalogue, visible: (e: ToolEntry) => boolean, builtins: readonly Tool[], all: boolean): ToolRow[] {
  const rows: ToolRow[] = builtins.map((t) => {
    const name = t.name.replace(/^mycelium[_.:-]+/, '')
    return { id: `mycelium:${name}`, wireName: t.name, server: 'mycelium', name, description: t.description ?? '', visible: true, warnings: clientNameWarnings(t.name) }
  })
  for (const entry of catalogue.tools()) {
    const v = visible(entry)
    if (v || all) rows.push(row(entry, v))
  }
  return rows
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

/** `myc skills lint`: malformed skills, strict-loading failures, host tools, `*` patterns, roles nobody else names. */
export function lintSkills(policy: Policy, problems: readonly SkillProblem[], unserved: ReadonlyArray<{ name: string; file: string; reason: string }> = []): LintProblem[] {
  const out: LintProblem[] = problems.map((p) => ({ file: p.file, severity: 'error' as const, message: `${p.path ? `${p.path}: ` : ''}${p.message}` }))
  for (const u of unserved) out.push({ skill: u.name, file: u.file, severity: u.reason.startsWith('SKILL.yaml') ? 'warning' : 'error', message: `not served over MCP: ${u.reason}` })
  for (const skill of policy.skills.values()) {
    for (const reason of policy.disabled.get(skill.name)?.reasons ?? []) out.push({ skill: skill.name, file: skill.file, severity: 'error', message: `disabled: ${reason}` })
    if (skill.allowedTools.includes('*')) out.push({ skill: skill.name, file: skill.file, severity: 'warning', message: 'allowedTools has "*": every tool of every server, built-ins included; name the servers instead (fs:*)' })
    if (skill.allowedRoles.length === 0) out.push({ skill: skill.name, file: skill.file, severity: 'warning', message: 'allowedRoles is empty: no role can use this skill' })
  }
  return out
}

/** `myc policy check --role R`: what R reaches, and the rules it violates. */
export function policyCheck(policy: Policy, catalogue: Catalogue, role: string) {
  const reachable = policy.reachable(role)
  const filter = policy.filter(role, new Set(reachable.map((s) => s.name)))
  const tools = catalogue.tools().filter((e) => filter.toolVisible(e.server, e.name)).map((e) => e.id)
  const servers = catalogue.servers().filter((s) => filter.serverReached(s))
  const violations: string[] = []
  for (const name of policy.roles.get(role)?.skills ?? []) {
    const disabled = policy.disabled.get(name)
    if (disabled) violations.push(`skill ${name}: ${disabled.reasons.join('; ')}`)
  }
  for (const skill of reachable) {
    for (const p of policy.patternsOf(skill.name) ?? []) {
      if (p.server === 'mycelium') continue
      if (!catalogue.tools().some((e) => patternMatches(p, e.server, e.name))) violations.push(`skill ${skill.name}: "${p.source}" matches no tool in the catalogue`)
    }
  }
  const deny = policy.denyOf(role)
  for (const p of deny.patterns) if (!catalogue.tools().some((e) => patternMatches(p, e.server, e.name))) violations.push(`role ${role}: deny "${p.source}" matches no tool (a typo leaves the tool visible)`)
  return { role, servers, skills: reachable.map((s) => s.name), tools, memory: filter.memory, violations }
}

/** Estimated tokens of tool definitions: JSON characters / 4 (a rough, stated rule of thumb). */
export function estimateTokens(tools: readonly Tool[]): number {
  return Math.ceil(tools.reduce((n, t) => n + JSON.stringify(t).length, 0) / 4)
}

/** `myc preview skill ID --role R`: the tool diff activating the skill would cause. */
export function previewSkill(policy: Policy, catalogue: Catalogue, role: string, active: ReadonlySet<string>, skill: string) {
  if (!policy.reaches(role, skill)) return { ok: false as const, error: unknownSkill(skill).error.message }
  const before = policy.filter(role, active)
  const after = policy.filter(role, new Set([...active, skill]))
  const added = catalogue.tools().filter((e) => after.toolVisible(e.server, e.name) && !before.toolVisible(e.server, e.name))
  return { ok: true as const, skill, role, active: [...before.active], added: added.map((e) => ({ id: e.id, wireName: e.wireName })), addedTokens: estimateTokens(added.map((e) => e.wire)) }
}

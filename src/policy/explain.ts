import { patternMatches } from './patterns.js'
import type { Policy } from './policy.js'

/** One step of an explanation: a rule and what it said. */
export interface ExplainStep {
  rule: string
  verdict: 'allows' | 'denies' | 'info'
  detail: string
}

export interface Explanation {
  tool: string
  role: string
  visible: boolean
  steps: ExplainStep[]
}

/**
 * Why `server:tool` is visible or hidden for a role with the given active
 * skills, rule by rule (for `myc explain`; a person's tool, never the agent's).
 */
export function explainTool(policy: Policy, input: { server: string; tool: string; role: string; active: ReadonlySet<string>; inCatalogue: boolean }): Explanation {
  const { server, tool, role, active } = input
  const steps: ExplainStep[] = []
  const id = `${server}:${tool}`
  if (!input.inCatalogue) steps.push({ rule: 'catalogue', verdict: 'denies', detail: `no running server offers ${id}` })
  const resolved = policy.roles.get(role)
  if (!resolved) {
    steps.push({ rule: 'role', verdict: 'denies', detail: `unknown role "${role}"` })
    return { tool: id, role, visible: false, steps }
  }
  let granted = false
  for (const skill of policy.skills.values()) {
    const matching = policy
      .parsedPatternsOf(skill.name)
      .filter((p) => patternMatches(p, server, tool))
      .map((p) => p.source)
    if (matching.length === 0) continue
    const disabled = policy.disabled.get(skill.name)
    if (disabled) {
      steps.push({ rule: `skill ${skill.name}`, verdict: 'info', detail: `would grant it (${matching.join(', ')}) but is disabled by strict loading: ${disabled.reasons.join('; ')}` })
      continue
    }
    if (!resolved.skills.has(skill.name)) {
      const capped = resolved.cap && !resolved.cap.has(skill.name)
      steps.push({ rule: `skill ${skill.name}`, verdict: 'info', detail: `grants it (${matching.join(', ')}) but role ${role} does not reach this skill${capped ? ' (not in its allowedSkills cap)' : ` (allowedRoles: ${skill.allowedRoles.join(', ') || 'none'})`}` })
      continue
    }
    if (!active.has(skill.name)) {
      steps.push({ rule: `skill ${skill.name}`, verdict: 'info', detail: `grants it (${matching.join(', ')}) once activated` })
      continue
    }
    granted = true
    steps.push({ rule: `skill ${skill.name}`, verdict: 'allows', detail: `active, and allowedTools has ${matching.join(', ')}` })
  }
  if (!granted) steps.push({ rule: 'active skills', verdict: 'denies', detail: active.size > 0 ? `no active skill (${[...active].join(', ')}) grants ${id}` : 'no skill is active' })
  const deny = policy.denyOf(role)
  const denied = deny.patterns.filter((p) => patternMatches(p, server, tool))
  for (const p of denied) steps.push({ rule: `role ${role} deny`, verdict: 'denies', detail: `"${p.source}" matches (deny wins over allow)` })
  return { tool: id, role, visible: input.inCatalogue && granted && denied.length === 0, steps }
}

import type { Policy } from './policy.js'

/** How skills get activated (config `session.escalation`). */
export type EscalationMode = 'auto' | 'ask' | 'manual'
/** Who asks: the agent (a meta tool call) or a person (CLI, REPL, approval). */
export type Actor = 'agent' | 'person'

export interface EscalationState {
  role: string
  active: ReadonlySet<string>
  mode: EscalationMode
  /** Skills that cannot be deactivated (config `session.protectedSkills` and skills marked `protected`). */
  protectedSkills: ReadonlySet<string>
}

export type ActivationDecision =
  | { ok: true; action: 'activate' | 'none'; active: ReadonlySet<string> }
  | { ok: true; action: 'ask' }
  | { ok: false; error: { code: 'unknown_skill' | 'manual_only' | 'protected'; message: string } }

/**
 * The answer for a skill that does not exist, and so also for one the role
 * cannot reach or that strict loading disabled: one function, one text.
 */
export function unknownSkill(name: string): ActivationDecision & { ok: false } {
  return { ok: false, error: { code: 'unknown_skill', message: `Unknown skill: ${name}. Call list_skills to see the skills you can activate.` } }
}

/** Whether `name` may be activated now, and what the active set becomes (pure). */
export function decideActivation(policy: Policy, state: EscalationState, name: string, actor: Actor): ActivationDecision {
  if (!policy.reaches(state.role, name)) return unknownSkill(name)
  if (state.active.has(name)) return { ok: true, action: 'none', active: state.active }
  if (actor === 'agent' && state.mode === 'manual') {
    return { ok: false, error: { code: 'manual_only', message: `Skill ${name} can only be activated by a person in this session (escalation: manual). Ask the user to activate it.` } }
  }
  if (actor === 'agent' && state.mode === 'ask') return { ok: true, action: 'ask' }
  return { ok: true, action: 'activate', active: new Set([...state.active, name]) }
}

/** Whether `name` may be deactivated, and what the active set becomes (pure). */
export function decideDeactivation(policy: Policy, state: EscalationState, name: string): ActivationDecision {
  if (!policy.reaches(state.role, name)) return unknownSkill(name)
  if (!state.active.has(name)) return { ok: true, action: 'none', active: state.active }
  if (state.protectedSkills.has(name) || policy.skills.get(name)?.protected) {
    return { ok: false, error: { code: 'protected', message: `Skill ${name} is protected and stays active for this session.` } }
  }
  const active = new Set(state.active)
  active.delete(name)
  return { ok: true, action: 'activate', active }
}

/** The skills a session starts with: `session.defaultSkills` plus `--skills`, kept to what the role reaches. */
export function initialSkills(policy: Policy, role: string, defaults: readonly string[], extra: readonly string[]): Set<string> {
  return new Set([...defaults, ...extra].filter((s) => policy.reaches(role, s)))
}

import type { Policy } from './policy.js'

/** How skills get activated (config `session.escalation`). */
export type EscalationMode = 'auto' | 'ask' | 'manual'
/** Who asks: the agent (a meta tool call) or a person (CLI, REPL, approval). */
export type Actor = 'agent' | 'person'

/** The principal and session settings an escalation decision depends on. */
export interface EscalationState {
  role: string
  active: ReadonlySet<string>
  mode: EscalationMode
  /** Skills that cannot be deactivated (config `session.protectedSkills` and skills marked `protected`). */
  protectedSkills: ReadonlySet<string>
}

/**
 * A decision: `activate` carries the new active set (also used for a
 * deactivation), `none` means nothing changes, `ask` means the caller must
 * get a person's approval (MCP elicitation) and then decide again as
 * `person`. Errors carry a message safe to send to the agent: it names only
 * what the caller sent or what the role reaches.
 */
export type ActivationDecision =
  | { ok: true; action: 'activate' | 'none'; active: ReadonlySet<string> }
  | { ok: true; action: 'ask' }
  | { ok: false; error: { code: 'unknown_skill' | 'manual_only' | 'protected'; message: string } }

/**
 * The answer for a skill that does not exist, and so also for one the role
 * cannot reach or that strict loading disabled: one function, one text.
 */
export function unknownSkill(name: string): ActivationDecision & { ok: false } {
  return {
    ok: false,
    error: {
      code: 'unknown_skill',
      message: `Unknown skill: ${name}. Call list_skills to see the skills you can activate.`,
    },
  }
}

/** Whether `name` may be activated now, and what the active set becomes (pure). */
export function decideActivation(
  policy: Policy,
  state: EscalationState,
  name: string,
  actor: Actor,
): ActivationDecision {
  if (!policy.reaches(state.role, name)) return unknownSkill(name)
  if (state.active.has(name)) return { ok: true, action: 'none', active: state.active }
  if (actor === 'agent' && state.mode === 'manual') {
    return {
      ok: false,
      error: {
        code: 'manual_only',
        message: `Skill ${name} can only be activated by a person in this session (escalation: manual). Ask the user to activate it.`,
      },
    }
  }
  if (actor === 'agent' && state.mode === 'ask') return { ok: true, action: 'ask' }
  return { ok: true, action: 'activate', active: new Set([...state.active, name]) }
}

/** Whether `name` may be deactivated, and what the active set becomes (pure). */
export function decideDeactivation(policy: Policy, state: EscalationState, name: string): ActivationDecision {
  if (!policy.reaches(state.role, name)) return unknownSkill(name)
  if (!state.active.has(name)) return { ok: true, action: 'none', active: state.active }
  if (state.protectedSkills.has(name) || policy.skills.get(name)?.protected) {
    return {
      ok: false,
      error: { code: 'protected', message: `Skill ${name} is protected and stays active for this session.` },
    }
  }
  const active = new Set(state.active)
  active.delete(name)
  return { ok: true, action: 'activate', active }
}

/** The skills a session starts with: `session.defaultSkills` plus `--skills`, kept to what the role reaches. */
export function initialSkills(
  policy: Policy,
  role: string,
  defaults: readonly string[],
  extra: readonly string[],
): Set<string> {
  return new Set([...defaults, ...extra].filter((s) => policy.reaches(role, s)))
}

/** A catalogue tool as the preview needs it: its canonical parts and its definition (what the client would receive). */
export interface PreviewTool {
  server: string
  name: string
  def: unknown
}

/** Estimated tokens of tool definitions: characters of their JSON divided by 4 (a rough, stated rule of thumb). */
export function estimateSchemaTokens(defs: Iterable<unknown>): number {
  let chars = 0
  for (const d of defs) chars += JSON.stringify(d)?.length ?? 0
  return Math.ceil(chars / 4)
}

/** The result of {@link previewActivation}. */
export type PreviewResult =
  | { ok: true; skill: string; alreadyActive: boolean; added: string[]; removed: string[]; addedTokens: number }
  | { ok: false; error: string }

/**
 * What activating `name` would change for a principal (pure): the canonical
 * ids (`server:tool`) that appear and disappear among `tools` (activation
 * only adds, so `removed` is empty unless the policy changed in between),
 * and the estimated token size of the added definitions
 * ({@link estimateSchemaTokens}). An unreachable, disabled or nonexistent
 * skill gets the {@link unknownSkill} message, identical for all three.
 * Built-ins are not in `tools`; the caller adds them if it wants.
 */
export function previewActivation(
  policy: Policy,
  role: string,
  active: ReadonlySet<string>,
  name: string,
  tools: Iterable<PreviewTool>,
): PreviewResult {
  if (!policy.reaches(role, name)) return { ok: false, error: unknownSkill(name).error.message }
  const before = policy.filter(role, active)
  const after = policy.filter(role, new Set([...before.active, name]))
  const added: string[] = []
  const removed: string[] = []
  const addedDefs: unknown[] = []
  for (const t of tools) {
    const was = before.toolVisible(t.server, t.name)
    const is = after.toolVisible(t.server, t.name)
    if (is && !was) {
      added.push(`${t.server}:${t.name}`)
      addedDefs.push(t.def)
    } else if (was && !is) removed.push(`${t.server}:${t.name}`)
  }
  return {
    ok: true,
    skill: name,
    alreadyActive: before.active.has(name),
    added,
    removed,
    addedTokens: estimateSchemaTokens(addedDefs),
  }
}

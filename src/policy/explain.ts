import { patternMatches } from './patterns.js'
import type { ResolvedRole } from './roles.js'
import { BUILTIN_SERVER, BUILTIN_TOOLS, MEMORY_BUILTINS, META_BUILTINS, RUN_CODE_TOOL, type Policy } from './policy.js'

/** One step of an explanation: a rule and what it said. */
interface ExplainStep {
  rule: string
  verdict: 'allows' | 'denies' | 'info'
  detail: string
}

/** The verdict for one tool and role, with the steps that led to it (for people: names anything). */
export interface Explanation {
  tool: string
  role: string
  visible: boolean
  steps: ExplainStep[]
}

/** Whether a role's views are in code mode, and the setting that decided it (principal/policy-mode.ts's codeModeOf). */
export interface CodeModeSetting {
  on: boolean
  by: string
}

/** Code mode for the role, for sessions of `myc serve` and for the agent. */
export interface CodeModeFacts {
  sessions: CodeModeSetting
  agent: CodeModeSetting
}

/** The meta tools a session in code mode lists besides search_tools and run_code (principal/code-view.ts). */
const CODE_LISTED = new Set(['list_skills', 'activate_skill', 'deactivate_skill', 'get_context', 'search_tools'])

const isMeta = (tool: string) => (META_BUILTINS as readonly string[]).includes(tool)
const isMemory = (tool: string) => (MEMORY_BUILTINS as readonly string[]).includes(tool)

/**
 * Why `server:tool` is visible or hidden for a role with the given active
 * skills, rule by rule (for `myc explain`; a person's tool, never the agent's).
 * Steps come in order: catalogue, role, each skill whose patterns match
 * (disabled by strict loading / out of the role's reach or cap / inactive /
 * granting), the memory grant for memory built-ins, then each deny pattern
 * that matches. `visible` agrees with {@link Policy.filter}'s `toolVisible`
 * (and with {@link visibleBuiltins} for the meta tools). Built-ins of server
 * `mycelium` are always in the catalogue; `metaTools` (default true) is the
 * config's `session.metaTools`; `available`, as for {@link visibleBuiltins},
 * narrows the other built-ins to those the process can run (one outside it
 * is hidden whatever the skills say). Active skills the role cannot reach
 * count for nothing, as in the filter. With `codeMode`, `mycelium:run_code`
 * is explained by it (visible when the role's sessions are in code mode),
 * and a tool a session in code mode does not list says how it is reached.
 */
export function explainTool(policy: Policy, input: ExplainInput & { codeMode?: CodeModeFacts }): Explanation {
  if (input.codeMode && input.server === BUILTIN_SERVER && input.tool === RUN_CODE_TOOL)
    return explainRunCode(policy, input.role, input.codeMode)
  const explained = explainByPolicy(policy, input)
  if (explained.visible && input.codeMode?.sessions.on)
    explained.steps.push(codeModeNote(input.server, input.tool, input.role))
  return explained
}

/** run_code: no skill or pattern decides it, code mode does (for sessions; the agent's is told beside). */
function explainRunCode(policy: Policy, role: string, code: CodeModeFacts): Explanation {
  const id = `${BUILTIN_SERVER}:${RUN_CODE_TOOL}`
  if (!policy.roles.has(role))
    return {
      tool: id,
      role,
      visible: false,
      steps: [
        {
          rule: 'role',
          verdict: 'denies',
          detail: `unknown role "${role}" (roles: ${[...policy.roles.keys()].join(', ') || 'none'})`,
        },
      ],
    }
  const said = (s: CodeModeSetting) => `${s.on ? 'on' : 'off'} (${s.by})`
  return {
    tool: id,
    role,
    visible: code.sessions.on,
    steps: [
      {
        rule: 'code mode',
        verdict: code.sessions.on ? 'allows' : 'denies',
        detail: `code mode for role ${role}'s sessions is ${said(code.sessions)}`,
      },
      {
        rule: 'code mode (agent)',
        verdict: 'info',
        detail: `for the agent (myc run, workflow, adhoc, chat) it is ${said(code.agent)}`,
      },
      ...(code.sessions.on || code.agent.on
        ? [
            {
              rule: 'sandbox',
              verdict: 'info' as const,
              detail:
                "offered only where bubblewrap runs the code; myc doctor's code mode check says whether it does here",
            },
          ]
        : []),
    ],
  }
}

/** What a session in code mode does with a tool it may call: lists it, or not (callable by name and from the code). */
function codeModeNote(server: string, tool: string, role: string): ExplainStep {
  const listed = server === BUILTIN_SERVER && CODE_LISTED.has(tool)
  return {
    rule: 'code mode',
    verdict: 'info',
    detail: listed
      ? `role ${role}'s sessions are in code mode, which lists it`
      : `role ${role}'s sessions are in code mode: not listed, callable by its name and from run_code as tools.${server}.${tool}`,
  }
}

/** The tool, the role and what decides it besides the policy: {@link explainTool}'s input. */
export interface ExplainInput {
  server: string
  tool: string
  role: string
  active: ReadonlySet<string>
  inCatalogue: boolean
  metaTools?: boolean
  available?: ReadonlySet<string>
}

/** The verdict of the skills, the role and the built-ins' rules (everything but code mode). */
function explainByPolicy(policy: Policy, input: ExplainInput): Explanation {
  const { server, tool, role } = input
  const steps: ExplainStep[] = []
  const id = `${server}:${tool}`
  const builtin = server === BUILTIN_SERVER
  const inCatalogue = builtin ? BUILTIN_TOOLS.has(tool) : input.inCatalogue
  if (!inCatalogue)
    steps.push({
      rule: 'catalogue',
      verdict: 'denies',
      detail: builtin ? `myc has no built-in tool "${tool}"` : `no running server offers ${id}`,
    })
  const resolved = policy.roles.get(role)
  if (!resolved) {
    steps.push({
      rule: 'role',
      verdict: 'denies',
      detail: `unknown role "${role}" (roles: ${[...policy.roles.keys()].join(', ') || 'none'})`,
    })
    return { tool: id, role, visible: false, steps }
  }
  const active = countingSkills(policy, input, steps)
  if (builtin && isMeta(tool)) return explainMetaTool(input, id, steps)
  const unavailable = builtin && inCatalogue && input.available !== undefined && !input.available.has(tool)
  if (unavailable)
    steps.push({
      rule: 'built-ins',
      verdict: 'denies',
      detail: `myc does not serve ${id} (it serves ${[...input.available!].map((t) => `${BUILTIN_SERVER}:${t}`).join(', ') || 'no other built-in'} besides the meta tools)`,
    })
  const explaining: Explaining = { policy, input, id, resolved, active, steps }
  // Memory built-ins follow the memory grant, not the patterns.
  const granted = builtin && isMemory(tool) ? memoryGrant(explaining) : skillGrants(explaining)
  return finish(policy, {
    id,
    role,
    server,
    tool,
    steps,
    visible: inCatalogue && !unavailable && granted,
    chain: resolved.chain,
  })
}

/** What the steps of {@link explainByPolicy} after the role share: the question, the role, the skills that count, the steps so far. */
interface Explaining {
  policy: Policy
  input: ExplainInput
  id: string
  resolved: ResolvedRole
  /** The active skills the role reaches (the others count for nothing). */
  active: ReadonlySet<string>
  steps: ExplainStep[]
}

/** The active skills that count (those the role reaches), with a step for each that does not. */
function countingSkills(policy: Policy, input: ExplainInput, steps: ExplainStep[]): Set<string> {
  const { role } = input
  const active = new Set([...input.active].filter((s) => policy.reaches(role, s)))
  for (const s of input.active)
    if (!active.has(s))
      steps.push({
        rule: `skill ${s}`,
        verdict: 'info',
        detail: `listed as active but ${policy.skills.has(s) ? (policy.disabled.has(s) ? 'disabled by strict loading' : `not reachable by role ${role}`) : 'does not exist'}: it counts for nothing`,
      })
  return active
}

/** A meta tool: served to every policy-mode session unless session.metaTools is false. */
function explainMetaTool(input: ExplainInput, id: string, steps: ExplainStep[]): Explanation {
  const on = input.metaTools !== false
  steps.push({
    rule: 'meta tools',
    verdict: on ? 'allows' : 'denies',
    detail: on ? 'meta tools are served to every policy-mode session' : 'session.metaTools is false',
  })
  return { tool: id, role: input.role, visible: on, steps }
}

/** A memory built-in: each skill of the role that grants memory, then the grant the active ones make. Whether there is one. */
function memoryGrant({ policy, input, active, steps }: Explaining): boolean {
  const { role } = input
  const granting = policy.reachable(role).filter((s) => s.grants.memory !== 'none')
  for (const s of granting)
    steps.push({
      rule: `skill ${s.name}`,
      verdict: active.has(s.name) ? 'allows' : 'info',
      detail: `grants memory (${s.grants.memory})${active.has(s.name) ? '' : ' once activated'}`,
    })
  const access = policy.filter(role, active).memoryAccess
  const memory = access.grant
  if (memory === 'none')
    steps.push({ rule: 'memory grant', verdict: 'denies', detail: 'no active skill grants memory (grants.memory)' })
  else
    steps.push({
      rule: 'memory grant',
      verdict: 'allows',
      detail: `${memory}: reads ${access.readable === 'all' ? 'every role' : [...access.readable].sort().join(', ')}; writes ${role}`,
    })
  return memory !== 'none'
}

/** Any other tool: a step for each skill whose patterns match it, then whether an active one grants it. */
function skillGrants(explaining: Explaining): boolean {
  const { policy, input, id, active, steps } = explaining
  let granted = false
  for (const skill of policy.skills.values()) {
    const matching = policy
      .parsedPatternsOf(skill.name)
      .filter((p) => patternMatches(p, input.server, input.tool))
      .map((p) => p.source)
    if (matching.length === 0) continue
    const step = skillStep(explaining, skill, matching)
    if (step.verdict === 'allows') granted = true
    steps.push(step)
  }
  if (!granted)
    steps.push({
      rule: 'active skills',
      verdict: 'denies',
      detail: active.size > 0 ? `no active skill (${[...active].join(', ')}) grants ${id}` : 'no skill is active',
    })
  return granted
}

/** What one skill whose patterns match the tool says of it: disabled, out of the role's reach or cap, inactive, or granting. */
function skillStep(
  { policy, input, resolved, active }: Explaining,
  skill: { name: string; allowedRoles: readonly string[] },
  matching: readonly string[],
): ExplainStep {
  const rule = `skill ${skill.name}`
  const disabled = policy.disabled.get(skill.name)
  if (disabled)
    return {
      rule,
      verdict: 'info',
      detail: `would grant it (${matching.join(', ')}) but is disabled by strict loading: ${disabled.reasons.join('; ')}`,
    }
  if (!resolved.skills.has(skill.name)) {
    const capped = resolved.cap && !resolved.cap.has(skill.name)
    return {
      rule,
      verdict: 'info',
      detail: `grants it (${matching.join(', ')}) but role ${input.role} does not reach this skill${capped ? ' (not in its allowedSkills cap)' : ` (allowedRoles: ${skill.allowedRoles.join(', ') || 'none'})`}`,
    }
  }
  if (!active.has(skill.name))
    return { rule, verdict: 'info', detail: `grants it (${matching.join(', ')}) once activated` }
  return { rule, verdict: 'allows', detail: `active, and allowedTools has ${matching.join(', ')}` }
}

/** Adds the deny steps (deny wins over allow) and the verdict. */
function finish(
  policy: Policy,
  r: {
    id: string
    role: string
    server: string
    tool: string
    steps: ExplainStep[]
    visible: boolean
    chain: readonly string[]
  },
): Explanation {
  const denied = policy.denyOf(r.role).patterns.filter((p) => patternMatches(p, r.server, r.tool))
  for (const p of denied)
    r.steps.push({
      rule: `role ${r.role} deny`,
      verdict: 'denies',
      detail: `"${p.source}" matches (deny wins over allow)${r.chain.length > 1 ? `; deny lists of ${r.chain.join(' → ')} apply` : ''}`,
    })
  return { tool: r.id, role: r.role, visible: r.visible && denied.length === 0, steps: r.steps }
}

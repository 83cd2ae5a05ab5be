import type { CallToolResult, Tool } from '@modelcontextprotocol/client'
import type { Logger } from '../logger.js'
import { decideActivation, decideDeactivation, type Actor, type EscalationMode } from '../policy/escalation.js'
import { BUILTIN_SERVER, type PrincipalFilter } from '../policy/policy.js'
import type { PromptEntry, ToolEntry } from '../registry/catalogue.js'
import { toWireName, type WireNameOptions } from '../registry/wire-names.js'
import type { BuiltinCallContext, PrincipalView } from './view.js'
import type { ServedSkill } from '../skills/skill-index.js'
import type { AuditInstance, AuditSink } from '../audit.js'
import { EXEC_TOOL_DEFS, type BuiltinRunner } from './builtin-exec.js'
import { activateSkillDef, META_TOOL_DEFS, META_TOOLS, type MetaToolName } from './meta-tools.js'
import { oneLine, rankTools, type ToolDoc } from './tool-search.js'
import type { PolicyState } from './policy-state.js'
import type { MemoryStore } from '../memory/memory-store.js'
import { MEMORY_TOOL_DEFS, callMemoryTool, type MemoryToolName } from '../memory/memory-tools.js'

export interface PolicyViewOptions {
  state: PolicyState
  role: string
  initialSkills: ReadonlySet<string>
  mode: EscalationMode
  protectedSkills: ReadonlySet<string>
  metaTools: boolean
  naming: WireNameOptions
  audit: AuditSink
  logger: Logger
  /** The live catalogue's tools (for get_context counts and the tool diffs of (de)activation). */
  catalogueTools: () => readonly ToolEntry[]
  /** Runs `mycelium:exec` and `mycelium:run_script` (absent: those tools do not exist). */
  runner?: BuiltinRunner
  /** How the session reaches myc, for the audit log (default stdio). */
  transport?: 'stdio' | 'http'
  /** Role memory (absent: the memory tools do not exist, whatever the grants). */
  memory?: MemoryStore
}

function text(message: string, isError = false, structured?: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: 'text', text: message }],
    ...(structured ? { structuredContent: structured } : {}),
    ...(isError ? { isError: true } : {}),
  }
}

/**
 * Policy mode for one session (docs/policy.md): the principal is the
 * role chosen by whoever launched myc plus the skills active now. Tools of
 * inactive or unreachable skills do not exist for it; the meta tools let the
 * agent see and change its skills within what the role reaches.
 */
export class PolicyView implements PrincipalView {
  private active: Set<string>
  private readonly listeners = new Set<() => void>()
  private readonly metaByWire = new Map<string, MetaToolName>()
  /** The meta tools as listed, kept while the role's reachable skills (activate_skill's enum) stay the same. */
  private metaWire: { skills: string; tools: readonly Tool[] } | undefined
  private readonly execWire: Array<{ name: 'exec' | 'run_script'; tool: Tool }>
  private readonly execByWire = new Map<string, 'exec' | 'run_script'>()
  private readonly memoryWire: Array<{ name: MemoryToolName; tool: Tool }>
  private readonly memoryByWire = new Map<string, MemoryToolName>()

  constructor(private readonly options: PolicyViewOptions) {
    this.active = new Set(options.initialSkills)
    if (options.metaTools)
      for (const name of META_TOOLS) this.metaByWire.set(toWireName(BUILTIN_SERVER, name, options.naming), name)
    this.execWire = options.runner
      ? (['exec', 'run_script'] as const).map((name) => {
          const wireName = toWireName(BUILTIN_SERVER, name, options.naming)
          this.execByWire.set(wireName, name)
          return { name, tool: { name: wireName, ...EXEC_TOOL_DEFS[name] } }
        })
      : []
    this.memoryWire = options.memory
      ? (['save_memory', 'recall_memory', 'list_memories'] as const).map((name) => {
          const wireName = toWireName(BUILTIN_SERVER, name, options.naming)
          this.memoryByWire.set(wireName, name)
          return { name, tool: { name: wireName, ...MEMORY_TOOL_DEFS[name] } }
        })
      : []
    options.audit.write({
      event: 'session_start',
      role: options.role,
      skills: [...this.active],
      transport: options.transport ?? 'stdio',
    })
  }

  get role(): string {
    return this.options.role
  }

  /** The active skills (only those the role reaches and strict loading kept). */
  get activeSkills(): string[] {
    return [...this.filter.active]
  }

  private cached: { policy: unknown; filter: PrincipalFilter } | undefined

  /** The principal's filter, recomputed only when the active skills or the policy change. */
  private get filter(): PrincipalFilter {
    const policy = this.options.state.policy
    if (this.cached?.policy !== policy) this.cached = { policy, filter: policy.filter(this.options.role, this.active) }
    return this.cached.filter
  }

  /** Changes whenever what this principal sees changes (the server caches its lists by it). */
  revision(): unknown {
    return this.filter
  }

  toolVisible(entry: ToolEntry): boolean {
    return this.filter.toolVisible(entry.server, entry.name)
  }

  promptVisible(entry: PromptEntry): boolean {
    return this.filter.serverReached(entry.server)
  }

  serverVisible(server: string): boolean {
    return this.filter.serverReached(server)
  }

  private builtinCache: { filter: PrincipalFilter; tools: readonly Tool[] } | undefined

  builtinTools(): readonly Tool[] {
    const filter = this.filter
    if (this.builtinCache?.filter !== filter) {
      const gated = [...this.execWire, ...this.memoryWire]
        .filter((e) => filter.toolVisible(BUILTIN_SERVER, e.name))
        .map((e) => e.tool)
      this.builtinCache = { filter, tools: [...this.metaTools(), ...gated] }
    }
    return this.builtinCache.tools
  }

  /** The meta tools, activate_skill naming the skills the role reaches; the same objects while those stay the same (seen-lists.ts). */
  private metaTools(): readonly Tool[] {
    if (!this.options.metaTools) return []
    const skills = this.options.state.policy.reachable(this.options.role).map((s) => s.name)
    const key = skills.join('\n')
    if (this.metaWire?.skills !== key) {
      const tools = [...this.metaByWire].map(([wireName, name]) => ({
        name: wireName,
        ...(name === 'activate_skill' ? activateSkillDef(skills) : META_TOOL_DEFS[name]),
      }))
      this.metaWire = { skills: key, tools }
    }
    return this.metaWire.tools
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener)
    const off = this.options.state.onDisabledChange(listener)
    return () => {
      this.listeners.delete(listener)
      off()
    }
  }

  private skillCache: { policy: unknown; served: readonly ServedSkill[]; servers: Map<string, boolean> } | undefined

  /** Per policy (the role's reach changes only when the policy is rebuilt): the served skills and the child servers reached. */
  private skillView(): { served: readonly ServedSkill[]; servers: Map<string, boolean> } {
    const policy = this.options.state.policy
    if (this.skillCache?.policy !== policy) {
      const reachable = policy.reachable(this.options.role)
      const index = this.options.state.sources.skillIndex
      this.skillCache = {
        policy,
        served: reachable.map((s) => index.get(s.name)).filter((s): s is ServedSkill => s !== undefined),
        servers: new Map(),
      }
    }
    return this.skillCache
  }

  servedSkills(): readonly ServedSkill[] {
    return this.skillView().served
  }

  childSkillsVisible(server: string): boolean {
    const view = this.skillView()
    let seen = view.servers.get(server)
    if (seen === undefined) {
      const policy = this.options.state.policy
      seen = policy
        .filter(this.options.role, new Set(policy.reachable(this.options.role).map((s) => s.name)))
        .serverReached(server)
      view.servers.set(server, seen)
    }
    return seen
  }

  recordCall(call: {
    name: string
    outcome: 'ok' | 'error' | 'denied'
    durationMs: number
    argumentKeys: string[]
    runId?: string
    instance?: AuditInstance
  }): void {
    this.options.audit.write({
      event: 'tool_call',
      role: this.options.role,
      tool: call.name,
      outcome: call.outcome,
      durationMs: call.durationMs,
      argumentKeys: call.argumentKeys,
      ...(call.runId !== undefined ? { runId: call.runId } : {}),
      ...(call.instance ? { instance: call.instance } : {}),
    })
  }

  callBuiltin(
    wireName: string,
    args: Record<string, unknown>,
    ctx: () => BuiltinCallContext,
  ): Promise<CallToolResult> | undefined {
    const execName = this.execByWire.get(wireName)
    if (execName && this.options.runner && this.filter.toolVisible(BUILTIN_SERVER, execName))
      return this.runExec(execName, args)
    const memoryName = this.memoryByWire.get(wireName)
    if (memoryName && this.options.memory && this.filter.toolVisible(BUILTIN_SERVER, memoryName))
      return callMemoryTool(memoryName, args, this.options.memory, this.filter.memoryAccess)
    const meta = this.metaByWire.get(wireName)
    if (!meta) return undefined
    switch (meta) {
      case 'list_skills':
        return Promise.resolve(this.listSkills())
      case 'get_context':
        return Promise.resolve(this.context())
      case 'activate_skill':
        return this.activate(String(args.name ?? ''), 'agent', ctx())
      case 'deactivate_skill':
        return Promise.resolve(this.deactivate(String(args.name ?? ''), 'agent'))
      case 'search_tools':
        return Promise.resolve(this.searchTools(args))
    }
  }

  private runExec(name: 'exec' | 'run_script', args: Record<string, unknown>): Promise<CallToolResult> {
    const runner = this.options.runner!
    if (name === 'exec') {
      if (typeof args.command !== 'string' || args.command.trim() === '')
        return Promise.resolve(text('exec needs "command": a shell command line', true))
      return runner.exec(args.command)
    }
    const skillName = String(args.skill ?? '')
    // Only an active skill's scripts: any other name gets the unknown-skill answer.
    const skill = this.filter.active.has(skillName) ? this.options.state.policy.skills.get(skillName) : undefined
    if (!skill)
      return Promise.resolve(
        text(`Unknown skill: ${skillName}. Call list_skills to see the skills you can activate.`, true),
      )
    const scriptArgs = Array.isArray(args.args) ? args.args.map(String) : []
    return runner.runScript(skill, String(args.script ?? ''), scriptArgs)
  }

  describe(): { role: string; activeSkills: Array<{ name: string; instructions: string }> } {
    const skills = this.options.state.policy.skills
    return {
      role: this.options.role,
      activeSkills: this.activeSkills.map((name) => ({ name, instructions: skills.get(name)?.instructions ?? '' })),
    }
  }

  reachableSkills(): Array<{ name: string; triggers: readonly string[]; active: boolean; instructions: string }> {
    const active = this.filter.active
    return this.options.state.policy
      .reachable(this.options.role)
      .map((s) => ({ name: s.name, triggers: s.triggers, active: active.has(s.name), instructions: s.instructions }))
  }

  private listSkills(): CallToolResult {
    const active = this.filter.active
    const skills = this.options.state.policy
      .reachable(this.options.role)
      .map((s) => ({ name: s.name, description: s.description, triggers: s.triggers, active: active.has(s.name) }))
    const lines = skills.map(
      (s) =>
        `- ${s.name}${s.active ? ' (active)' : ''}: ${s.description}${s.triggers.length ? ` [triggers: ${s.triggers.join(', ')}]` : ''}`,
    )
    return text(lines.length > 0 ? lines.join('\n') : 'No skills are available to this session.', false, { skills })
  }

  /**
   * Every tool the role could reach by activating its skills (visible now or
   * not), with the skills that bring each in. Only reachable skills count,
   * so a tool the role cannot reach is never a candidate.
   */
  private searchableTools(): ToolDoc[] {
    const { state, role } = this.options
    const policy = state.policy
    const now = this.filter
    const skills = policy.reachable(role).map((s) => ({
      name: s.name,
      filter: policy.filter(role, new Set([s.name])),
      context: [s.description, ...s.triggers].join(' '),
    }))
    const docs: ToolDoc[] = []
    const consider = (server: string, name: string, wireName: string, description: string) => {
      const bringing = skills.filter((s) => s.filter.toolVisible(server, name))
      const active = now.toolVisible(server, name)
      if (bringing.length === 0 && !active) return
      docs.push({
        name: wireName,
        description: oneLine(description),
        skills: bringing.map((s) => s.name),
        active,
        context: bringing.map((s) => s.context).join(' '),
      })
    }
    for (const e of this.options.catalogueTools()) consider(e.server, e.name, e.wireName, e.def.description ?? '')
    for (const e of [...this.execWire, ...this.memoryWire])
      consider(BUILTIN_SERVER, e.name, e.tool.name, e.tool.description ?? '')
    return docs
  }

  private searchTools(args: Record<string, unknown>): CallToolResult {
    const query = typeof args.query === 'string' ? args.query : ''
    if (query.trim() === '') return text('search_tools needs "query": words for what the tool should do', true)
    const limit =
      typeof args.limit === 'number' && Number.isInteger(args.limit) ? Math.min(50, Math.max(1, args.limit)) : 8
    const hits = rankTools(this.searchableTools(), query, limit).map((h) => ({
      name: h.name,
      description: h.description,
      skills: [...h.skills],
      active: h.active,
    }))
    const lines = hits.map(
      (h) => `- ${h.name} (${h.active ? 'active' : `skill: ${h.skills.join(' or ')}`}): ${h.description}`,
    )
    return text(
      lines.length > 0 ? lines.join('\n') : 'No tool matches those words. list_skills shows your skills.',
      false,
      { tools: hits },
    )
  }

  private context(): CallToolResult {
    const context = {
      role: this.options.role,
      activeSkills: this.activeSkills,
      visibleTools: this.visibleCount(),
      escalation: this.options.mode,
    }
    return text(
      `role: ${context.role}\nactive skills: ${context.activeSkills.join(', ') || 'none'}\nvisible tools: ${context.visibleTools}\nescalation: ${context.escalation}`,
      false,
      context,
    )
  }

  /** Activates a skill for this session; `person` bypasses `ask`/`manual` (the CLI and REPL). */
  async activate(name: string, actor: Actor, ctx?: BuiltinCallContext): Promise<CallToolResult> {
    const { state, role, mode, protectedSkills, audit } = this.options
    const policy = state.policy
    let decision = decideActivation(policy, { role, active: this.active, mode, protectedSkills }, name, actor)
    if (decision.ok && decision.action === 'ask') {
      if (!ctx?.elicit) {
        audit.write({
          event: 'skill_refused',
          role,
          skill: name,
          reason: 'needs approval; the client cannot ask the user',
        })
        return text(
          `Activating skill ${name} needs the user's approval, and this client cannot ask for it (no elicitation support). Ask the user to activate it.`,
          true,
        )
      }
      const skill = policy.skills.get(name)!
      const answer = await ctx.elicit(
        `The agent wants to activate the skill "${name}": ${skill.description}. Allow it?`,
        {
          type: 'object',
          properties: { approve: { type: 'boolean', title: `Activate ${name}`, default: true } },
          required: ['approve'],
        },
      )
      if (answer.action !== 'accept' || answer.content?.approve === false) {
        audit.write({
          event: 'skill_refused',
          role,
          skill: name,
          reason: `user ${answer.action === 'accept' ? 'declined' : answer.action}`,
        })
        return text(`The user did not approve activating skill ${name}.`, true)
      }
      decision = decideActivation(policy, { role, active: this.active, mode: 'auto', protectedSkills }, name, actor)
    }
    if (!decision.ok) {
      audit.write({ event: 'skill_refused', role, skill: name, reason: decision.error.code })
      return text(decision.error.message, true)
    }
    if (decision.action === 'ask') return text(`Skill ${name} needs approval.`, true)
    if (decision.action === 'none') return this.activationResult(name, [], true)
    const before = this.filter
    this.active = new Set(decision.active)
    this.cached = undefined
    const after = this.filter
    audit.write({ event: 'skill_activated', role, skill: name, by: actor })
    const added = this.diff(before, after)
    this.emit()
    return this.activationResult(name, added, false)
  }

  private activationResult(name: string, added: string[], already: boolean): CallToolResult {
    const skill = this.options.state.policy.skills.get(name)!
    const header = already
      ? `Skill ${name} is already active.`
      : `Skill ${name} is active.${added.length ? ` Tools added: ${added.join(', ')}.` : ''}`
    return text(`${header}\n\n${skill.instructions}`.trim(), false, {
      skill: name,
      instructions: skill.instructions,
      addedTools: added,
    })
  }

  private visibleCount(): number {
    const filter = this.filter
    return (
      this.builtinTools().length +
      this.options.catalogueTools().filter((e) => filter.toolVisible(e.server, e.name)).length
    )
  }

  /** Wire names of the tools visible to `b` but not to `a`: the built-ins a skill gates (exec, memory tools), then the catalogue's. */
  private diff(a: PrincipalFilter, b: PrincipalFilter): string[] {
    const builtins = [...this.execWire, ...this.memoryWire]
      .filter((e) => b.toolVisible(BUILTIN_SERVER, e.name) && !a.toolVisible(BUILTIN_SERVER, e.name))
      .map((e) => e.tool.name)
    const children = this.options
      .catalogueTools()
      .filter((e) => b.toolVisible(e.server, e.name) && !a.toolVisible(e.server, e.name))
      .map((e) => e.wireName)
    return [...builtins, ...children]
  }

  deactivate(name: string, actor: Actor): CallToolResult {
    const { state, role, mode, protectedSkills, audit } = this.options
    const decision = decideDeactivation(state.policy, { role, active: this.active, mode, protectedSkills }, name)
    if (!decision.ok) {
      audit.write({ event: 'skill_refused', role, skill: name, reason: decision.error.code })
      return text(decision.error.message, true)
    }
    if (decision.action !== 'activate') return text(`Skill ${name} is not active.`)
    const before = this.filter
    this.active = new Set(decision.active)
    this.cached = undefined
    const after = this.filter
    audit.write({ event: 'skill_deactivated', role, skill: name, by: actor })
    const removed = this.diff(after, before)
    this.emit()
    return text(
      `Skill ${name} is no longer active.${removed.length ? ` Tools removed: ${removed.join(', ')}.` : ''}`,
      false,
      { skill: name, removedTools: removed },
    )
  }

  private emit(): void {
    for (const listener of this.listeners) listener()
  }
}

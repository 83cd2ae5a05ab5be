import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { systemPrompt } from '../agent/system-prompt.js'
import type { LoadedConfig } from '../config/load.js'
import { MycError } from '../errors.js'
import type { Logger } from '../logger.js'
import { BuiltinRunner } from '../principal/builtin-exec.js'
import type { CodeRuns } from '../code/code-runner.js'
import { codeModeView } from '../principal/code-view.js'
import { checkViewRequest, codeModeDefault, codeModeOf, createView, type PolicyMode } from '../principal/policy-mode.js'
import { TOKEN_COUNTER, textTokens, toolTokens } from '../principal/token-count.js'
import { lazyOpenView } from '../principal/lazy-view.js'
import { openView, type PrincipalView } from '../principal/view.js'
import { visibleTools } from '../runtime/principal-tools.js'
import type { Runtime } from '../runtime/runtime.js'
import { commonArgs, jsonArgs, printJson, printResult, commandLogger } from './_shared.js'
import { withStartedRuntime, type Inspection } from './_runtime.js'

/** How much of a tools/list one principal gets. */
interface ListCost {
  tools: number
  tokens: number
  /** Of open mode's tokens (1 = as much). */
  ratio: number
}

/** What a session in code mode lists (search_tools, run_code and the skill tools, whatever its skills), and whether the role's sessions and agent runs are in code mode. */
interface CodeCost extends ListCost {
  sessions: boolean
  agent: boolean
}

interface RoleCost {
  role: string
  codeMode: CodeCost
  /** `session.defaultSkills` (kept to what the role reaches): what a session starts with. */
  start: ListCost & { skills: string[] }
  /** Every skill the role reaches, active. */
  allSkills: ListCost & { skills: string[] }
  /** The largest tools the role can reach, largest first. */
  largest: Array<{ name: string; tokens: number }>
  /** The agent's system prompt (`myc run`) at session start. */
  systemPrompt: { tokens: number }
}

const LARGEST = 5

export default defineCommand({
  meta: {
    name: 'tokens',
    description: 'What the tool lists cost a model, per role: at start, all skills active, open mode',
  },
  args: {
    ...commonArgs,
    ...jsonArgs,
    role: { type: 'string', description: 'Only this role (default: every role)', valueHint: 'role' },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const logger = commandLogger(io, { verbose: args.verbose, quiet: true })
    const check = ({ loaded, mode }: Omit<Inspection, 'runtime'>) => checkRole(mode, loaded, args.role)
    const report = await withStartedRuntime({ io, args, logger, check }, async ({ runtime, loaded, mode }) =>
      tokensReport(runtime, loaded, mode, logger, args.role, await listingRunner(loaded)),
    )
    if (args.json) printJson(io, { ok: true, ...report })
    else printResult(io, render(report))
    return 0
  },
})

/** `--role`: refused in open mode (no roles), and unless it is a role here; before any child starts. */
function checkRole(mode: PolicyMode, loaded: LoadedConfig, role: string | undefined): void {
  if (role === undefined) return
  if (mode.kind === 'open') checkViewRequest(mode, loaded, { role, env: {} })
  else if (!mode.state.roles.has(role))
    throw new MycError(
      'usage',
      `--role: no role "${role}" (roles: ${[...mode.state.roles.keys()].join(', ') || 'none'})`,
    )
}

/** Code mode's runner as `myc tokens` needs it: the limits and language run_code's description names, and a run that runs nothing. */
async function listingRunner(loaded: LoadedConfig): Promise<CodeRuns> {
  const { timeoutMs, memoryMb, maxOutputBytes } = loaded.config.codeMode
  return {
    limits: { timeoutMs, memoryMb, maxOutputBytes },
    setup: { typescript: await (await import('../code/code-mode.js')).stripsTypes() },
    run: async () => ({ kind: 'failed', message: 'myc tokens runs nothing' }),
  }
}

/** What counting a role needs: the runtime and config, views that write no audit and run nothing, and the two ways to cost a list. */
interface Counting {
  runtime: Runtime
  loaded: LoadedConfig
  state: Extract<PolicyMode, { kind: 'policy' }>['state']
  view: (role: string, skills: string[] | undefined) => PrincipalView
  ratio: (tokens: number) => number
  codeCost: (view: PrincipalView, on: { sessions: boolean; agent: boolean }) => CodeCost
}

function tokensReport(
  runtime: Runtime,
  loaded: LoadedConfig,
  mode: PolicyMode,
  logger: Logger,
  only: string | undefined,
  code: CodeRuns,
) {
  const openList = visibleTools(runtime, openView()).map((t) => t.def)
  const open = { tools: openList.length, tokens: toolTokens(openList) }
  const ratio = (tokens: number) => (open.tokens === 0 ? 0 : Math.round((tokens / open.tokens) * 1000) / 1000)
  /** What `view` lists in code mode, and whether the sessions and the agent are in it. */
  const codeCost = (view: PrincipalView, on: { sessions: boolean; agent: boolean }): CodeCost => {
    const options = { runner: code, naming: loaded.config.namespace, catalogueTools: () => runtime.catalogue.tools() }
    const list = visibleTools(runtime, codeModeView(view, options)).map((t) => t.def)
    const tokens = toolTokens(list)
    return { tools: list.length, tokens, ratio: ratio(tokens), ...on }
  }
  const codeMode = codeCost(openView(), {
    sessions: mode.kind === 'open' && codeModeDefault(loaded, 'session').on,
    agent: mode.kind === 'open' && codeModeDefault(loaded, 'agent').on,
  })
  // Lazy open mode (session.lazyTools): what an open session would list with it on.
  const lazyList = visibleTools(
    runtime,
    lazyOpenView(() => runtime.catalogue.tools(), loaded.config.namespace),
  ).map((t) => t.def)
  const lazyTokens = toolTokens(lazyList)
  const lazy: ListCost & { on: boolean } = {
    tools: lazyList.length,
    tokens: lazyTokens,
    ratio: ratio(lazyTokens),
    on: mode.kind === 'open' && loaded.config.session.lazyTools,
  }
  // --role was checked before the children started (checkRole).
  if (mode.kind === 'open') return { counter: TOKEN_COUNTER, open, lazy, codeMode, roles: [] as RoleCost[] }
  // Counting writes no session to the audit log; the sandbox is never run, only listed (as `myc serve` lists exec and run_script).
  const quiet: PolicyMode = { ...mode, audit: { write: () => {}, flush: () => Promise.resolve() } }
  const runner = new BuiltinRunner(
    { run: () => Promise.reject(new Error('myc tokens runs nothing')) },
    loaded.config,
    loaded.dir,
    [],
  )
  const view = (role: string, skills: string[] | undefined) =>
    createView(quiet, loaded, {
      role,
      ...(skills ? { skills } : {}),
      env: {},
      catalogue: runtime.catalogue,
      logger,
      runner,
    })
  const counting: Counting = { runtime, loaded, state: mode.state, view, ratio, codeCost }
  const roles = only !== undefined ? [only] : [...mode.state.roles.keys()]
  return { counter: TOKEN_COUNTER, open, lazy, codeMode, roles: roles.map((role) => roleCost(counting, role)) }
}

/** One role's figures: at start, every skill active, in code mode; its largest tools; the agent's system prompt. */
function roleCost(c: Counting, role: string): RoleCost {
  const cost = (view: PrincipalView) => {
    const list = visibleTools(c.runtime, view)
    const tokens = toolTokens(list.map((t) => t.def))
    return { list, cost: { tools: list.length, tokens, ratio: c.ratio(tokens) } }
  }
  const fresh = c.view(role, undefined)
  const full = c.view(
    role,
    c.state.policy.reachable(role).map((s) => s.name),
  )
  const start = cost(fresh)
  const all = cost(full)
  const described = fresh.describe?.() ?? { role, activeSkills: [] }
  const prompt = systemPrompt({
    role,
    activeSkills: described.activeSkills,
    servers: c.runtime,
    visible: (s) => fresh.serverVisible(s),
  })
  return {
    role,
    start: { ...start.cost, skills: described.activeSkills.map((s) => s.name) },
    allSkills: { ...all.cost, skills: full.describe?.().activeSkills.map((s) => s.name) ?? [] },
    codeMode: c.codeCost(fresh, {
      sessions: codeModeOf(c.state, role, codeModeDefault(c.loaded, 'session')).on,
      agent: codeModeOf(c.state, role, codeModeDefault(c.loaded, 'agent')).on,
    }),
    largest: all.list
      .map((t) => ({ name: t.wireName, tokens: toolTokens([t.def]) }))
      .sort((a, b) => b.tokens - a.tokens)
      .slice(0, LARGEST),
    systemPrompt: { tokens: textTokens(prompt) },
  }
}

function render(report: ReturnType<typeof tokensReport>): string {
  const pct = (ratio: number) => `${(ratio * 100).toFixed(1)}% of open mode`
  const lines = [
    `counter: ${report.counter}`,
    `open mode: ${report.open.tools} tools, ${report.open.tokens} tokens`,
    `lazy open mode (session.lazyTools${report.lazy.on ? ', on' : ''}): ${report.lazy.tools} tools, ${report.lazy.tokens} tokens (${pct(report.lazy.ratio)})`,
  ]
  const code = (c: CodeCost) =>
    `code mode (sessions ${c.sessions ? 'on' : 'off'}, agent ${c.agent ? 'on' : 'off'}): ${c.tools} tools, ${c.tokens} tokens (${pct(c.ratio)}), whatever the skills`
  if (report.roles.length === 0) lines.push(code(report.codeMode))
  for (const r of report.roles) {
    lines.push(
      '',
      `role ${r.role}`,
      `  session start: ${r.start.tools} tools, ${r.start.tokens} tokens (${pct(r.start.ratio)}; skills: ${r.start.skills.join(', ') || 'none'})`,
      `  every skill active: ${r.allSkills.tools} tools, ${r.allSkills.tokens} tokens (${pct(r.allSkills.ratio)}; skills: ${r.allSkills.skills.join(', ') || 'none'})`,
      `  ${code(r.codeMode)}`,
      `  largest: ${r.largest.map((t) => `${t.name} ${t.tokens}`).join(', ') || 'none'}`,
      `  system prompt (myc run) at start: ${r.systemPrompt.tokens} tokens`,
    )
  }
  if (report.roles.length === 0) lines.push('(open mode: no roles; every session gets every tool)')
  return lines.join('\n')
}

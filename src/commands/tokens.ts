import { defineCommand } from 'citty'
import { systemPrompt } from '../agent/system-prompt.js'
import type { LoadedConfig } from '../config/load.js'
import { MycError } from '../errors.js'
import { createLogger, type Logger } from '../logger.js'
import { BuiltinRunner } from '../principal/builtin-exec.js'
import { createView, type PolicyMode } from '../principal/policy-mode.js'
import { TOKEN_COUNTER, textTokens, toolTokens } from '../principal/token-count.js'
import { lazyOpenView } from '../principal/lazy-view.js'
import { openView, type PrincipalView } from '../principal/view.js'
import { visibleTools } from '../runtime/principal-tools.js'
import type { Runtime } from '../runtime/runtime.js'
import { commonArgs, jsonArgs, printJson, printResult } from './_shared.js'
import { withStartedRuntime } from './_runtime.js'

/** How much of a tools/list one principal gets. */
interface ListCost {
  tools: number
  tokens: number
  /** Of open mode's tokens (1 = as much). */
  ratio: number
}

interface RoleCost {
  role: string
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
  async run({ args }) {
    const logger = createLogger({ verbose: args.verbose, quiet: true })
    const report = await withStartedRuntime({ configPath: args.config, logger }, async ({ runtime, loaded, mode }) =>
      tokensReport(runtime, loaded, mode, logger, args.role),
    )
    if (args.json) printJson({ ok: true, ...report })
    else printResult(render(report))
    return 0
  },
})

function tokensReport(
  runtime: Runtime,
  loaded: LoadedConfig,
  mode: PolicyMode,
  logger: Logger,
  only: string | undefined,
) {
  const openList = visibleTools(runtime, openView()).map((t) => t.def)
  const open = { tools: openList.length, tokens: toolTokens(openList) }
  // Lazy open mode (session.lazyTools): what an open session would list with it on.
  const lazyList = visibleTools(
    runtime,
    lazyOpenView(() => runtime.catalogue.tools(), loaded.config.namespace),
  ).map((t) => t.def)
  const lazyTokens = toolTokens(lazyList)
  const lazy: ListCost & { on: boolean } = {
    tools: lazyList.length,
    tokens: lazyTokens,
    ratio: open.tokens === 0 ? 0 : Math.round((lazyTokens / open.tokens) * 1000) / 1000,
    on: mode.kind === 'open' && loaded.config.session.lazyTools,
  }
  if (mode.kind === 'open') {
    if (only !== undefined) createView(mode, loaded, { role: only, env: {}, catalogue: runtime.catalogue, logger }) // the open-mode usage error
    return { counter: TOKEN_COUNTER, open, lazy, roles: [] as RoleCost[] }
  }
  if (only !== undefined && !mode.state.roles.has(only))
    throw new MycError(
      'usage',
      `--role: no role "${only}" (roles: ${[...mode.state.roles.keys()].join(', ') || 'none'})`,
    )
  // Counting writes no session to the audit log; the sandbox is never run, only listed (as `myc serve` lists exec and run_script).
  const quiet: PolicyMode = { ...mode, audit: { write: () => {}, flush: () => Promise.resolve() } }
  const runner = new BuiltinRunner(
    { run: () => Promise.reject(new Error('myc tokens runs nothing')) },
    loaded.config,
    loaded.dir,
    [],
  )
  const cost = (view: PrincipalView) => {
    const list = visibleTools(runtime, view)
    const tokens = toolTokens(list.map((t) => t.def))
    return {
      list,
      cost: {
        tools: list.length,
        tokens,
        ratio: open.tokens === 0 ? 0 : Math.round((tokens / open.tokens) * 1000) / 1000,
      },
    }
  }
  const roles = only !== undefined ? [only] : [...mode.state.roles.keys()]
  return {
    counter: TOKEN_COUNTER,
    open,
    lazy,
    roles: roles.map((role): RoleCost => {
      const view = (skills: string[] | undefined) =>
        createView(quiet, loaded, {
          role,
          ...(skills ? { skills } : {}),
          env: {},
          catalogue: runtime.catalogue,
          logger,
          runner,
        })
      const fresh = view(undefined)
      const reachable = mode.state.policy.reachable(role).map((s) => s.name)
      const full = view(reachable)
      const start = cost(fresh)
      const all = cost(full)
      const described = fresh.describe?.() ?? { role, activeSkills: [] }
      const prompt = systemPrompt({
        role,
        activeSkills: described.activeSkills,
        servers: runtime,
        visible: (s) => fresh.serverVisible(s),
      })
      return {
        role,
        start: { ...start.cost, skills: described.activeSkills.map((s) => s.name) },
        allSkills: { ...all.cost, skills: full.describe?.().activeSkills.map((s) => s.name) ?? [] },
        largest: all.list
          .map((t) => ({ name: t.wireName, tokens: toolTokens([t.def]) }))
          .sort((a, b) => b.tokens - a.tokens)
          .slice(0, LARGEST),
        systemPrompt: { tokens: textTokens(prompt) },
      }
    }),
  }
}

function render(report: ReturnType<typeof tokensReport>): string {
  const pct = (ratio: number) => `${(ratio * 100).toFixed(1)}% of open mode`
  const lines = [
    `counter: ${report.counter}`,
    `open mode: ${report.open.tools} tools, ${report.open.tokens} tokens`,
    `lazy open mode (session.lazyTools${report.lazy.on ? ', on' : ''}): ${report.lazy.tools} tools, ${report.lazy.tokens} tokens (${pct(report.lazy.ratio)})`,
  ]
  for (const r of report.roles) {
    lines.push(
      '',
      `role ${r.role}`,
      `  session start: ${r.start.tools} tools, ${r.start.tokens} tokens (${pct(r.start.ratio)}; skills: ${r.start.skills.join(', ') || 'none'})`,
      `  every skill active: ${r.allSkills.tools} tools, ${r.allSkills.tokens} tokens (${pct(r.allSkills.ratio)}; skills: ${r.allSkills.skills.join(', ') || 'none'})`,
      `  largest: ${r.largest.map((t) => `${t.name} ${t.tokens}`).join(', ') || 'none'}`,
      `  system prompt (myc run) at start: ${r.systemPrompt.tokens} tokens`,
    )
  }
  if (report.roles.length === 0) lines.push('(open mode: no roles; every session gets every tool)')
  return lines.join('\n')
}

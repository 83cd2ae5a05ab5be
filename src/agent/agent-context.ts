import type Anthropic from '@anthropic-ai/sdk'
import type { CodeRunner } from '../code/code-runner.js'
import type { LoadedConfig } from '../config/load.js'
import { MycError } from '../errors.js'
import type { Logger } from '../logger.js'
import {
  checkViewRequest,
  codeModeDefault,
  codeModeOf,
  codeModeWanted,
  createView,
  type PolicyMode,
} from '../principal/policy-mode.js'
import type { BuiltinRunner } from '../principal/builtin-exec.js'
import type { PrincipalView } from '../principal/view.js'
import { openRuntime } from '../runtime/open-runtime.js'
import type { Runtime } from '../runtime/runtime.js'
import { loadAnthropicSdk, type AnthropicSdk } from './anthropic-sdk.js'
import { Budget, estimateTokens, resolveLimits, type BudgetFlags, type Price } from './budget.js'
import { agentCapabilities, modelSampler, workingDirectoryRoots, type ChildAnswers } from './child-questions.js'
import type { TokenUsage } from './events.js'
import { resolveModel } from './model.js'
import { childSessions } from '../eras/child-sessions.js'

/** What every agent face needs: the credentials check, the runtime, views, the model and the API client. */
export interface AgentContext {
  runtime: Runtime
  loaded: LoadedConfig
  mode: PolicyMode
  /** A principal's view: the role (else MYCELIUM_ROLE, else roles.default) with `--skills`, or exactly `only` (a worker). Not a worker's: the budget takes that role's caps. */
  viewFor: (role: string | undefined, only?: string[], roleFrom?: string) => PrincipalView
  model: string
  sdk: AnthropicSdk
  client: Anthropic
  /** How the agent answers what its children ask during a tool call (children were offered exactly this). */
  answers: ChildAnswers
  /** The tokens the model spent answering children's sampling so far (a live total). */
  sampledUsage: TokenUsage
  /** The run's caps and meter: every Messages API request of the run goes through it (src/agent/budget.ts). */
  budget: Budget
  /** Code mode's runner, when a role or `agent.codeMode` asks for it and it can run here (the views get run_code; a workflow's toolbox too). */
  codeRunner: CodeRunner | undefined
  /** Whether a role's runs are in code mode (its `codeMode`, else `agent.codeMode`), where code mode can run here. */
  codeModeFor: (role: string | null) => boolean
}

/** Says which variable to set when there are no credentials at all (before anything starts). */
function requireCredentials(env: Record<string, string | undefined>): void {
  if (!env.ANTHROPIC_API_KEY && !env.ANTHROPIC_AUTH_TOKEN) {
    throw new MycError(
      'api_key_missing',
      'no Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in the environment; ANTHROPIC_BASE_URL points myc at another endpoint',
    )
  }
}

/**
 * A cap given on the command line that even the smallest first request
 * (the task alone, before the system prompt and the tools, and an answer
 * of up to agent.maxTokens) would pass: a usage error naming the flag,
 * before any child starts, instead of a run that ends `budget` after
 * every child has started.
 */
function checkFlagCaps(flags: BudgetFlags, price: Price, taskTokens: number, maxTokens: number): void {
  if (flags.maxUsd === undefined && flags.maxTotalTokens === undefined) return
  const alone = new Budget(price, 'raise it, or lower agent.maxTokens, the most one answer may take')
  alone.setLimits(resolveLimits(flags, undefined, [], price))
  const refused = alone.refuse(taskTokens, maxTokens)
  if (refused === undefined) return
  const flag = [
    ...(flags.maxUsd !== undefined ? [`--max-budget-usd ${flags.maxUsd}`] : []),
    ...(flags.maxTotalTokens !== undefined ? [`--max-tokens-total ${flags.maxTotalTokens}`] : []),
  ].join(' and ')
  throw new MycError(
    'usage',
    `${flag}: no request fits, not even the first (${refused.replace(/^budget reached: /, '')})`,
  )
}

/**
 * The principal a run will be, checked as its view will be made (after the
 * children start): the role and skills, before any child starts. adhoc
 * without --role is agent.adhocRole, or the default role when no skill
 * names that one.
 */
export function checkRunPrincipal(
  context: Pick<AgentContext, 'mode' | 'loaded'>,
  run: { kind: 'run' | 'adhoc' | 'workflow'; role?: string | undefined; skills?: string[] | undefined },
  env: Record<string, string | undefined>,
): void {
  const { mode, loaded } = context
  const adhocRole = loaded.config.agent.adhocRole
  const role =
    run.kind === 'adhoc' && run.role === undefined
      ? mode.kind === 'policy' && mode.state.roles.has(adhocRole)
        ? { role: adhocRole, roleFrom: 'agent.adhocRole' }
        : {}
      : { role: run.role }
  checkViewRequest(mode, loaded, { ...role, skills: run.skills, env })
}

/** What an agent face asks of openAgentContext. */
interface AgentContextOptions {
  configPath?: string | undefined
  skills?: string[] | undefined
  model?: string | undefined
  logger: Logger
  env: Record<string, string | undefined>
  version: string
  onRuntime: (runtime: Runtime) => void
  /** `--max-budget-usd`, `--max-tokens-total`: win over the config's budgets. */
  budget?: BudgetFlags | undefined
  /** How a person raises the budget here, for the line that says it was reached (default: the flags and the config). */
  raiseBudget?: string
  /** A person will answer children's elicitation (chat on a terminal: it sets `answers.elicit` once its prompt exists); else it is not offered. */
  person?: boolean
  /** The task, when known at start: caps from the flags that no first request could fit are refused before anything starts. */
  task?: string
}

/**
 * Opens what an agent runs on, in this process: the runtime over the config
 * (children started), the sandboxed built-ins in policy mode, a view factory,
 * the model and the Anthropic client (credentials and endpoint from the
 * environment, as the SDK reads them). `onRuntime` hears of the runtime as
 * soon as it exists, so the caller can close it whatever happens next.
 */
export async function openAgentContext(options: AgentContextOptions): Promise<AgentContext> {
  requireCredentials(options.env)
  // A person at a terminal is asked to authorize an HTTP child again (`myc: authorize:`); a run with no one there fails the call with the fix.
  const reauthorize = process.stderr.isTTY ? (await import('../oauth/reauthorize.js')).stderrReauthorize() : undefined
  const { runtime, loaded, mode } = await openRuntime({
    childSessions,
    configPath: options.configPath,
    logger: options.logger,
    version: options.version,
    env: options.env,
    ...(reauthorize ? { reauthorize } : {}),
  })
  options.onRuntime(runtime)
  // The sandboxed built-ins, as `myc serve` offers them when an active skill allows them.
  const runner =
    mode.kind === 'policy'
      ? await (await import('../principal/builtin-exec.js')).createSandboxRunner(loaded)
      : undefined
  const budget = agentBudget(options, loaded)
  const { codeRunner, codeModeFor } = await agentCodeMode(mode, loaded, options.logger)
  const viewFor = viewFactory(options, { runtime, loaded, mode, budget, runner, codeRunner })
  const sdk = await loadAnthropicSdk()
  const client = new sdk.Anthropic({
    apiKey: options.env.ANTHROPIC_API_KEY ?? null,
    authToken: options.env.ANTHROPIC_AUTH_TOKEN ?? null,
    ...(options.env.ANTHROPIC_BASE_URL ? { baseURL: options.env.ANTHROPIC_BASE_URL } : {}),
  })
  const model = resolveModel(options.model, loaded.config.agent.model, options.env)
  const { answers, sampledUsage } = childAnswers(options, { loaded, client, model, budget })
  runtime.offerClientCapabilities(agentCapabilities(answers))
  return { runtime, loaded, mode, viewFor, model, sdk, client, answers, sampledUsage, budget, codeRunner, codeModeFor }
}

/** The run's budget: the flags' caps over the config's, checked before anything is asked of the model. */
function agentBudget(options: AgentContextOptions, loaded: LoadedConfig): Budget {
  const price = loaded.config.agent.price
  const flags = options.budget ?? {}
  const budget = new Budget(
    price,
    options.raiseBudget ?? 'raise it with --max-budget-usd or --max-tokens-total, or in agent.budget',
  )
  // A cap in USD without a price fails before anything is asked of the model, as does a flag's cap no request fits.
  budget.setLimits(resolveLimits(flags, loaded.config.agent.budget, [], price))
  // Only with a task (run, adhoc, workflow): chat starts with no request in view, and /budget raises its cap.
  if (options.task !== undefined)
    checkFlagCaps(flags, price, estimateTokens(options.task), loaded.config.agent.maxTokens)
  return budget
}

/** The caps for a role: each of its chain's (the role, then the one it inherits from…) before agent.budget's. */
function roleLimits(flags: BudgetFlags, loaded: LoadedConfig, mode: PolicyMode, role: string | null) {
  const chain = role !== null && mode.kind === 'policy' ? (mode.state.roles.get(role)?.chain ?? [role]) : []
  const definitions = mode.kind === 'policy' ? mode.state.sources.definitions : new Map()
  return resolveLimits(
    flags,
    loaded.config.agent.budget,
    chain.map((name) => ({ name, budget: definitions.get(name)?.budget })),
    loaded.config.agent.price,
  )
}

/** AgentContext.viewFor: a principal's view; the budget takes its role's caps (not a worker's). */
function viewFactory(
  options: AgentContextOptions,
  parts: Pick<AgentContext, 'runtime' | 'loaded' | 'mode' | 'budget' | 'codeRunner'> & {
    runner: BuiltinRunner | undefined
  },
): AgentContext['viewFor'] {
  const { runtime, loaded, mode, budget, runner, codeRunner } = parts
  return (role, only, roleFrom) => {
    const view = createView(mode, loaded, {
      role,
      ...(roleFrom ? { roleFrom } : {}),
      skills: options.skills,
      env: options.env,
      catalogue: runtime.catalogue,
      logger: options.logger,
      face: 'agent',
      ...(runner ? { runner } : {}),
      ...(only ? { only } : {}),
      ...(codeRunner ? { codeRunner } : {}),
    })
    if (!only) budget.setLimits(roleLimits(options.budget ?? {}, loaded, mode, view.describe?.().role ?? null))
    return view
  }
}

/** What children may ask during the agent's tool calls: the model (sampling), the person when there is one, the working directory as the root. */
function childAnswers(
  options: AgentContextOptions,
  parts: Pick<AgentContext, 'loaded' | 'client' | 'model' | 'budget'>,
): Pick<AgentContext, 'answers' | 'sampledUsage'> {
  const { loaded, client, model, budget } = parts
  const sampledUsage: TokenUsage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
  }
  const answers: ChildAnswers = {
    sample: modelSampler(
      client,
      model,
      loaded.config.agent.maxTokens,
      (message) => options.logger.info(message),
      sampledUsage,
      budget,
    ),
    roots: workingDirectoryRoots(process.cwd()),
    ...(options.person ? { elicit: () => Promise.reject(new Error('nobody is at the prompt yet')) } : {}),
  }
  return { answers, sampledUsage }
}

/**
 * Code mode for the agent (docs/code-mode.md): the runner, once for the run,
 * when `agent.codeMode` or a role asks for it (off, with a warning, where it
 * cannot run), and whether a role's runs are in code mode.
 */
async function agentCodeMode(
  mode: PolicyMode,
  loaded: LoadedConfig,
  logger: Logger,
): Promise<Pick<AgentContext, 'codeRunner' | 'codeModeFor'>> {
  const codeRunner = codeModeWanted(mode, loaded, 'agent')
    ? await (await import('../code/code-mode.js')).codeRunnerFor(loaded, logger)
    : undefined
  const fallback = codeModeDefault(loaded, 'agent')
  const codeModeFor = (role: string | null) =>
    codeRunner !== undefined &&
    (mode.kind === 'policy' && role !== null ? codeModeOf(mode.state, role, fallback) : fallback).on
  return { codeRunner, codeModeFor }
}

import type { Writable } from 'node:stream'
import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages'
import type { Logger } from '../logger.js'
import type { PolicyMode } from '../principal/policy-mode.js'
import type { PrincipalView } from '../principal/view.js'
import type { Runtime } from '../runtime/runtime.js'
import type { SpanHandle, Tracing } from '../telemetry/tracing.js'
import type { AgentContext } from './agent-context.js'
import type { BudgetFlags } from './budget.js'
import { ChatRecorder, type ChatRecord } from './chat-store.js'
import { runAgent, type AgentOptions, type AgentOutcome } from './engine.js'
import type { EventStream } from './event-stream.js'

export interface HeadlessOptions {
  /** run: the role's tools as they are; adhoc: the adhoc role, and risky calls need approval; workflow: the skills' scripts only. */
  mode?: 'run' | 'adhoc' | 'workflow'
  /** workflow: what a failed script leads to (default prompt). */
  onFailure?: 'prompt' | 'auto' | 'exit'
  /** adhoc: a failure context file a workflow wrote, for the system prompt. */
  contextFile?: string
  /** A chat record (id or saved name) to continue (`--resume`): its conversation and skills. */
  resume?: string
  task: string
  configPath?: string | undefined
  role?: string | undefined
  skills?: string[] | undefined
  model?: string | undefined
  maxTurns?: number | undefined
  json: boolean
  includePartial?: boolean
  /** `--approve` values (adhoc): risk levels or tool patterns allowed without asking. */
  approve?: readonly string[]
  /** `--max-budget-usd`, `--max-tokens-total`: caps on the run's spend (src/agent/budget.ts). */
  budget?: BudgetFlags | undefined
  logger: Logger
  env: Record<string, string | undefined>
  version: string
  stdout?: Writable
  stderr?: Writable
  /** Where SIGINT comes from (the process by default). */
  signals?: NodeJS.EventEmitter
}

/**
 * What every phase of a headless run works with, once the run is set up:
 * the agent context (config, views, model, client, budget), the event
 * stream, the run's abort signal and root span, and where it records.
 */
export interface RunContext {
  options: HeadlessOptions
  stderr: Writable
  events: EventStream
  opened: AgentContext
  runtime: Runtime
  /** Aborted on SIGINT: the run ends `interrupted`. */
  signal: AbortSignal
  /** The run's root span (tracing on): invoke_agent, with the tracing it belongs to. */
  run: { tracing: Tracing; span: SpanHandle } | undefined
  /** The chat records' folder (undefined: not recorded). */
  dir: string | undefined
  /** The chat record this run continues (`--resume`). */
  resumed: ChatRecord | undefined
}

/** How a run ended, as `session_end` tells it: an outcome, a workflow's failure context file perhaps. */
export type RunResult = Omit<AgentOutcome, 'usage'> & { usage?: AgentOutcome['usage']; contextFile?: string }

/** A run's end: its result, and the exit code when it is not the one of the result's reason. */
export interface RunEnd {
  result: RunResult
  exitCode?: number
}

/** A workflow's hand-off to adhoc: the new chat record's id, and the workflow's it came from. */
export interface HandOff {
  id: string
  from: string
}

/** The policy of a run in policy mode (adhoc and workflow runs are; a run's skills are only there). */
export function policyOf(ctx: RunContext): Extract<PolicyMode, { kind: 'policy' }>['state']['policy'] {
  return (ctx.opened.mode as Extract<PolicyMode, { kind: 'policy' }>).state.policy
}

/** The agent loop over the run's client, model, limits, signal and events; `rest` says the phase's tools, prompt and the rest. */
export function runPhaseAgent(
  ctx: RunContext,
  task: string,
  rest: Pick<AgentOptions, 'tools' | 'system'> & Partial<AgentOptions>,
): Promise<AgentOutcome> {
  const { opened, options } = ctx
  return runAgent(task, {
    client: opened.client,
    sdk: opened.sdk,
    model: opened.model,
    maxTokens: opened.loaded.config.agent.maxTokens,
    maxTurns: options.maxTurns ?? opened.loaded.config.agent.maxTurns,
    emit: ctx.events.emit,
    signal: ctx.signal,
    includePartial: options.includePartial === true,
    budget: opened.budget,
    ...(ctx.run ? { tracing: ctx.run } : {}),
    ...rest,
  })
}

/**
 * Where a phase records: the resumed chat record, or a new one with its
 * meta written now. `handedOff`: the record a workflow handed off to, which
 * names the workflow's record it came from.
 */
export function openPhaseRecord(
  ctx: RunContext,
  view: PrincipalView,
  as: 'run' | 'adhoc' | 'workflow',
  handedOff?: HandOff,
): { writer: ChatRecorder; conversation: BetaMessageParam[] } {
  const { resumed, dir } = ctx
  if (resumed && !handedOff) return { writer: new ChatRecorder(dir, resumed.id), conversation: [...resumed.messages] }
  const writer = new ChatRecorder(dir, handedOff?.id ?? ctx.events.chatId)
  writer.append({
    type: 'meta',
    id: writer.id,
    created: new Date().toISOString(),
    role: view.describe?.().role ?? null,
    mode: as,
    model: ctx.opened.model,
    version: ctx.options.version,
    ...(handedOff ? { from: handedOff.from } : {}),
  })
  return { writer, conversation: [] }
}

/** The resumed chat record's skills, re-checked against today's policy (a phase handed off to starts afresh). */
export async function restoreSkills(ctx: RunContext, view: PrincipalView): Promise<void> {
  const { resumed } = ctx
  if (!resumed) return
  const reachable = new Set(view.reachableSkills?.().map((s) => s.name) ?? [])
  for (const name of resumed.activeSkills) {
    if (!reachable.has(name))
      ctx.options.logger.warn(`session ${resumed.id}: skill ${name} is no longer reachable for this role; dropped`)
    else if (!view.reachableSkills?.().find((s) => s.name === name)?.active) await view.activate?.(name, 'person')
  }
}

/** A phase's messages as sent and received (from `recorded` on), what the run spent since the last record and the skills active after it. */
export function recordPhase(
  ctx: RunContext,
  writer: ChatRecorder,
  conversation: readonly BetaMessageParam[],
  recorded: number,
  view: PrincipalView,
): void {
  writer.append(
    ...conversation.slice(recorded).map((message) => ({
      type: 'message' as const,
      message: message as { role: 'user' | 'assistant'; content: unknown },
    })),
    // What the run spent since the last record (its workers' and children's sampling included), priced when agent.price is set.
    ctx.opened.budget.usageRecord(),
    { type: 'skills', active: view.describe?.().activeSkills.map((s) => s.name) ?? [] },
  )
}

/** The adhoc role's view: `agent.adhocRole`, or, when no skill names that role, the run's default role (said in the log). */
export function adhocView(ctx: RunContext): PrincipalView {
  const { mode, viewFor, loaded } = ctx.opened
  const adhocRole = loaded.config.agent.adhocRole
  if (mode.kind === 'policy' && !mode.state.roles.has(adhocRole)) {
    const view = viewFor(undefined)
    ctx.options.logger.warn(
      `adhoc runs as role "${view.describe?.().role}": agent.adhocRole "${adhocRole}" is not a role here (no skill names it)`,
    )
    return view
  }
  return viewFor(adhocRole, undefined, 'agent.adhocRole')
}

/** Two usages added up. */
export function sumUsage(a: AgentOutcome['usage'], b: AgentOutcome['usage']): AgentOutcome['usage'] {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
  }
}

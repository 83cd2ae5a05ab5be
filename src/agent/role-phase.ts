import type { PrincipalView } from '../principal/view.js'
import { textTokens, toolTokens } from '../principal/token-count.js'
import { carrierOf } from '../telemetry/trace-context.js'
import { activateSkill, activateTriggered } from './activation.js'
import { createApprovalGate } from './approvals.js'
import type { AgentOutcome } from './engine.js'
import type { AgentEventBody } from './events.js'
import {
  adhocView,
  openPhaseRecord,
  policyOf,
  recordPhase,
  restoreSkills,
  runPhaseAgent,
  type HandOff,
  type RunContext,
} from './headless-phase.js'
import { roleTools, type RoleWorkers } from './role-tools.js'
import { systemPrompt } from './system-prompt.js'
import type { ToolDoor } from './tool-call.js'

/** A run or adhoc phase of a headless run. */
export interface RolePhase {
  as: 'run' | 'adhoc'
  task: string
  /** Joins the system prompt (a failure context). */
  extra: string | undefined
  /** Emit `session_start` (a phase handed off to does not: the run has started). */
  announce: boolean
  /** A workflow handed off, and this is a new chat record linked to that one. */
  handedOff?: HandOff
  /** The view, made already (a hand-off makes it before it hands off). */
  ready?: PrincipalView
}

/**
 * The task as the adhoc role (or the run's role), over the role's view,
 * approvals in adhoc; recorded in the phase's chat record, its workers' usage
 * counted into the outcome's.
 */
export async function runAsRole(ctx: RunContext, phase: RolePhase): Promise<AgentOutcome> {
  const { options } = ctx
  const view =
    phase.ready ??
    (phase.as === 'adhoc' && options.role === undefined ? adhocView(ctx) : ctx.opened.viewFor(options.role))
  if (!phase.handedOff) await restoreSkills(ctx, view)
  const { writer, conversation } = openPhaseRecord(ctx, view, phase.as, phase.handedOff)
  const recorded = conversation.length
  const { tools, workers: delegate, principal } = await roleToolDoor(ctx, view, phase.as)
  announceRole(ctx, phase, view, tools, principal)
  await activateForTask(ctx, phase.task, view, tools)
  const system = [
    systemPrompt({ ...principal, servers: ctx.runtime, visible: (s) => view.serverVisible(s) }),
    phase.extra,
  ]
    .filter(Boolean)
    .join('\n\n')
  const outcome = await runPhaseAgent(ctx, phase.task, { tools, system, conversation, headless: true })
  recordPhase(ctx, writer, conversation, recorded, view)
  if (delegate)
    for (const k of Object.keys(outcome.usage) as Array<keyof typeof outcome.usage>)
      outcome.usage[k] += delegate.usage[k]
  return outcome
}

/** Who the phase runs as: the view's role and active skills (none without a policy). */
type Principal = ReturnType<NonNullable<PrincipalView['describe']>> | { role: null; activeSkills: [] }

/** The role's tools: its view's, behind approvals in adhoc, with the delegate tool when the role has workers. */
async function roleToolDoor(ctx: RunContext, view: PrincipalView, as: 'run' | 'adhoc') {
  const { opened, runtime, options, events } = ctx
  const approvals =
    as === 'adhoc'
      ? await createApprovalGate(opened.loaded.config, runtime, options.approve ?? [], events.emit)
      : undefined
  const principal: Principal = view.describe?.() ?? { role: null, activeSkills: [] }
  const workers = opened.loaded.config.agent.workers
  const made = roleTools({
    runtime,
    view,
    answers: opened.answers,
    approvals,
    workers:
      workers.enabled && view.reachableSkills && principal.role ? workersFor(ctx, principal.role, view) : undefined,
  })
  return { ...made, principal }
}

/** `session_start` when the phase announces, with what the first request costs before the task. */
function announceRole(ctx: RunContext, phase: RolePhase, view: PrincipalView, tools: ToolDoor, principal: Principal) {
  // What the first request costs before the task: the system prompt and the tools offered (the counter of myc tokens).
  const contextTokens =
    textTokens(systemPrompt({ ...principal, servers: ctx.runtime, visible: (s) => view.serverVisible(s) })) +
    toolTokens(tools.list().map((t) => t.def))
  if (phase.announce)
    ctx.events.emit({
      type: 'session_start',
      role: principal.role,
      mode: phase.as,
      model: ctx.opened.model,
      tools: tools.list().map((t) => t.id),
      activeSkills: principal.activeSkills.map((s) => s.name),
      version: ctx.options.version,
      contextTokens,
      ...(ctx.run?.span.traceId ? { traceId: ctx.run.span.traceId } : {}),
    })
}

/** The skills the task triggers, else (with agent.classifier) those the classifier picks, activated before the first request. */
async function activateForTask(ctx: RunContext, task: string, view: PrincipalView, tools: ToolDoor): Promise<void> {
  const { events, options, signal, opened } = ctx
  const triggered = await activateTriggered(task, view, tools, events.emit, options.logger, signal)
  const classifier = opened.loaded.config.agent.classifier
  if (!triggered && classifier && view.reachableSkills && view.activate) {
    const all = policyOf(ctx).skills
    const candidates = view
      .reachableSkills()
      .filter((s) => !s.active)
      .map((s) => ({ name: s.name, description: all.get(s.name)?.description ?? '' }))
    const { classifySkills } = await import('./classifier.js')
    for (const name of await classifySkills(opened.client, classifier.model, task, candidates, signal, opened.budget))
      await activateSkill(name, 'classifier', view, tools, events.emit, options.logger, signal)
  }
}

/** The role's workers (agent.workers), one skill each. */
function workersFor(ctx: RunContext, role: string, view: PrincipalView): RoleWorkers {
  const { loaded, viewFor } = ctx.opened
  return {
    skills: () => {
      const all = policyOf(ctx).skills
      return (view.reachableSkills?.() ?? []).map((s) => ({
        name: s.name,
        description: all.get(s.name)?.description ?? '',
      }))
    },
    viewFor: (skill) => viewFor(role, [skill]),
    run: (task, tools, signal, emit, meta) => runWorker(ctx, { task, tools, signal, emit, meta }),
    emit: ctx.events.emit,
    max: loaded.config.agent.workers.max,
    separator: loaded.config.namespace.separator,
  }
}

/** A worker's task: an invoke_agent span under its delegate call's execute_tool span (tracing on). */
async function runWorker(
  ctx: RunContext,
  job: {
    task: string
    tools: ToolDoor
    signal: AbortSignal
    emit: (event: AgentEventBody) => void
    meta: Record<string, unknown> | undefined
  },
): Promise<AgentOutcome> {
  const tracing = ctx.runtime.tracing
  const parent = tracing ? carrierOf(job.meta) : undefined
  const span =
    tracing && parent
      ? tracing.start('invoke_agent worker', 'internal', parent, {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'worker',
          'gen_ai.request.model': ctx.opened.model,
        })
      : undefined
  try {
    const outcome = await runPhaseAgent(ctx, job.task, {
      tools: job.tools,
      system: `You are a worker: do this one task with the tools you have, then answer with the result.`,
      maxTurns: ctx.opened.loaded.config.agent.workers.maxTurns,
      emit: (event) => event.type !== 'text_delta' && job.emit(event),
      signal: job.signal,
      ...(tracing && span ? { tracing: { tracing, span } } : {}),
    })
    span?.end(outcome.reason === 'done' ? undefined : `the worker ended ${outcome.reason}`)
    return outcome
  } catch (error) {
    span?.end(error instanceof Error ? error.message : String(error))
    throw error
  }
}

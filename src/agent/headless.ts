import type { Writable } from 'node:stream'
import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages'
import { ExitCode, MycError } from '../errors.js'
import type { Logger } from '../logger.js'
import type { MyceliumConfig } from '../config/schema.js'
import { projectState } from '../config/state-roots.js'
import type { Runtime } from '../runtime/runtime.js'
import { startWithProgress } from '../runtime/start-progress.js'
import { carrierOf } from '../telemetry/trace-context.js'
import { activateSkill, activateTriggered } from './activation.js'
import { endRunSpan, startRunSpan } from './run-span.js'
import { createApprovalGate } from './approvals.js'
import { checkRunPrincipal, openAgentContext } from './agent-context.js'
import type { BudgetFlags } from './budget.js'
import { costUsd } from './classifier.js'
import { runAgent, type AgentOptions, type AgentOutcome } from './engine.js'
import { EventStream, humanSink, jsonLinesSink, markdownFor } from './event-stream.js'
import type { EndReason } from './events.js'
import { SessionWriter } from './chat-store.js'
import { systemPrompt } from './system-prompt.js'
import { roleTools, type RoleWorkers } from './role-tools.js'
import { ToolDoor } from './tool-call.js'
import { WorkflowToolbox } from './workflow-toolbox.js'
import { terminalText } from '../terminal-text.js'
import { redactUrls } from '../redact.js'
import type { SpanHandle } from '../telemetry/tracing.js'
import { textTokens, toolTokens } from '../principal/token-count.js'

export interface HeadlessOptions {
  /** run: the role's tools as they are; adhoc: the adhoc role, and risky calls need approval; workflow: the skills' scripts only. */
  mode?: 'run' | 'adhoc' | 'workflow'
  /** workflow: what a failed script leads to (default prompt). */
  onFailure?: 'prompt' | 'auto' | 'exit'
  /** adhoc: a failure context file a workflow wrote, for the system prompt. */
  contextFile?: string
  /** A recorded session (id or saved name) to continue: its conversation and skills. */
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

/** A workflow's hand-off to adhoc: the new session's id, and the workflow session it came from. */
interface HandOff {
  id: string
  from: string
}

const EXIT_BY_REASON: Record<EndReason, number> = {
  done: ExitCode.ok,
  max_turns: ExitCode.checkFailed,
  failed: ExitCode.checkFailed,
  denied: ExitCode.checkFailed,
  budget: ExitCode.checkFailed,
  unavailable: ExitCode.runtime,
  interrupted: ExitCode.interrupted,
  error: ExitCode.runtime,
}

/**
 * `myc run`: one task, no terminal needed. The agent runs in this process
 * over the same runtime and per-principal view that `myc serve` uses. With
 * `json`, stdout carries the event stream and nothing else; every run ends
 * with `session_end`, failed ones included. Resolves with the exit code.
 */
export async function runHeadless(options: HeadlessOptions): Promise<number> {
  const stdout = options.stdout ?? process.stdout
  const stderr = options.stderr ?? process.stderr
  const events = new EventStream(
    options.json ? jsonLinesSink(stdout) : humanSink(stdout, stderr, markdownFor(stdout, options.env)),
    SessionWriter.newId(),
  )
  const startedAt = performance.now()
  /** The configured price, once the config is loaded (session_end.costUsd). */
  const price: { value?: MyceliumConfig['agent']['price'] } = {}
  /** The tokens the model spent on children's sampling (agent-context.ts), counted into session_end's usage. */
  let sampled: AgentOutcome['usage'] | undefined
  /** The run's root span (tracing on): invoke_agent. */
  let root: SpanHandle | undefined
  const finish = (
    result: Omit<AgentOutcome, 'usage'> & { usage?: AgentOutcome['usage']; contextFile?: string },
    exitCode = EXIT_BY_REASON[result.reason],
  ): number => {
    const outcome = sampled && result.usage ? { ...result, usage: sumUsage(result.usage, sampled) } : result
    if (outcome.error) {
      const message = redactUrls(outcome.error.message)
      events.emit({ type: 'error', code: outcome.error.code, message })
      // stdout is the stream; a person reading the job's log still gets one line (the human sink prints it already).
      if (options.json) stderr.write(`myc: ${terminalText(message)}\n`)
    }
    events.emit({
      type: 'session_end',
      ok: outcome.reason === 'done',
      reason: outcome.reason,
      turns: outcome.turns,
      usage: outcome.usage ?? { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
      durationMs: Math.round(performance.now() - startedAt),
      text: outcome.text,
      exitCode,
      permissionDenials: outcome.permissionDenials,
      ...(outcome.contextFile ? { contextFile: outcome.contextFile } : {}),
      ...(price.value && outcome.usage ? { costUsd: costUsd(outcome.usage, price.value)! } : {}),
      ...(root?.traceId ? { traceId: root.traceId } : {}),
    })
    if (root) endRunSpan(root, outcome)
    return exitCode
  }

  let runtime: Runtime | undefined
  const controller = new AbortController()
  const signals = options.signals ?? process
  const onInterrupt = () => controller.abort('interrupted')
  signals.once('SIGINT', onInterrupt)
  try {
    const kind = options.mode ?? 'run'
    const context = options.contextFile
      ? await (await import('./failure-context.js')).readFailureContext(options.contextFile)
      : undefined
    const opened = await openAgentContext({
      ...options,
      onRuntime: (r) => (runtime = r),
    })
    const { loaded, mode, viewFor, model, sdk, client, answers, sampledUsage, budget } = opened
    sampled = sampledUsage
    const rt = runtime!
    price.value = loaded.config.agent.price
    if (kind !== 'run' && mode.kind !== 'policy')
      throw new MycError('usage', `myc ${kind} needs policy mode (skills and roles); in open mode use \`myc run\``)
    // One trace per run (tracing on): invoke_agent at its root, the chat and execute_tool spans under it.
    const tracing = rt.tracing
    const run = startRunSpan(tracing, model, kind)
    root = run?.span
    const traced = run ? { tracing: run } : {}
    const agent = (task: string, rest: Pick<AgentOptions, 'tools' | 'system'> & Partial<AgentOptions>) =>
      runAgent(task, {
        client,
        sdk,
        model,
        maxTokens: loaded.config.agent.maxTokens,
        maxTurns: options.maxTurns ?? loaded.config.agent.maxTurns,
        emit: events.emit,
        signal: controller.signal,
        includePartial: options.includePartial === true,
        budget,
        ...traced,
        ...rest,
      })

    // Every run is a recorded session (append-only, beside the config), or continues one.
    const { recordedSessionsDir, loadSession } = await import('./chat-store.js')
    const dir = recordedSessionsDir(loaded)
    const resumed = options.resume ? loadSession(dir, options.resume) : undefined
    if (resumed) events.sessionId = resumed.id

    /**
     * Where a phase records: the resumed session, or a new one with its meta
     * written now. `handedOff`: the session a workflow handed off to, which
     * names the workflow's session it came from.
     */
    const openSession = (
      view: ReturnType<typeof viewFor>,
      as: 'run' | 'adhoc' | 'workflow',
      handedOff?: HandOff,
    ): { writer: SessionWriter; conversation: BetaMessageParam[] } => {
      if (resumed && !handedOff)
        return { writer: new SessionWriter(dir, resumed.id), conversation: [...resumed.messages] }
      const writer = new SessionWriter(dir, handedOff?.id ?? events.sessionId)
      writer.append({
        type: 'meta',
        id: writer.id,
        created: new Date().toISOString(),
        role: view.describe?.().role ?? null,
        mode: as,
        model,
        version: options.version,
        ...(handedOff ? { from: handedOff.from } : {}),
      })
      return { writer, conversation: [] }
    }
    /** The resumed session's skills, re-checked against today's policy (a phase handed off to starts afresh). */
    const restoreSkills = async (view: ReturnType<typeof viewFor>) => {
      if (!resumed) return
      const reachable = new Set(view.reachableSkills?.().map((s) => s.name) ?? [])
      for (const name of resumed.activeSkills) {
        if (!reachable.has(name))
          options.logger.warn(`session ${resumed.id}: skill ${name} is no longer reachable for this role; dropped`)
        else if (!view.reachableSkills?.().find((s) => s.name === name)?.active) await view.activate?.(name, 'person')
      }
    }
    /** A phase's messages as sent and received (from `recorded` on), what the run spent since the last record and the skills active after it. */
    const record = (
      writer: SessionWriter,
      conversation: readonly BetaMessageParam[],
      recorded: number,
      outcome: AgentOutcome,
      view: ReturnType<typeof viewFor>,
    ) =>
      writer.append(
        ...conversation.slice(recorded).map((message) => ({
          type: 'message' as const,
          message: message as { role: 'user' | 'assistant'; content: unknown },
        })),
        // What the run spent since the last record (its workers' and children's sampling included), priced when agent.price is set.
        budget.usageRecord(),
        { type: 'skills', active: view.describe?.().activeSkills.map((s) => s.name) ?? [] },
      )

    /** The adhoc role's view: `agent.adhocRole`, or, when no skill names that role, the run's default role (said in the log). */
    const adhocView = () => {
      const adhocRole = loaded.config.agent.adhocRole
      if (mode.kind === 'policy' && !mode.state.roles.has(adhocRole)) {
        const view = viewFor(undefined)
        options.logger.warn(
          `adhoc runs as role "${view.describe?.().role}": agent.adhocRole "${adhocRole}" is not a role here (no skill names it)`,
        )
        return view
      }
      return viewFor(adhocRole, undefined, 'agent.adhocRole')
    }

    /** The role's workers (agent.workers), one skill each; a worker is an invoke_agent span under its delegate call's execute_tool span (tracing on). */
    const workersFor = (role: string, view: ReturnType<typeof viewFor>): RoleWorkers => ({
      skills: () => {
        const all = (mode as Extract<typeof mode, { kind: 'policy' }>).state.policy.skills
        return (view.reachableSkills?.() ?? []).map((s) => ({
          name: s.name,
          description: all.get(s.name)?.description ?? '',
        }))
      },
      viewFor: (skill) => viewFor(role, [skill]),
      run: async (task, tools, signal, emit, meta) => {
        const parent = tracing ? carrierOf(meta) : undefined
        const span =
          tracing && parent
            ? tracing.start('invoke_agent worker', 'internal', parent, {
                'gen_ai.operation.name': 'invoke_agent',
                'gen_ai.agent.name': 'worker',
                'gen_ai.request.model': model,
              })
            : undefined
        try {
          const outcome = await agent(task, {
            tools,
            system: `You are a worker: do this one task with the tools you have, then answer with the result.`,
            maxTurns: loaded.config.agent.workers.maxTurns,
            emit: (event) => event.type !== 'text_delta' && emit(event),
            signal,
            ...(tracing && span ? { tracing: { tracing, span } } : {}),
          })
          span?.end(outcome.reason === 'done' ? undefined : `the worker ended ${outcome.reason}`)
          return outcome
        } catch (error) {
          span?.end(error instanceof Error ? error.message : String(error))
          throw error
        }
      },
      emit: events.emit,
      max: loaded.config.agent.workers.max,
      separator: loaded.config.namespace.separator,
    })

    /**
     * The task as the adhoc role (or the run's role), over the role's view,
     * approvals in adhoc; `extra` joins the system prompt. `handedOff`: a
     * workflow handed off, and this is a new session linked to that one.
     */
    const asRole = async (
      as: 'run' | 'adhoc',
      task: string,
      extra: string | undefined,
      announce: boolean,
      handedOff?: HandOff,
      ready?: ReturnType<typeof viewFor>,
    ): Promise<AgentOutcome> => {
      const view = ready ?? (as === 'adhoc' && options.role === undefined ? adhocView() : viewFor(options.role))
      if (!handedOff) await restoreSkills(view)
      const { writer, conversation } = openSession(view, as, handedOff)
      const recorded = conversation.length
      const approvals =
        as === 'adhoc' ? await createApprovalGate(loaded.config, rt, options.approve ?? [], events.emit) : undefined
      const principal = view.describe?.() ?? { role: null, activeSkills: [] }
      const workers = loaded.config.agent.workers
      const { tools, workers: delegate } = roleTools({
        runtime: rt,
        view,
        answers,
        approvals,
        workers:
          workers.enabled && view.reachableSkills && principal.role ? workersFor(principal.role, view) : undefined,
      })
      // What the first request costs before the task: the system prompt and the tools offered (the counter of myc tokens).
      const contextTokens =
        textTokens(systemPrompt({ ...principal, servers: rt, visible: (s) => view.serverVisible(s) })) +
        toolTokens(tools.list().map((t) => t.def))
      if (announce)
        events.emit({
          type: 'session_start',
          role: principal.role,
          mode: as,
          model,
          tools: tools.list().map((t) => t.id),
          activeSkills: principal.activeSkills.map((s) => s.name),
          version: options.version,
          contextTokens,
          ...(root?.traceId ? { traceId: root.traceId } : {}),
        })
      const triggered = await activateTriggered(task, view, tools, events.emit, options.logger, controller.signal)
      const classifier = loaded.config.agent.classifier
      if (!triggered && classifier && view.reachableSkills && view.activate) {
        const all = (mode as Extract<typeof mode, { kind: 'policy' }>).state.policy.skills
        const candidates = view
          .reachableSkills()
          .filter((s) => !s.active)
          .map((s) => ({ name: s.name, description: all.get(s.name)?.description ?? '' }))
        const { classifySkills } = await import('./classifier.js')
        for (const name of await classifySkills(client, classifier.model, task, candidates, controller.signal, budget))
          await activateSkill(name, 'classifier', view, tools, events.emit, options.logger, controller.signal)
      }
      const system = [systemPrompt({ ...principal, servers: rt, visible: (s) => view.serverVisible(s) }), extra]
        .filter(Boolean)
        .join('\n\n')
      const outcome = await agent(task, { tools, system, conversation, headless: true })
      record(writer, conversation, recorded, outcome, view)
      if (delegate)
        for (const k of Object.keys(outcome.usage) as Array<keyof typeof outcome.usage>)
          outcome.usage[k] += delegate.usage[k]
      return outcome
    }

    // The flags against the config before any child starts: a usage error never follows a child's start-up.
    checkRunPrincipal({ mode, loaded }, { kind, role: options.role, skills: options.skills }, options.env)
    // On a terminal, a line per child while they start (not with --json).
    await startWithProgress(rt, { stream: stderr, env: options.env, json: options.json, logger: options.logger })
    const contextSection = context ? (await import('./failure-context.js')).contextPrompt(context) : undefined
    if (kind !== 'workflow') return finish(await asRole(kind, options.task, contextSection, true))

    // Workflow: the skills' scripts and nothing else; a failed script ends it, and --on-failure decides.
    const view = viewFor(options.role)
    await restoreSkills(view)
    const principal = view.describe!()
    const policy = (mode as Extract<typeof mode, { kind: 'policy' }>).state.policy
    const runner = await (await import('../principal/builtin-exec.js')).createSandboxRunner(loaded)
    // Code mode (the role's codeMode, else agent.codeMode): run_code over the scripts too.
    const code = opened.codeModeFor(principal.role) ? opened.codeRunner : undefined
    const toolbox = new WorkflowToolbox(
      policy.reachable(principal.role),
      runner,
      loaded.config.namespace.separator,
      code,
    )
    const tools = new ToolDoor([toolbox])
    events.emit({
      type: 'session_start',
      role: principal.role,
      mode: 'workflow',
      model,
      tools: tools.list().map((t) => t.id),
      activeSkills: principal.activeSkills.map((s) => s.name),
      version: options.version,
      ...(root?.traceId ? { traceId: root.traceId } : {}),
    })
    // The workflow phase is a session of its own (mode workflow), recorded like a run's.
    const session = openSession(view, 'workflow')
    const recorded = session.conversation.length
    const said: string[] = []
    const workflow = await agent(options.task, {
      tools,
      conversation: session.conversation,
      system: `${systemPrompt({ ...principal, servers: rt, visible: () => false })}\n\nYou run a workflow: use the skills' scripts (list_skills, read_skill, run_script) to do the task. A script that fails ends the workflow.`,
      failed: () => toolbox.failure !== undefined,
      emit: (e) => {
        if (e.type === 'text') said.push(e.text)
        events.emit(e)
      },
    })
    record(session.writer, session.conversation, recorded, workflow, view)
    const failure = toolbox.failure
    if (workflow.reason !== 'failed' || !failure) return finish(workflow)
    const { writeFailureContext } = await import('./failure-context.js')
    const contextFile = await writeFailureContext(projectState(loaded).contextDir.path, {
      skillId: failure.skill,
      scriptPath: `scripts/${failure.script}`,
      args: failure.args,
      exitCode: failure.exitCode,
      stdout: failure.stdout,
      stderr: failure.stderr,
      conversationSummary: said.join('\n').slice(-4_000),
    })
    const onFailure = options.onFailure ?? 'prompt'
    const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true
    // Before the question, what failed: the script, its exit code, the end of its stderr.
    if (onFailure === 'prompt' && interactive)
      stderr.write(`${terminalText((await import('./failure-context.js')).failureSummary(failure))}\n`)
    const handOff =
      onFailure === 'auto' ||
      (onFailure === 'prompt' &&
        interactive &&
        (await (
          await import('./terminal-approval.js')
        ).askYesNo(`Script ${failure.script} of skill ${failure.skill} failed. Hand off to adhoc to investigate?`)))
    if (!handOff) {
      if (onFailure === 'prompt')
        stderr.write(
          `${terminalText(`myc: the workflow failed; to investigate: myc adhoc --context ${contextFile}${options.configPath ? ` --config ${options.configPath}` : ''} "find out why ${failure.skill} failed and fix it"`)}\n`,
        )
      return finish({ ...workflow, contextFile })
    }
    // A hand-off that cannot start (no view for adhoc) fails before it hands off, naming the context file.
    let adhocReady: ReturnType<typeof viewFor>
    try {
      adhocReady = options.role === undefined ? adhocView() : viewFor(options.role)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      return finish(
        {
          ...workflow,
          reason: 'error',
          contextFile,
          error: {
            code: error instanceof MycError ? error.code : 'runtime',
            message: `cannot hand off to adhoc: ${message}`,
          },
        },
        error instanceof MycError ? error.exitCode : ExitCode.runtime,
      )
    }
    // The adhoc phase is a new session: the workflow's names it (handoff), it names the workflow's (meta.from), and the events from here on carry its id.
    const handedOff: HandOff = { id: SessionWriter.newId(), from: session.writer.id }
    events.emit({ type: 'handoff', contextFile, to: 'adhoc' })
    session.writer.append({ type: 'handoff', to: handedOff.id, contextFile })
    events.sessionId = handedOff.id
    const written = await (await import('./failure-context.js')).readFailureContext(contextFile)
    const adhoc = await asRole(
      'adhoc',
      options.task,
      (await import('./failure-context.js')).contextPrompt(written),
      false,
      handedOff,
      adhocReady,
    )
    const usage = sumUsage(workflow.usage, adhoc.usage)
    return finish({
      ...adhoc,
      turns: workflow.turns + adhoc.turns,
      usage,
      permissionDenials: [...workflow.permissionDenials, ...adhoc.permissionDenials],
      contextFile,
    })
  } catch (error) {
    // With --json the stream ends properly even when the run never started.
    if (!options.json) throw error
    const known = error instanceof MycError
    const message = error instanceof Error ? error.message : String(error)
    return finish(
      {
        reason: 'error',
        turns: 0,
        text: '',
        permissionDenials: [],
        error: {
          code: known ? error.code : 'runtime',
          message: known && error.fix ? `${message} (fix: ${error.fix})` : message,
        },
      },
      known ? error.exitCode : ExitCode.runtime,
    )
  } finally {
    signals.off('SIGINT', onInterrupt)
    await runtime?.close({ urgent: controller.signal.aborted })
  }
}

/** Two usages added up. */
function sumUsage(a: AgentOutcome['usage'], b: AgentOutcome['usage']): AgentOutcome['usage'] {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
  }
}

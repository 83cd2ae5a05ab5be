import type { Writable } from 'node:stream'
import { ExitCode, MycError } from '../errors.js'
import type { Logger } from '../logger.js'
import type { MyceliumConfig } from '../config/schema.js'
import { openRuntime } from '../runtime/open-runtime.js'
import type { Runtime } from '../runtime/runtime.js'
import { createView } from '../principal/policy-mode.js'
import type { PrincipalView } from '../principal/view.js'
import { loadAnthropicSdk } from './anthropic-sdk.js'
import { runAgent, type AgentOutcome } from './engine.js'
import { EventStream, humanSink, jsonLinesSink } from './event-stream.js'
import type { EndReason } from './events.js'
import { resolveModel } from './model.js'
import { systemPrompt } from './system-prompt.js'
import { viewToolbox } from './toolbox.js'

export interface HeadlessOptions {
  /** run: the role's tools as they are; adhoc: the adhoc role, and risky calls need approval. */
  mode?: 'run' | 'adhoc'
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
  logger: Logger
  env: Record<string, string | undefined>
  version: string
  stdout?: Writable
  stderr?: Writable
  /** Where SIGINT comes from (the process by default). */
  signals?: NodeJS.EventEmitter
}

const EXIT_BY_REASON: Record<EndReason, number> = { done: ExitCode.ok, max_turns: ExitCode.checkFailed, failed: ExitCode.checkFailed, denied: ExitCode.checkFailed, interrupted: ExitCode.interrupted, error: ExitCode.runtime }

/**
 * `myc run`: one task, no terminal needed. The agent runs in this process
 * over the same runtime and per-principal view that `myc serve` uses. With
 * `json`, stdout carries the event stream and nothing else; every run ends
 * with `session_end`, failed ones included. Resolves with the exit code.
 */
export async function runHeadless(options: HeadlessOptions): Promise<number> {
  const stdout = options.stdout ?? process.stdout
  const stderr = options.stderr ?? process.stderr
  const events = new EventStream(options.json ? jsonLinesSink(stdout) : humanSink(stdout, stderr))
  const startedAt = performance.now()
  const finish = (outcome: Omit<AgentOutcome, 'usage'> & { usage?: AgentOutcome['usage'] }, exitCode = EXIT_BY_REASON[outcome.reason]): number => {
    if (outcome.error) events.emit({ type: 'error', code: outcome.error.code, message: outcome.error.message })
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
    })
    return exitCode
  }

  let runtime: Runtime | undefined
  const controller = new AbortController()
  const signals = options.signals ?? process
  const onInterrupt = () => controller.abort('interrupted')
  signals.once('SIGINT', onInterrupt)
  try {
    // Nothing starts without credentials: say which variable to set.
    if (!options.env.ANTHROPIC_API_KEY && !options.env.ANTHROPIC_AUTH_TOKEN) {
      throw new MycError('USAGE', 'no Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in the environment; ANTHROPIC_BASE_URL points myc at another endpoint')
    }
    const opened = await openRuntime({ configPath: options.configPath, logger: options.logger, version: options.version, env: options.env })
    runtime = opened.runtime
    const { loaded, mode } = opened
    // The sandboxed built-ins, as `myc serve` offers them when an active skill allows them.
    const runner = mode.kind === 'policy' ? await (await import('../principal/builtin-exec.js')).createSandboxRunner(loaded) : undefined
    const adhoc = options.mode === 'adhoc'
    if (adhoc && mode.kind !== 'policy') throw new MycError('USAGE', 'myc adhoc needs policy mode (skills and an adhoc role); in open mode use `myc run`')
    const role = adhoc ? (options.role ?? loaded.config.agent.adhocRole) : options.role
    const view = createView(mode, loaded, { role, skills: options.skills, env: options.env, catalogue: runtime.catalogue, logger: options.logger, ...(runner ? { runner } : {}) })
    const approve = adhoc ? await approvalGate(loaded.config, runtime, options, events.emit) : undefined
    await runtime.start()
    const toolbox = viewToolbox(runtime, view)
    const model = resolveModel(options.model, loaded.config.agent.model, options.env)
    const principal = view.describe?.() ?? { role: null, activeSkills: [] }
    events.emit({ type: 'session_start', role: principal.role, mode: options.mode ?? 'run', model, tools: toolbox.list().map((t) => t.id), activeSkills: principal.activeSkills.map((s) => s.name), version: options.version })
    await activateTriggered(options.task, view, toolbox, events.emit, options.logger, controller.signal)
    const sdk = await loadAnthropicSdk()
    const client = new sdk.Anthropic({ apiKey: options.env.ANTHROPIC_API_KEY ?? null, authToken: options.env.ANTHROPIC_AUTH_TOKEN ?? null, ...(options.env.ANTHROPIC_BASE_URL ? { baseURL: options.env.ANTHROPIC_BASE_URL } : {}) })
    const outcome = await runAgent(options.task, {
      client,
      sdk,
      model,
      maxTokens: loaded.config.agent.maxTokens,
      maxTurns: options.maxTurns ?? loaded.config.agent.maxTurns,
      system: systemPrompt({ ...principal, servers: runtime, visible: (s) => view.serverVisible(s) }),
      toolbox,
      emit: events.emit,
      signal: controller.signal,
      includePartial: options.includePartial === true,
      ...(approve ? { approve: (id, tool, input) => approve.check(id, tool, input) } : {}),
    })
    return finish(outcome)
  } catch (error) {
    // With --json the stream ends properly even when the run never started.
    if (!options.json) throw error
    const known = error instanceof MycError
    return finish({ reason: 'error', turns: 0, text: '', permissionDenials: [], error: { code: known ? error.code : 'RUNTIME', message: error instanceof Error ? error.message : String(error) } }, known ? error.exitCode : ExitCode.runtime)
  } finally {
    signals.off('SIGINT', onInterrupt)
    await runtime?.close({ urgent: controller.signal.aborted })
  }
}

/** Adhoc's approvals: risk from config rules, built-ins, annotations and names; a person asked on the terminal when there is one. */
async function approvalGate(config: MyceliumConfig, runtime: Runtime, options: HeadlessOptions, emit: EventStream['emit']) {
  const { RiskClassifier } = await import('./risk.js')
  const { ApprovalGate, parsePreapprovals } = await import('./approvals.js')
  const context = { separator: config.namespace.separator, servers: new Set([...runtime.supervisor.children.keys(), 'mycelium']) }
  let preapproved
  try {
    preapproved = parsePreapprovals(options.approve ?? [], context)
  } catch (error) {
    throw new MycError('USAGE', (error as Error).message)
  }
  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true
  const { askOnTerminal } = await import('./terminal-approval.js')
  return new ApprovalGate({ classifier: new RiskClassifier(config.agent.risk, context), threshold: config.agent.approvalThreshold, preapproved, ask: interactive ? askOnTerminal : undefined, emit })
}

/**
 * Before the task's turn: the inactive skills the role reaches whose
 * triggers the task names are activated as the escalation mode allows (auto:
 * at once; ask: not without someone to ask; manual: suggested in the log).
 */
async function activateTriggered(task: string, view: PrincipalView, toolbox: ReturnType<typeof viewToolbox>, emit: EventStream['emit'], logger: Logger, signal: AbortSignal): Promise<void> {
  if (!view.reachableSkills || !view.activate) return
  const { triggeredSkills } = await import('./triggers.js')
  for (const name of triggeredSkills(task, view.reachableSkills())) {
    const before = new Set(toolbox.list().map((t) => t.id))
    const result = await view.activate(name, 'agent', { signal })
    if (result.isError) {
      logger.info(`the task names a trigger of skill ${name}, not activated: ${(result.content[0] as { text?: string } | undefined)?.text ?? ''}`)
      continue
    }
    const after = toolbox.list().map((t) => t.id)
    emit({ type: 'skill_activated', skill: name, by: 'trigger', toolsAdded: after.filter((t) => !before.has(t)), toolsRemoved: [...before].filter((t) => !after.includes(t)) })
  }
}

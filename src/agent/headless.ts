import type { Writable } from 'node:stream'
import { ExitCode, MycError } from '../errors.js'
import type { MyceliumConfig } from '../config/schema.js'
import type { Runtime } from '../runtime/runtime.js'
import { startWithProgress } from '../runtime/start-progress.js'
import { checkPreapprovals } from './approvals.js'
import { endRunSpan, startRunSpan } from './run-span.js'
import { checkRunPrincipal, openAgentContext } from './agent-context.js'
import { costUsd } from './classifier.js'
import type { AgentOutcome } from './engine.js'
import { EventStream, humanSink, jsonLinesSink, markdownFor } from './event-stream.js'
import type { EndReason } from './events.js'
import { ChatRecorder } from './chat-store.js'
import { sumUsage, type HeadlessOptions, type RunContext, type RunResult } from './headless-phase.js'
import { runAsRole } from './role-phase.js'
import { runWorkflow } from './workflow-phase.js'
import { terminalText } from '../terminal-text.js'
import { redactUrls } from '../redact.js'
import type { SpanHandle } from '../telemetry/tracing.js'
import type { FailureContext } from './failure-context.js'

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
  return new HeadlessRun(options).run()
}

/**
 * One headless run, in steps: set up (the agent context, the root span, the
 * chat record), the phases (run or adhoc as a role, or a workflow and
 * perhaps its hand-off: role-phase.ts, workflow-phase.ts), then the end
 * (`session_end` and the exit code), failed runs included.
 */
class HeadlessRun {
  private readonly stdout: Writable
  private readonly stderr: Writable
  private readonly events: EventStream
  private readonly startedAt: number
  /** The configured price, once the config is loaded (session_end.costUsd). */
  private price: MyceliumConfig['agent']['price'] | undefined
  /** The tokens the model spent on children's sampling (agent-context.ts), counted into session_end's usage. */
  private sampled: AgentOutcome['usage'] | undefined
  /** The run's root span (tracing on): invoke_agent. */
  private root: SpanHandle | undefined
  private runtime: Runtime | undefined
  private readonly controller = new AbortController()

  constructor(private readonly options: HeadlessOptions) {
    this.stdout = options.stdout ?? process.stdout
    this.stderr = options.stderr ?? process.stderr
    this.events = new EventStream(
      options.json
        ? jsonLinesSink(this.stdout)
        : humanSink(this.stdout, this.stderr, markdownFor(this.stdout, options.env)),
      ChatRecorder.newId(),
    )
    this.startedAt = performance.now()
  }

  /** The run from start to end, SIGINT aborting it; the runtime closed whatever happened. */
  async run(): Promise<number> {
    const signals = this.options.signals ?? process
    const onInterrupt = () => this.controller.abort('interrupted')
    signals.once('SIGINT', onInterrupt)
    try {
      return await this.phases()
    } catch (error) {
      // With --json the stream ends properly even when the run never started.
      if (!this.options.json) throw error
      return this.failed(error)
    } finally {
      signals.off('SIGINT', onInterrupt)
      await this.runtime?.close({ urgent: this.controller.signal.aborted })
    }
  }

  /** The flags checked, the children started, then the run's phases. */
  private async phases(): Promise<number> {
    const { options } = this
    const kind = options.mode ?? 'run'
    const { ctx, context } = await this.setUp(kind)
    // The flags against the config before any child starts: a usage error never follows a child's start-up.
    checkRunPrincipal(ctx.opened, { kind, role: options.role, skills: options.skills }, options.env)
    checkPreapprovals(ctx.opened.loaded.config, ctx.runtime, options.approve ?? [])
    // On a terminal, a line per child while they start (not with --json).
    await startWithProgress(ctx.runtime, {
      stream: this.stderr,
      env: options.env,
      json: options.json,
      logger: options.logger,
    })
    const contextSection = context ? (await import('./failure-context.js')).contextPrompt(context) : undefined
    if (kind !== 'workflow')
      return this.finish(await runAsRole(ctx, { as: kind, task: options.task, extra: contextSection, announce: true }))
    const end = await runWorkflow(ctx)
    return this.finish(end.result, end.exitCode)
  }

  /** The agent context (config, runtime, views, client), the root span (tracing on) and the chat record it continues. */
  private async setUp(
    kind: 'run' | 'adhoc' | 'workflow',
  ): Promise<{ ctx: RunContext; context: FailureContext | undefined }> {
    const { options, events } = this
    const context = options.contextFile
      ? await (await import('./failure-context.js')).readFailureContext(options.contextFile)
      : undefined
    const opened = await openAgentContext({ ...options, onRuntime: (r) => (this.runtime = r) })
    this.sampled = opened.sampledUsage
    const runtime = this.runtime!
    this.price = opened.loaded.config.agent.price
    if (kind !== 'run' && opened.mode.kind !== 'policy')
      throw new MycError('usage', `myc ${kind} needs policy mode (skills and roles); in open mode use \`myc run\``)
    // One trace per run (tracing on): invoke_agent at its root, the chat and execute_tool spans under it.
    const run = startRunSpan(runtime.tracing, opened.model, kind)
    this.root = run?.span
    // Every run is recorded in a chat record (append-only, beside the config), or continues one.
    const { recordedChatsDir, loadChatRecord } = await import('./chat-store.js')
    const dir = recordedChatsDir(opened.loaded)
    const resumed = options.resume ? loadChatRecord(dir, options.resume) : undefined
    if (resumed) events.chatId = resumed.id
    const ctx: RunContext = {
      options,
      stderr: this.stderr,
      events,
      opened,
      runtime,
      signal: this.controller.signal,
      run,
      dir,
      resumed,
    }
    return { ctx, context }
  }

  /** A run that threw: with --json, an `error` event and `session_end` all the same. */
  private failed(error: unknown): number {
    const known = error instanceof MycError
    const message = error instanceof Error ? error.message : String(error)
    return this.finish(
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
  }

  /** The end of every run: the error said (stderr too with --json), `session_end`, the root span ended. Returns the exit code. */
  private finish(result: RunResult, exitCode = EXIT_BY_REASON[result.reason]): number {
    const { events, sampled, options } = this
    const outcome = sampled && result.usage ? { ...result, usage: sumUsage(result.usage, sampled) } : result
    if (outcome.error) {
      const message = redactUrls(outcome.error.message)
      events.emit({ type: 'error', code: outcome.error.code, message })
      // stdout is the stream; a person reading the job's log still gets one line (the human sink prints it already).
      if (options.json) this.stderr.write(`myc: ${terminalText(message)}\n`)
    }
    events.emit({
      type: 'session_end',
      ok: outcome.reason === 'done',
      reason: outcome.reason,
      turns: outcome.turns,
      usage: outcome.usage ?? { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
      durationMs: Math.round(performance.now() - this.startedAt),
      text: outcome.text,
      exitCode,
      permissionDenials: outcome.permissionDenials,
      ...(outcome.contextFile ? { contextFile: outcome.contextFile } : {}),
      ...(this.price && outcome.usage ? { costUsd: costUsd(outcome.usage, this.price)! } : {}),
      ...(this.root?.traceId ? { traceId: this.root.traceId } : {}),
    })
    if (this.root) endRunSpan(this.root, outcome)
    return exitCode
  }
}

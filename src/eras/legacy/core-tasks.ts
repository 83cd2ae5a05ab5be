import type { ChildConnection } from '../../children/child.js'
import type { CallerEra } from '../../children/child-session.js'
import type { InputSource } from '../../children/child-session.js'
import { missingCapabilityMessage, planRound, retryParams } from '../modern/input-bridge.js'
import {
  coreStatus,
  coreTask,
  coreTaskResult,
  isTerminalStatus,
  RELATED_TASK_META_KEY,
  withTasksExtension,
  type CoreTask,
} from '../modern/task-mapping.js'
import { RelayErrorCode, type RelayOutcome } from '../../protocol/request-relay.js'
import type { ForwardContext } from '../../protocol/upstream-relay.js'
import { hasTasksExtension, isObject, RpcCode } from '../../protocol/facts.js'
import type { Runtime } from '../../runtime/runtime.js'
import type { PrincipalView } from '../../principal/view.js'

/**
 * A 2025 client's core tasks (2025-11-25) of a modern child, which has the
 * tasks extension instead (SEP-2663), for one client connection. The task
 * was created by a task-augmented tools/call (child.ts opts in and maps the
 * CreateTaskResult, task-mapping.ts); the client's tasks/* then map onto
 * the extension here:
 *
 * - tasks/get: the child's tasks/get, as the 2025 Task;
 * - tasks/result: the child's tasks/get, polled (at its pollIntervalMs)
 *   until the task is terminal, then its inline result or error; while it
 *   is `input_required`, the client is asked the 2025 way (the requests of
 *   input-bridge.ts, on the tasks/result's own stream, marked with the
 *   related task) and the answers go to the child with tasks/update;
 * - tasks/cancel: the child's tasks/cancel, answered with the Task (a
 *   terminal task: -32602, as 2025-11-25 says);
 * - tasks/list: the extension has none; myc lists the connection's own
 *   tasks, each as the child's tasks/get tells it (or as last known).
 */

/** What a forwarded request of a 2025 connection carries (ClientConnection.calledBy). */
export type CoreTaskContext = ForwardContext & { caller?: object; callerEra?: CallerEra }

/** The child side: what is forwarded to it (ChildConnection's, narrowed for tests). */
export type TaskChild = Pick<ChildConnection, 'key' | 'forward'> & { config: { timeoutMs: number } }

/**
 * The 2025 core `tasks` capability (tools/call, list, cancel), offered when
 * a child has 2025 core tasks of its own, or a visible 2026 child has the
 * tasks extension (mapped here).
 */
export function coreTasksCapability(
  runtime: Pick<Runtime, 'supervisor'>,
  view: Pick<PrincipalView, 'serverVisible'>,
): { tasks?: Record<string, unknown> } {
  const children = [...runtime.supervisor.children.values()]
  const modernTasks = (c: (typeof children)[number]) =>
    c.era === 'modern' && hasTasksExtension(c.capabilities) && view.serverVisible(c.key)
  if (!children.some((c) => c.capabilities?.tasks || modernTasks(c))) return {}
  return { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }
}

/** Polling of tasks/result: the child's pollIntervalMs, within these bounds (this when it gives none). */
const DEFAULT_POLL_MS = 500
const MIN_POLL_MS = 50
const MAX_POLL_MS = 5_000

export class CoreTasksOverExtension {
  /** The last known Task of each of this connection's tasks on modern children. */
  private readonly known = new Map<string, CoreTask>()
  /** The input requests being asked now, per task (a second tasks/result does not ask them again). */
  private readonly asking = new Map<string, Set<string>>()

  /** @param resultTimeoutMs how long a tasks/result may wait for the task to finish (at least the child's timeoutMs). */
  constructor(private readonly resultTimeoutMs: number) {}

  /** A task a modern child created for this connection (the `task` of the 2025 CreateTaskResult). */
  remember(task: unknown): void {
    if (isObject(task) && typeof task.taskId === 'string') this.known.set(task.taskId, task as unknown as CoreTask)
  }

  /** Answers a 2025 tasks/get, tasks/result or tasks/cancel for task `taskId`, held by the modern `child`; undefined once cancelled. `source`: the client to ask while the task needs input. */
  async route(
    method: string,
    child: TaskChild,
    taskId: string,
    ctx: CoreTaskContext,
    source: InputSource | undefined,
  ): Promise<RelayOutcome | undefined> {
    let outcome: RelayOutcome | undefined
    if (method === 'tasks/get') outcome = await this.get(child, taskId, ctx)
    else if (method === 'tasks/result') outcome = await this.result(child, taskId, ctx, source)
    else if (method === 'tasks/cancel') outcome = await this.cancel(child, taskId, ctx)
    else outcome = { ok: false, error: { code: RpcCode.methodNotFound, message: `Method not found: ${method}` } }
    return ctx.cancellation.aborted ? undefined : outcome
  }

  /** The 2025 Tasks of `entries` (this connection's, on modern children), in that order: a task the child no longer knows is left out (and forgotten). */
  async list(entries: ReadonlyArray<readonly [string, TaskChild]>, ctx: CoreTaskContext): Promise<CoreTask[]> {
    const tasks = await Promise.all(
      entries.map(async ([taskId, child]) => {
        const got = await this.get(child, taskId, ctx)
        if (got.ok) return got.result as unknown as CoreTask
        return got.error.code === RpcCode.invalidParams ? undefined : this.known.get(taskId)
      }),
    )
    return tasks.filter((t): t is CoreTask => t !== undefined)
  }

  /** The child's tasks/get as the 2025 Task (remembered); the child's error as it is (an unknown task forgotten). */
  private async get(child: TaskChild, taskId: string, ctx: CoreTaskContext): Promise<RelayOutcome> {
    const got = await this.detailed(child, taskId, ctx)
    if (!got.ok) return got
    return {
      ok: true,
      result: { ...this.known.get(taskId)!, ...(isObject(got.result._meta) ? { _meta: got.result._meta } : {}) },
    }
  }

  /** The child's DetailedTask (its Task remembered); a tasks/get answer without a task is an error. */
  private async detailed(child: TaskChild, taskId: string, ctx: CoreTaskContext): Promise<RelayOutcome> {
    const got = await send(child, 'tasks/get', { taskId }, ctx)
    if (!got.ok) {
      if (got.error.code === RpcCode.invalidParams) this.known.delete(taskId)
      return got
    }
    const task = coreTask(got.result)
    if (!task)
      return {
        ok: false,
        error: {
          code: RpcCode.internalError,
          message: `Server "${child.key}" answered tasks/get for task ${taskId} without a task`,
        },
      }
    this.known.set(taskId, task)
    return got
  }

  private async result(
    child: TaskChild,
    taskId: string,
    ctx: CoreTaskContext,
    source: InputSource | undefined,
  ): Promise<RelayOutcome | undefined> {
    const waitMs = Math.max(child.config.timeoutMs, this.resultTimeoutMs)
    const deadline = Date.now() + waitMs
    for (;;) {
      const got = await this.detailed(child, taskId, ctx)
      if (ctx.cancellation.aborted) return undefined
      if (!got.ok) return got
      const done = coreTaskResult(got.result)
      if (done) return done
      if (coreStatus(got.result.status) === 'input_required') {
        const failed = await this.answer(child, taskId, got.result, ctx, source)
        if (failed) return failed
      }
      if (Date.now() >= deadline)
        return {
          ok: false,
          error: {
            code: RelayErrorCode.timeout,
            message: `Task ${taskId} did not finish within ${waitMs} ms`,
            data: { taskId, timeout: waitMs },
          },
        }
      const interval = typeof got.result.pollIntervalMs === 'number' ? got.result.pollIntervalMs : DEFAULT_POLL_MS
      await sleep(
        Math.min(Math.max(interval, MIN_POLL_MS), MAX_POLL_MS, Math.max(0, deadline - Date.now())),
        ctx.cancellation.signal,
      )
      if (ctx.cancellation.aborted) return undefined
    }
  }

  /**
   * The task needs input: the client is asked what the child asks (not what
   * is being asked already), and the answers go to the child with
   * tasks/update. A failure to report, or undefined.
   */
  private async answer(
    child: TaskChild,
    taskId: string,
    detailed: Record<string, unknown>,
    ctx: CoreTaskContext,
    source: InputSource | undefined,
  ): Promise<RelayOutcome | undefined> {
    // Nothing asked (yet): keep polling.
    if (!isObject(detailed.inputRequests) || Object.keys(detailed.inputRequests).length === 0) return undefined
    const plan = planRound({ inputRequests: detailed.inputRequests }, source?.capabilities)
    if (plan.kind === 'missing')
      return {
        ok: false,
        error: {
          code: RpcCode.internalError,
          message: missingCapabilityMessage(child.key, `task ${taskId}`, plan),
          data: { taskId, inputRequest: plan.method, missingCapability: plan.capability },
        },
      }
    if (plan.kind === 'invalid')
      return {
        ok: false,
        error: {
          code: RpcCode.internalError,
          message: `Server "${child.key}" asked for input for task ${taskId} in a way mycelium cannot use: ${plan.message}`,
          data: { taskId },
        },
      }
    const busy = this.asking.get(taskId) ?? new Set<string>()
    const asks = plan.asks.filter((a) => !busy.has(a.key))
    if (asks.length === 0 || !source) return undefined
    this.asking.set(taskId, busy)
    for (const a of asks) busy.add(a.key)
    try {
      const answers = await Promise.all(
        asks.map(async (a) => {
          const meta = isObject(a.params._meta) ? a.params._meta : {}
          const params = { ...a.params, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId } } }
          return [a.key, await source.ask(a.method, params, ctx.cancellation.signal)] as const
        }),
      )
      const updated = await send(child, 'tasks/update', retryParams({ taskId }, answers, undefined), ctx)
      return updated.ok ? undefined : updated
    } catch (error) {
      if (ctx.cancellation.aborted) return undefined
      return {
        ok: false,
        error: {
          code: RpcCode.internalError,
          message: `Task ${taskId} of server "${child.key}" needs input, and asking the MCP client connected to mycelium failed: ${error instanceof Error ? error.message : String(error)}`,
          data: { taskId },
        },
      }
    } finally {
      for (const a of asks) busy.delete(a.key)
      if (busy.size === 0) this.asking.delete(taskId)
    }
  }

  private async cancel(child: TaskChild, taskId: string, ctx: CoreTaskContext): Promise<RelayOutcome> {
    const before = await this.get(child, taskId, ctx)
    if (!before.ok) return before
    const status = coreStatus(before.result.status)
    if (isTerminalStatus(status))
      return {
        ok: false,
        error: { code: RpcCode.invalidParams, message: `Cannot cancel task ${taskId}: it is already ${status}` },
      }
    const cancelled = await send(child, 'tasks/cancel', { taskId }, ctx)
    if (!cancelled.ok) return cancelled
    const after = await this.get(child, taskId, ctx)
    if (after.ok) return after
    // Gone at once after the cancel: the Task as it was, cancelled.
    return { ok: true, result: { ...before.result, status: 'cancelled', lastUpdatedAt: new Date().toISOString() } }
  }
}

/** One request about a task to the child, declaring the extension (its opt-in) with what the 2025 client declared; its answer untouched. */
function send(
  child: TaskChild,
  method: string,
  params: Record<string, unknown>,
  ctx: CoreTaskContext,
): Promise<RelayOutcome> {
  const callerEra: CallerEra = {
    era: 'modern',
    clientCapabilities: withTasksExtension(ctx.callerEra?.clientCapabilities ?? {}),
  }
  return child.forward(method, params, {
    cancellation: ctx.cancellation,
    callerEra,
    ...(ctx.caller ? { caller: ctx.caller } : {}),
  })
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}

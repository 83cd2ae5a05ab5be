import type { ClientCapabilities } from '@modelcontextprotocol/client'
import type { ChildConnection } from '../../children/child.js'
import { ChildTask } from '../../children/child-tasks.js'
import type { PrincipalView } from '../../principal/view.js'
import { isObject, RpcCode } from '../../protocol/facts.js'
import { RelayErrorCode, type RelayOutcome } from '../../protocol/request-relay.js'
import type { Runtime } from '../../runtime/runtime.js'
import { keepFor } from '../modern/task-registry.js'
import { coreStatus, isTerminalStatus, type CoreTask } from '../modern/task-mapping.js'
import { CoreTasksOverExtension, type CoreTaskContext } from './core-tasks.js'

/** How long tasks/result may wait for a child's task to finish. */
const TASK_RESULT_TIMEOUT_MS = 60 * 60_000

/** Who the tasks belong to: the connection's principal, what its client declared, and how the client is asked. */
export interface TaskOwner {
  runtime: Runtime
  view: PrincipalView
  clientCapabilities(): ClientCapabilities | undefined
  /** Asks the client a 2025 request on the stream of its request `related`. */
  ask(
    server: string,
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
    related: string | number,
  ): Promise<Record<string, unknown>>
  /** Tells the client a notifications/tasks/status. */
  tell(params: Record<string, unknown>): void
}

/**
 * The 2025-11-25 core tasks of one 2025 connection: the tasks its
 * task-augmented tools/calls created, each routed to the child process that
 * runs it (a scoped server's: the instance that made it, the caller's own;
 * another connection's taskId is unknown here). A 2025 child's tasks/* are
 * its own; a 2026 child's tasks extension is mapped onto them
 * (core-tasks.ts). A task whose process is gone (a crash and restart, its
 * instance stopped) answers as failed, saying why (child-tasks.ts); one that
 * runs holds its instance (busy) until it is seen to end or this connection
 * goes.
 */
export class SessionTasks {
  /** Tasks created through this connection, by task id: the process that runs each. */
  private readonly held = new Map<string, ChildTask>()
  /** …and those on modern children, over their tasks extension. */
  private readonly overExtension = new CoreTasksOverExtension(TASK_RESULT_TIMEOUT_MS)

  constructor(private readonly owner: TaskOwner) {}

  /**
   * A tools/call of this connection was answered by `child`: a task it
   * created is remembered (later tasks/* go there). What the child told of
   * it before this answer got here (a task that ended at once) is told to
   * the client after the answer.
   */
  called(outcome: RelayOutcome, child: ChildConnection | undefined): void {
    const task = outcome.ok ? outcome.result.task : undefined
    if (!isObject(task) || typeof task.taskId !== 'string' || child === undefined) return
    const ttl = typeof task.ttl === 'number' ? task.ttl : null
    const createdAt = typeof task.createdAt === 'string' ? task.createdAt : new Date().toISOString()
    const held = new ChildTask(child, task.taskId, { createdAt, ttlMs: ttl })
    this.held.set(task.taskId, held)
    held.hold(keepFor(ttl))
    if (child.era === 'modern') this.overExtension.remember(task)
    const told = child.taskStatuses.get(task.taskId)
    // (Unless a newer one came meanwhile, and was told as it came.)
    if (told) setImmediate(() => child.taskStatuses.get(held.taskId) === told && this.told(child.key, told))
  }

  /** tasks/get, tasks/result or tasks/cancel: to the process that runs the task, for this connection only. */
  async route(
    method: string,
    params: Record<string, unknown> | undefined,
    ctx: CoreTaskContext & { requestId: string | number },
  ): Promise<RelayOutcome | undefined> {
    const taskId = params?.taskId
    const held = typeof taskId === 'string' ? this.held.get(taskId) : undefined
    if (!held || !this.owner.view.serverVisible(held.child.key))
      return {
        ok: false,
        error: {
          code: RpcCode.invalidParams,
          message: `Unknown task: ${typeof taskId === 'string' ? taskId : JSON.stringify(taskId)}`,
        },
      }
    const outcome = held.alive ? await this.ask(method, held, params, ctx) : undefined
    if (ctx.cancellation.aborted) return undefined
    // Its process is gone (before the request, or during it): the task is lost, and said so.
    if (!held.alive && !outcome?.ok) return lostOutcome(method, held)
    if (outcome) settle(method, held, outcome)
    return outcome
  }

  private async ask(
    method: string,
    held: ChildTask,
    params: Record<string, unknown> | undefined,
    ctx: CoreTaskContext & { requestId: string | number },
  ): Promise<RelayOutcome | undefined> {
    const { child, taskId } = held
    if (child.era === 'modern')
      return this.overExtension.route(method, child, taskId, ctx, {
        capabilities: this.owner.clientCapabilities(),
        ask: (m, p, signal) => this.owner.ask(child.key, m, p, signal, ctx.requestId),
      })
    // tasks/result waits for the task to finish: give it far longer than a call.
    return child.forward(method, params, {
      ...ctx,
      ...(method === 'tasks/result' ? { timeoutMs: Math.max(child.config.timeoutMs, TASK_RESULT_TIMEOUT_MS) } : {}),
    })
  }

  /** tasks/list: this connection's tasks, asked of each process that runs some (one page each); a lost one as failed. */
  async list(ctx: CoreTaskContext): Promise<RelayOutcome | undefined> {
    const visible = [...this.held.values()].filter((t) => this.owner.view.serverVisible(t.child.key))
    const running = visible.filter((t) => t.alive)
    // A modern child has no tasks/list: this connection's tasks there, one by one (core-tasks.ts).
    const modern = running.flatMap((t) => (t.child.era === 'modern' ? [[t.taskId, t.child] as const] : []))
    const children = [...new Set(running.filter((t) => t.child.era !== 'modern').map((t) => t.child))]
    const [lists, theirs] = await Promise.all([
      Promise.all(children.map(async (c) => [c, await c.forward('tasks/list', {}, ctx)] as const)),
      this.overExtension.list(modern, ctx),
    ])
    const tasks = [
      ...lists.flatMap(([child, o]) =>
        o.ok && Array.isArray(o.result.tasks)
          ? (o.result.tasks as Array<{ taskId: string }>).filter((t) => this.held.get(t.taskId)?.child === child)
          : [],
      ),
      ...theirs,
      ...visible.filter((t) => !t.alive).map(lostTask),
    ]
    return ctx.cancellation.aborted ? undefined : { ok: true, result: { tasks } }
  }

  /**
   * A 2025 child's notifications/tasks/status: told to this connection's
   * client when it is about a task this connection's call made on
   * `server`, and to no other; one that ended holds its instance no longer.
   * A 2026 child's tasks extension says nothing here.
   */
  told(server: string, params: Record<string, unknown>): void {
    const held = typeof params.taskId === 'string' ? this.held.get(params.taskId) : undefined
    if (!held || held.child.key !== server || held.child.era === 'modern' || !held.alive) return
    if (isTerminalStatus(coreStatus(params.status))) held.release()
    this.owner.tell(params)
  }

  /** The connection went: no one can ask for its tasks any more, so they hold no instance. */
  close(): void {
    for (const held of this.held.values()) held.release()
    this.held.clear()
  }
}

/** Relay errors that say nothing of the task (no answer came): it may run on. */
const NO_ANSWER: ReadonlySet<number> = new Set(Object.values(RelayErrorCode))

/**
 * What an answer says of the task: one seen to end (terminal, its result
 * read or its error, cancelled) holds its instance no longer.
 */
function settle(method: string, held: ChildTask, outcome: RelayOutcome): void {
  const ended = outcome.ok
    ? method === 'tasks/result' ||
      method === 'tasks/cancel' ||
      (method === 'tasks/get' && isTerminalStatus(coreStatus(outcome.result.status)))
    : method === 'tasks/result' && !NO_ANSWER.has(outcome.error.code)
  if (ended) held.release()
}

/** A lost task as a 2025 Task: failed, saying why. */
function lostTask(held: ChildTask): CoreTask {
  return {
    taskId: held.taskId,
    status: 'failed',
    ttl: held.made.ttlMs,
    createdAt: held.made.createdAt,
    lastUpdatedAt: held.lostSince,
    statusMessage: held.lostMessage(),
  }
}

/**
 * A task whose process is gone: tasks/get (and tasks/list) says it failed
 * and why, tasks/result fails with that, tasks/cancel is refused as for any
 * ended task (2025-11-25: -32602). Nothing is sent to any process.
 */
function lostOutcome(method: string, held: ChildTask): RelayOutcome {
  held.release()
  const message = held.lostMessage()
  if (method === 'tasks/get') return { ok: true, result: lostTask(held) as unknown as Record<string, unknown> }
  if (method === 'tasks/cancel')
    return { ok: false, error: { code: RpcCode.invalidParams, message: `Cannot cancel: ${message}` } }
  return { ok: false, error: { code: RpcCode.internalError, message, data: { taskId: held.taskId, status: 'failed' } } }
}

import type { ClientCapabilities } from '@modelcontextprotocol/client'
import type { PrincipalView } from '../../principal/view.js'
import { RpcCode } from '../../protocol/facts.js'
import type { RelayOutcome } from '../../protocol/request-relay.js'
import type { Runtime } from '../../runtime/runtime.js'
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
}

/**
 * The 2025-11-25 core tasks of one 2025 connection: the tasks its
 * task-augmented tools/calls created, each routed to the child that runs it
 * (another connection's taskId is unknown here). A 2025 child's tasks/*
 * are its own; a 2026 child's tasks extension is mapped onto them
 * (core-tasks.ts).
 */
export class SessionTasks {
  /** Tasks created through this connection: task id → the server that runs it. */
  private readonly servers = new Map<string, string>()
  /** …and those on modern children, over their tasks extension. */
  private readonly overExtension = new CoreTasksOverExtension(TASK_RESULT_TIMEOUT_MS)

  constructor(private readonly owner: TaskOwner) {}

  /** A tools/call of this connection was answered by `server`: a task it created is remembered (later tasks/* go there). */
  called(outcome: RelayOutcome, server: string | undefined): void {
    const task = outcome.ok ? (outcome.result.task as { taskId?: unknown } | undefined) : undefined
    const taskId = task?.taskId
    if (typeof taskId !== 'string' || server === undefined) return
    this.servers.set(taskId, server)
    if (this.owner.runtime.supervisor.children.get(server)?.era === 'modern') this.overExtension.remember(task)
  }

  /** tasks/get, tasks/result or tasks/cancel: to the child that runs the task, for this connection only. */
  async route(
    method: string,
    params: Record<string, unknown> | undefined,
    ctx: CoreTaskContext & { requestId: string | number },
  ): Promise<RelayOutcome | undefined> {
    const { runtime, view } = this.owner
    const taskId = params?.taskId
    const server = typeof taskId === 'string' ? this.servers.get(taskId) : undefined
    const child =
      server !== undefined && view.serverVisible(server) ? runtime.supervisor.children.get(server) : undefined
    if (!child)
      return {
        ok: false,
        error: {
          code: RpcCode.invalidParams,
          message: `Unknown task: ${typeof taskId === 'string' ? taskId : JSON.stringify(taskId)}`,
        },
      }
    if (child.era === 'modern')
      return this.overExtension.route(method, child, taskId as string, ctx, {
        capabilities: this.owner.clientCapabilities(),
        ask: (m, p, signal) => this.owner.ask(child.key, m, p, signal, ctx.requestId),
      })
    // tasks/result waits for the task to finish: give it far longer than a call.
    const outcome = await child.forward(method, params, {
      ...ctx,
      ...(method === 'tasks/result' ? { timeoutMs: Math.max(child.config.timeoutMs, TASK_RESULT_TIMEOUT_MS) } : {}),
    })
    return ctx.cancellation.aborted ? undefined : outcome
  }

  /** tasks/list: this connection's tasks, asked of each child that runs some (one page each). */
  async list(ctx: CoreTaskContext): Promise<RelayOutcome | undefined> {
    const { runtime, view } = this.owner
    const mine = new Set(this.servers.keys())
    const children = runtime.supervisor.children
    const servers = [...new Set(this.servers.values())].filter((s) => view.serverVisible(s))
    // A modern child has no tasks/list: this connection's tasks there, one by one (core-tasks.ts).
    const modern = [...this.servers].flatMap(([taskId, s]) =>
      servers.includes(s) && children.get(s)?.era === 'modern' ? [[taskId, children.get(s)!] as const] : [],
    )
    const [lists, theirs] = await Promise.all([
      Promise.all(
        servers
          .filter((s) => children.get(s)?.era !== 'modern')
          .map((s) => children.get(s)?.forward('tasks/list', {}, ctx)),
      ),
      this.overExtension.list(modern, ctx),
    ])
    const tasks = [
      ...lists.flatMap((o) =>
        o?.ok && Array.isArray(o.result.tasks)
          ? (o.result.tasks as Array<{ taskId: string }>).filter((t) => mine.has(t.taskId))
          : [],
      ),
      ...theirs,
    ]
    return ctx.cancellation.aborted ? undefined : { ok: true, result: { tasks } }
  }
}

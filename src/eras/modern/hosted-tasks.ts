import { randomUUID } from 'node:crypto'
import { ProtocolError, type ServerContext } from '@modelcontextprotocol/server'
import { CLIENT_CAPABILITIES_META_KEY, type ClientCapabilities } from '@modelcontextprotocol/client'
import type { ProgressParams, RelayOutcome } from '../../protocol/request-relay.js'
import type { PrincipalView } from '../../principal/view.js'
import type { Runtime } from '../../runtime/runtime.js'
import { Cancellation } from '../../protocol/cancellation.js'
import type { CallTarget, ParkedCall, ParkedSnapshot, RoundSink } from './parked-calls.js'
import { hasTasksExtension, RpcCode } from '../../protocol/facts.js'

/** …and at most this long (a `ttlMs` of null is "unlimited" for the child, not for myc's map). */
export const MAX_TASK_TTL_MS = 86_400_000

/**
 * The tasks extension (SEP-2663) for the tools of 2025 children, which have
 * no tasks of their own: myc holds the task. A 2026 client's tools/call that
 * declares the extension, to a tool of a child spoken to in the 2025 era, is
 * started as any call is (a ParkedCall, parked-calls.ts); when it has not
 * answered within IMMEDIATE_RESULT_MS, the client gets a CreateTaskResult
 * (`resultType: "task"`) instead of waiting, and the call goes on in the
 * background. What answers at once is answered at once (the extension lets a
 * server skip the task for a fast operation), so a quick tool stays a plain
 * call. Then:
 *
 * - tasks/get reads where the call is (ParkedCall.snapshot): `working`
 *   (with the child's latest progress report as `statusMessage`);
 *   `input_required` with the child's questions (elicitation/create,
 *   sampling/createMessage, roots/list) as `inputRequests`; `completed`
 *   with the child's result inline (a tool error is still `completed`,
 *   with `isError`); `failed` with the error inline; `cancelled`.
 * - tasks/update's `inputResponses` answer those questions (keys of no
 *   question out are ignored, a wrong shape is -32602).
 * - tasks/cancel cancels the child's call (`notifications/cancelled` to it).
 *
 * A task is its credential's (another's taskId answers as an unknown one,
 * task-routing.ts), kept HOSTED_TASK_TTL_MS from its creation (a call still
 * running then is cancelled), and at most MAX_HOSTED_TASKS are held: beyond
 * it the oldest ended task is forgotten, and when none has ended a new call
 * is simply not made a task (it answers when done, as without the
 * extension). The child's call stays bound by its server's `timeoutMs`.
 *
 * A 2025 child with 2025-11-25 core tasks for the tool (the `tasks`
 * capability for tools/call, the tool's `execution.taskSupport` optional or
 * required) makes the task itself: the call asks it for one (`task: { ttl
 * }`), and myc holds a task whose call is the child's `tasks/result` (it
 * ends with the task's result, and carries the child's questions of the
 * task, which park as above); the child's `ttl` and `pollInterval` become
 * `ttlMs` and `pollIntervalMs`, the `io.modelcontextprotocol/related-task`
 * key leaves the inline result, and tasks/cancel sends the child its
 * tasks/cancel. Such a tool that runs only as a task (`required`) answers a
 * request not declaring the extension -32021, as the extension says.
 */

/** How long a task is kept from its creation (its `ttlMs`). */
export const HOSTED_TASK_TTL_MS = 3_600_000
/** The `pollIntervalMs` suggested to clients. */
export const HOSTED_POLL_INTERVAL_MS = 500
/** Tasks held at most per runtime. */
const MAX_HOSTED_TASKS = 1_000
/** A call that answers within this long is answered as it is, not made a task. */
const IMMEDIATE_RESULT_MS = 500

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'

const isTerminal = (status: TaskStatus) => status === 'completed' || status === 'failed' || status === 'cancelled'

/** The `_meta` key a 2025 task result may carry; the extension puts the taskId at the root instead. */
const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task'

function withoutRelatedTask(result: Record<string, unknown>): Record<string, unknown> {
  const meta = result._meta as Record<string, unknown> | undefined
  if (!meta || typeof meta !== 'object' || !(RELATED_TASK_META_KEY in meta)) return result
  const { [RELATED_TASK_META_KEY]: _dropped, ...rest } = meta
  const { _meta: _old, ...bare } = result
  return Object.keys(rest).length > 0 ? { ...bare, _meta: rest } : bare
}

export interface HostedTaskOptions {
  /** The `pollIntervalMs` told to clients (HOSTED_POLL_INTERVAL_MS without). */
  pollIntervalMs?: number
  /** Called when the task is cancelled while it runs (a child's own 2025 task: its tasks/cancel). */
  onCancel?: () => void
}

/** One task myc holds: a call of a 2025 child running in the background for a credential. */
export class HostedTask {
  readonly createdAt = new Date().toISOString()
  lastUpdatedAt = this.createdAt
  status: TaskStatus = 'working'
  private cancelled = false
  /** The status (and the questions out) last seen: lastUpdatedAt moves when they change. */
  private seen = 'working:'
  private outcome: RelayOutcome | undefined

  constructor(
    readonly taskId: string,
    /** Whose task it is (a credential's key; '' over stdio). */
    readonly owner: string,
    /** The child whose call it runs. */
    readonly server: string,
    readonly call: ParkedCall,
    readonly ttlMs: number,
    private readonly options: HostedTaskOptions = {},
  ) {}

  get terminal(): boolean {
    this.refresh()
    return isTerminal(this.status)
  }

  /** Brings the status up to date with the call. */
  private refresh(): ParkedSnapshot {
    const snapshot = this.call.snapshot()
    if (isTerminal(this.status)) return snapshot
    let status: TaskStatus
    if (this.cancelled) status = 'cancelled'
    else if (snapshot.kind === 'done') {
      // As the call would have been answered (a question the client did not declare a capability for: -32021).
      this.outcome = this.call.explain(snapshot.outcome)
      status = !this.outcome ? 'cancelled' : this.outcome.ok ? 'completed' : 'failed'
    } else status = snapshot.kind
    const progress = this.call.lastProgress
    const seen =
      snapshot.kind === 'input_required' && status === 'input_required'
        ? `${status}:${Object.keys(snapshot.inputRequests).join(',')}`
        : `${status}:${progress ? `${progress.progress}:${progress.message ?? ''}` : ''}`
    if (seen !== this.seen) {
      this.seen = seen
      this.status = status
      this.lastUpdatedAt = new Date().toISOString()
    }
    return snapshot
  }

  private fields(): Record<string, unknown> {
    const statusMessage = this.status === 'working' ? progressWords(this.call.lastProgress) : undefined
    return {
      taskId: this.taskId,
      status: this.status,
      ...(statusMessage ? { statusMessage } : {}),
      createdAt: this.createdAt,
      lastUpdatedAt: this.lastUpdatedAt,
      ttlMs: this.ttlMs,
      pollIntervalMs: this.options.pollIntervalMs ?? HOSTED_POLL_INTERVAL_MS,
    }
  }

  /** The CreateTaskResult a tools/call is answered with. */
  created(): Record<string, unknown> {
    this.refresh()
    return { resultType: 'task', ...this.fields() }
  }

  /** tasks/get's DetailedTask: the questions out while input_required, the result or error inline once ended. */
  detailed(): Record<string, unknown> {
    const snapshot = this.refresh()
    const outcome = this.outcome
    return {
      ...this.fields(),
      ...(this.status === 'input_required' && snapshot.kind === 'input_required'
        ? { inputRequests: snapshot.inputRequests }
        : {}),
      ...(this.status === 'completed' && outcome?.ok ? { result: withoutRelatedTask(outcome.result) } : {}),
      ...(this.status === 'failed' && outcome && !outcome.ok ? { error: outcome.error } : {}),
    }
  }

  /** tasks/update: answers the questions out (ParkedCall.answer: -32602 for a wrong shape); nothing once ended. */
  update(inputResponses: Record<string, unknown> | undefined): void {
    if (this.terminal) return
    this.call.answer(inputResponses)
  }

  /** tasks/cancel: the child's call is cancelled and the task is `cancelled`; nothing once ended. */
  cancel(reason = 'cancelled by the client (tasks/cancel)'): void {
    if (this.terminal) return
    this.cancelled = true
    this.options.onCancel?.()
    this.call.cancellation.cancel(reason)
    this.refresh()
  }
}

/** A working task's statusMessage: the child's latest progress report, its message or else how far it got ("3/10"). */
function progressWords(progress: ProgressParams | undefined): string | undefined {
  if (!progress) return undefined
  if (typeof progress.message === 'string' && progress.message !== '') return progress.message
  return progress.total !== undefined ? `${progress.progress}/${progress.total}` : String(progress.progress)
}

/** The tasks myc holds, by credential and taskId, bounded (see the file comment). */
export class HostedTasks {
  private readonly tasks = new Map<string, HostedTask>()
  private readonly timers = new Map<string, NodeJS.Timeout>()

  constructor(
    private readonly max = MAX_HOSTED_TASKS,
    private readonly ttlMs = HOSTED_TASK_TTL_MS,
  ) {}

  get size(): number {
    return this.tasks.size
  }

  /** A new task of `owner` running `call` of `server`, kept `ttlMs`; undefined when MAX_HOSTED_TASKS are held and none has ended. */
  create(
    owner: string,
    server: string,
    call: ParkedCall,
    options: HostedTaskOptions & { ttlMs?: number } = {},
  ): HostedTask | undefined {
    if (this.tasks.size >= this.max) {
      const ended = [...this.tasks].find(([, t]) => t.terminal)
      if (!ended) return undefined
      this.forget(ended[0])
    }
    const ttlMs = Math.min(options.ttlMs ?? this.ttlMs, this.ttlMs)
    const task = new HostedTask(randomUUID(), owner, server, call, ttlMs, options)
    const key = taskKey(owner, task.taskId)
    this.tasks.set(key, task)
    const timer = setTimeout(() => this.expire(key), ttlMs)
    timer.unref()
    this.timers.set(key, timer)
    return task
  }

  /** `owner`'s task `taskId`; undefined for one `owner` does not have (another's included). */
  find(owner: string, taskId: string): HostedTask | undefined {
    return this.tasks.get(taskKey(owner, taskId))
  }

  /** Its ttl is over: forgotten, and its call cancelled if it still runs. */
  private expire(key: string): void {
    const task = this.tasks.get(key)
    this.forget(key)
    task?.cancel('the task expired (its ttlMs is over)')
  }

  private forget(key: string): void {
    clearTimeout(this.timers.get(key))
    this.timers.delete(key)
    this.tasks.delete(key)
  }

  /** Cancels every task still running and forgets them all. */
  close(): void {
    for (const key of [...this.tasks.keys()]) this.expire(key)
  }
}

/** A task's key among its credential's: owner and taskId (two credentials, or two children, may mint the same taskId). */
export function taskKey(owner: string, taskId: string): string {
  return `${owner}\u0000${taskId}`
}

/** How myc holds the task of a call (taskHosting): which child, and whether the child makes the task itself (2025 core tasks). */
export interface TaskHosting {
  server: string
  /** The child has 2025-11-25 core tasks for this tool: it is asked for a task (`task: { ttl }`), which myc maps. */
  core: boolean
}

/** A 2025 tool's `execution.taskSupport`, and whether its child has 2025 core tasks for tools/call. */
function coreTaskSupport(
  runtime: Runtime,
  view: PrincipalView,
  name: string,
): { server: string; legacy: boolean; support: string | undefined } | undefined {
  const entry = runtime.catalogue.toolByWire(name)
  if (!entry || !view.toolVisible(entry)) return undefined
  const child = runtime.supervisor.children.get(entry.server)
  if (!child) return undefined
  const tasks = (child.capabilities as { tasks?: { requests?: { tools?: { call?: unknown } } } } | undefined)?.tasks
  const support =
    tasks?.requests?.tools?.call !== undefined
      ? (entry.def as { execution?: { taskSupport?: unknown } }).execution?.taskSupport
      : undefined
  return {
    server: entry.server,
    legacy: child.era === 'legacy',
    support: typeof support === 'string' ? support : undefined,
  }
}

function declaresTasks(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined
  return hasTasksExtension(envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined)
}

/**
 * How myc holds a task for a 2026 request's call, when it does: a
 * tools/call declaring the extension, to a visible tool of a child spoken to
 * in the 2025 era. The child's own 2025 task when it has core tasks for that
 * tool (`execution.taskSupport` optional or required), else one myc runs.
 * Undefined otherwise (a modern child makes its own tasks; myc's own tools
 * answer at once).
 */
export function taskHosting(
  runtime: Runtime,
  view: PrincipalView,
  ctx: ServerContext,
  target: CallTarget,
): TaskHosting | undefined {
  if (target.method !== 'tools/call' || !declaresTasks(ctx)) return undefined
  const tool = coreTaskSupport(runtime, view, target.name)
  if (!tool?.legacy) return undefined
  return { server: tool.server, core: tool.support === 'optional' || tool.support === 'required' }
}

/** A tools/call not declaring the extension, of a 2025 tool that runs only as a task (`taskSupport: "required"`): -32021, as the extension says. */
export function needsTaskOptIn(runtime: Runtime, view: PrincipalView, ctx: ServerContext, target: CallTarget): boolean {
  if (target.method !== 'tools/call' || declaresTasks(ctx)) return false
  const tool = coreTaskSupport(runtime, view, target.name)
  return tool?.legacy === true && tool.support === 'required'
}

/** A 2025 CreateTaskResult's task (`{ task: { taskId, status, ttl, pollInterval… } }`), or undefined. */
function coreCreatedTask(
  result: Record<string, unknown>,
): { taskId: string; ttl: number | undefined; pollInterval: number | undefined } | undefined {
  const task = result.task as Record<string, unknown> | undefined
  if (!task || typeof task !== 'object' || typeof task.taskId !== 'string' || task.taskId === '') return undefined
  const positive = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined)
  return { taskId: task.taskId, ttl: positive(task.ttl), pollInterval: positive(task.pollInterval) }
}

/**
 * A task opt-in's call, started (`call`): what the client gets instead of
 * waiting, or undefined to answer it as any call is answered.
 *
 * - Held by myc: the call's answer when it ends within
 *   IMMEDIATE_RESULT_MS (undefined), else a task running the call.
 * - A child's 2025 core task: the call asked the child for a task (`task:
 *   { ttl }`); its `{ task }` answer becomes a task myc holds, whose call is
 *   the child's `tasks/result` (it ends with the task's result, and brings
 *   the child's questions of the task, which park as any call's do);
 *   cancelling it sends the child `tasks/cancel`. Any other answer (an
 *   error, a plain result, a question) is answered as it is.
 */
export async function startAsTask(
  store: HostedTasks,
  hosting: TaskHosting,
  call: ParkedCall,
  ctx: ServerContext,
  sink: RoundSink,
  open: (target: CallTarget) => ParkedCall,
): Promise<Record<string, unknown> | undefined> {
  const settle = (ms: number) =>
    call.settle(ms, ctx.mcpReq.signal, sink).catch(() => {
      // The client gave up on the request: the child's call goes with it.
      call.cancellation.cancel('cancelled by the client')
      throw new ProtocolError(RpcCode.requestCancelled, 'Request cancelled')
    })
  if (!hosting.core) {
    if ((await settle(IMMEDIATE_RESULT_MS)).kind === 'done') return undefined
    return store.create(call.principal, hosting.server, call)?.created()
  }
  const now = await settle(MAX_TASK_TTL_MS)
  const created = now.kind === 'done' && now.outcome?.ok ? coreCreatedTask(now.outcome.result) : undefined
  // The task lives in the process that made it (a scoped server's: the caller's instance): its result and cancel go there.
  const child = call.answeredBy
  if (!created || !child) return undefined
  const childTask = { taskId: created.taskId }
  const results = open({ method: 'tasks/result', name: created.taskId })
  results.clientCapabilities = call.clientCapabilities
  const ttlMs = Math.min(created.ttl ?? HOSTED_TASK_TTL_MS, HOSTED_TASK_TTL_MS)
  results.start((origin) =>
    child.forward('tasks/result', childTask, { cancellation: results.cancellation, caller: origin, timeoutMs: ttlMs }),
  )
  const cancelAtChild = () =>
    void child.forward('tasks/cancel', childTask, { cancellation: new Cancellation(), timeoutMs: 10_000 })
  const task = store.create(call.principal, hosting.server, results, {
    ttlMs,
    ...(created.pollInterval ? { pollIntervalMs: created.pollInterval } : {}),
    onCancel: cancelAtChild,
  })
  if (task) return task.created()
  cancelAtChild()
  results.cancellation.cancel('mycelium holds too many tasks')
  throw new ProtocolError(
    RpcCode.internalError,
    `mycelium holds ${MAX_HOSTED_TASKS} tasks already: try again when some have ended`,
  )
}

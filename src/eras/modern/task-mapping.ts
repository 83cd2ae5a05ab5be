import type { ClientCapabilities } from '@modelcontextprotocol/client'
import type { RelayOutcome } from '../../protocol/request-relay.js'
import { isObject, TASKS_EXTENSION, RpcCode } from '../../protocol/facts.js'

/**
 * 2025-11-25 core tasks over the 2026-07-28 tasks extension (SEP-2663): the
 * pure mapping between the two shapes, for a 2025 client's task of a
 * modern child. The 2025 client asks for a task with `task: { ttl }` on its
 * tools/call; the extension's opt-in is the extension declared in the
 * request's client capabilities (the envelope). The child answers with a
 * flat CreateTaskResult (`resultType: "task"`, taskId, status, `ttlMs`,
 * `pollIntervalMs`…), which the 2025 client gets as `{ task: { taskId,
 * status, ttl, pollInterval… } }`; the child's tasks/get (a DetailedTask:
 * the result or error inline once terminal, `inputRequests` while
 * `input_required`) answers the 2025 tasks/get (the Task alone) and, once
 * terminal, tasks/result (the inline result, or the error).
 */

/** The statuses of a 2025 Task (the extension has the same five). */
const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const
export type TaskStatus = (typeof TASK_STATUSES)[number]

/** The `_meta` key naming the task a message belongs to (2025-11-25). */
export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task'

/** A 2025-11-25 Task. */
export interface CoreTask {
  taskId: string
  status: TaskStatus
  /** Milliseconds the task is kept from its creation; null: unlimited. */
  ttl: number | null
  createdAt: string
  lastUpdatedAt: string
  pollInterval?: number
  statusMessage?: string
}

/** A child's status as a 2025 one: the five known ones as they are, anything else (a later revision's) as `working`, so the client keeps polling. */
export function coreStatus(status: unknown): TaskStatus {
  return (TASK_STATUSES as readonly unknown[]).includes(status) ? (status as TaskStatus) : 'working'
}

export function isTerminalStatus(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled'
}

const positive = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined

/**
 * A 2026 task (a CreateTaskResult, a Task or a DetailedTask: the fields are
 * flat) as a 2025 Task: `ttlMs` → `ttl` (absent or not a number: null,
 * unlimited), `pollIntervalMs` → `pollInterval`, `lastUpdatedAt` defaulting
 * to `createdAt`. Undefined without a taskId.
 */
export function coreTask(modern: Record<string, unknown>): CoreTask | undefined {
  if (typeof modern.taskId !== 'string' || modern.taskId === '') return undefined
  const createdAt = typeof modern.createdAt === 'string' ? modern.createdAt : new Date(0).toISOString()
  const pollInterval = positive(modern.pollIntervalMs)
  return {
    taskId: modern.taskId,
    status: coreStatus(modern.status),
    ttl: positive(modern.ttlMs) ?? null,
    createdAt,
    lastUpdatedAt: typeof modern.lastUpdatedAt === 'string' ? modern.lastUpdatedAt : createdAt,
    ...(pollInterval !== undefined ? { pollInterval } : {}),
    ...(typeof modern.statusMessage === 'string' ? { statusMessage: modern.statusMessage } : {}),
  }
}

/** A child's `resultType: "task"` answer as the 2025 CreateTaskResult (its `_meta` kept); undefined when it is not one. */
export function coreCreateTaskResult(modern: Record<string, unknown>): Record<string, unknown> | undefined {
  if (modern.resultType !== 'task') return undefined
  const task = coreTask(modern)
  if (!task) return undefined
  return { ...(isObject(modern._meta) ? { _meta: modern._meta } : {}), task }
}

/** Whether a 2025 request asks to run as a task (`task: { ttl? }` in its params). */
export function isTaskAugmented(params: Record<string, unknown> | undefined): boolean {
  return isObject(params?.task)
}

/** The params a modern child gets: the same without the 2025 `task` member (the extension's opt-in is the capability). */
export function withoutTaskAugmentation(params: Record<string, unknown> | undefined): Record<string, unknown> {
  const { task: _task, ...rest } = params ?? {}
  return rest
}

/** Client capabilities that also declare the tasks extension (the opt-in of a request to a modern child). */
export function withTasksExtension(caps: ClientCapabilities | undefined): ClientCapabilities {
  const extensions = (caps as { extensions?: unknown } | undefined)?.extensions
  return {
    ...caps,
    extensions: { ...(isObject(extensions) ? extensions : {}), [TASKS_EXTENSION]: {} },
  } as ClientCapabilities
}

/**
 * What the 2025 tasks/result answers for a child's DetailedTask: undefined
 * while it is not terminal; once completed the inline result (with the
 * related-task `_meta`); once failed its inline error (or a result, when
 * the child put one there: a tool error is a result); once cancelled, or
 * terminal with neither, an error saying so.
 */
export function coreTaskResult(detailed: Record<string, unknown>): RelayOutcome | undefined {
  const status = coreStatus(detailed.status)
  if (!isTerminalStatus(status)) return undefined
  const taskId = String(detailed.taskId ?? '')
  if (isObject(detailed.result)) return { ok: true, result: withRelatedTask(detailed.result, taskId) }
  const error = detailed.error
  if (status === 'failed' && isObject(error) && typeof error.code === 'number' && typeof error.message === 'string')
    return {
      ok: false,
      error: { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) },
    }
  return {
    ok: false,
    error: {
      code: RpcCode.internalError,
      message: status === 'cancelled' ? `Task ${taskId} was cancelled` : `Task ${taskId} ${status} without a result`,
      data: { taskId, status },
    },
  }
}

/** A result marked as the outcome of task `taskId` (2025-11-25: tasks/result carries the related-task `_meta`). */
export function withRelatedTask(result: Record<string, unknown>, taskId: string): Record<string, unknown> {
  return { ...result, _meta: { ...(isObject(result._meta) ? result._meta : {}), [RELATED_TASK_META_KEY]: { taskId } } }
}

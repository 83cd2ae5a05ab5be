import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server'
import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  type ClientCapabilities,
  type LoggingLevel,
} from '@modelcontextprotocol/client'
import type { CallerEra } from '../../children/child-session.js'
import { Cancellation } from '../../protocol/cancellation.js'
import { passthrough } from '../../protocol/passthrough.js'
import type { RelayOutcome } from '../../protocol/request-relay.js'
import type { PrincipalView } from '../../principal/view.js'
import type { Runtime } from '../../runtime/runtime.js'
import { MAX_TASK_TTL_MS, type HostedTask } from './hosted-tasks.js'
import type { TaskRegistry } from './task-registry.js'
import { principalOf } from './parked-registry.js'
import { hasTasksExtension, isObject, TASKS_EXTENSION, RpcCode } from '../../protocol/facts.js'

/**
 * The tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) for
 * 2026-07-28 clients, over the modern children that have it. A child creates
 * the task (a tools/call answered with a CreateTaskResult, `resultType:
 * "task"`), which passes back to the client as it is; myc remembers whose
 * task it is and which child holds it, and routes the client's `tasks/get`,
 * `tasks/update` and `tasks/cancel` there (with the modern envelope, so the
 * child sees the extension the client declared). A taskId myc does not
 * know, or one created for another credential, answers -32602 exactly as
 * an unknown task: never "it exists, but not for you". A request that does
 * not declare the extension gets -32021 naming it, as from the child itself.
 * (`tasks/list` and `tasks/result` are gone in this version of the
 * extension: the SDK answers them -32601.)
 *
 * The taskId is the child's own, kept, not wrapped. Wrapping it (sealed
 * with the server and the credential, as myc's requestState is) would make
 * routing stateless across replicas, but a task lives in one child process
 * of one replica anyway: the SEP-2663 binding puts the taskId in the
 * `Mcp-Name` header precisely so that a load balancer can send every request
 * for a task to the instance that holds it. Kept as it is, the taskId
 * matches what the child puts everywhere else (its status notifications,
 * the `io.modelcontextprotocol/related-task` keys in `_meta`), which so
 * pass through untouched. The price is a map (TaskLedger, task-registry.ts): bounded, each
 * entry forgotten after the task's own `ttlMs`, and keyed by credential and
 * taskId, so two children (or two credentials) minting the same taskId do
 * not see each other's.
 */

export { hasTasksExtension, MAX_TASK_TTL_MS, TASKS_EXTENSION }

/**
 * The tasks extension, offered to a 2026 client when a child its view
 * reaches has it, or is a 2025 child (myc holds the tasks of those:
 * hosted-tasks.ts), or has not started yet (it may be either).
 */
export function tasksExtensionCapability(
  runtime: Pick<Runtime, 'supervisor'>,
  view: Pick<PrincipalView, 'serverVisible'>,
): { extensions?: Record<string, unknown> } {
  const offered = [...runtime.supervisor.children.values()].some(
    (c) =>
      view.serverVisible(c.key) && (c.state !== 'RUNNING' || c.era === 'legacy' || hasTasksExtension(c.capabilities)),
  )
  return offered ? { extensions: { [TASKS_EXTENSION]: {} } } : {}
}

/** What a 2026 request declared in its envelope (undefined without one). */
function declaredCapabilities(ctx: ServerContext): ClientCapabilities | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined
  const caps = envelope?.[CLIENT_CAPABILITIES_META_KEY]
  return isObject(caps) ? (caps as ClientCapabilities) : undefined
}

/** The task a child's answer created: its `resultType: "task"` CreateTaskResult, flat (SEP-2663), with a taskId. */
export function createdTask(
  result: Record<string, unknown>,
): { taskId: string; ttlMs: number | null | undefined } | undefined {
  if (result.resultType !== 'task' || typeof result.taskId !== 'string' || result.taskId === '') return undefined
  return { taskId: result.taskId, ttlMs: ttlOf(result.ttlMs) }
}

function ttlOf(value: unknown): number | null | undefined {
  if (value === null) return null
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined
}

/**
 * What a forwarded request of `ctx` adds to its CallerEra: when it declared
 * the extension, a task a child creates for it is remembered as its
 * credential's (before the client has the taskId, so an immediate tasks/get
 * finds it). Nothing for a request that did not: a child does not create
 * tasks for it (the client's capabilities reach the child per request).
 */
export function taskCaller(tasks: TaskRegistry, ctx: ServerContext): Pick<CallerEra, 'taskCreated'> {
  if (!hasTasksExtension(declaredCapabilities(ctx))) return {}
  const owner = principalOf(ctx)
  return {
    taskCreated: (server, result) => {
      const task = createdTask(result)
      if (task) tasks.ledger.remember(owner, task.taskId, server, task.ttlMs)
    },
  }
}

/** The methods routed to the child holding the task (SEP-2663). */
const TASK_METHODS = ['tasks/get', 'tasks/update', 'tasks/cancel'] as const

/** The -32602 of a task that does not exist for the caller: the same whether it never existed, expired, or is another credential's. */
function unknownTask(taskId: unknown): ProtocolError {
  return new ProtocolError(
    RpcCode.invalidParams,
    `Unknown taskId: ${typeof taskId === 'string' ? taskId : JSON.stringify(taskId ?? null)}`,
  )
}

/** The -32021 of a request about tasks that did not declare the extension. */
export function missingTasksExtension(): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } as ClientCapabilities },
    `This needs the ${TASKS_EXTENSION} extension: declare it in the request's client capabilities`,
  )
}

function answer(outcome: RelayOutcome): Record<string, unknown> {
  if (outcome.ok) return outcome.result
  const error = outcome.error as { code: number; message: string; data?: unknown }
  throw new ProtocolError(error.code, error.message, error.data)
}

/** A task method for a task myc holds: its DetailedTask, or the empty ack of an update or a cancel. */
function answerHosted(
  method: (typeof TASK_METHODS)[number],
  task: HostedTask,
  inputResponses: Record<string, unknown> | undefined,
): Record<string, unknown> {
  if (method === 'tasks/get') return task.detailed()
  if (method === 'tasks/update') task.update(inputResponses)
  else task.cancel()
  return {}
}

/**
 * Registers tasks/get, tasks/update and tasks/cancel on a 2026 request's
 * server, when its capabilities advertise the extension (capabilitiesOf:
 * a child the view reaches has it, or a 2025 child myc holds tasks for).
 * Each is answered by the child holding the task, or by myc for a task it
 * holds (hosted-tasks.ts), for the credential that created it, while the
 * view still reaches that child.
 */
export function registerTaskHandlers(server: Server, runtime: Runtime, view: PrincipalView, tasks: TaskRegistry): void {
  if (!hasTasksExtension(server.getCapabilities())) return
  const { ledger } = tasks
  for (const method of TASK_METHODS) {
    server.setRequestHandler(method, { params: passthrough }, async (params, ctx) => {
      const declared = declaredCapabilities(ctx)
      if (!hasTasksExtension(declared)) throw missingTasksExtension()
      const owner = principalOf(ctx)
      const taskId = params.taskId
      // A task myc holds itself (a 2025 child's call, hosted-tasks.ts), while the view still reaches that child.
      const hosted = typeof taskId === 'string' ? tasks.hosted.find(owner, taskId) : undefined
      if (hosted && view.serverVisible(hosted.server))
        return answerHosted(
          method,
          hosted,
          ctx.mcpReq.inputResponses ?? (params.inputResponses as Record<string, unknown> | undefined),
        ) as never
      const holder = typeof taskId === 'string' ? ledger.serverOf(owner, taskId) : undefined
      const child =
        holder !== undefined && view.serverVisible(holder) ? runtime.supervisor.children.get(holder) : undefined
      if (!child || typeof taskId !== 'string') throw unknownTask(taskId)
      // The SDK lifts a tasks/update's inputResponses off the params it hands over (as for a retried tools/call): the child needs them back.
      const sent =
        method === 'tasks/update' && ctx.mcpReq.inputResponses
          ? { ...params, inputResponses: ctx.mcpReq.inputResponses }
          : params
      const logLevel = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY] as
        LoggingLevel | undefined
      const callerEra: CallerEra = {
        era: 'modern',
        ...(logLevel ? { logLevel } : {}),
        ...(declared ? { clientCapabilities: declared } : {}),
      }
      const outcome = await child.forward(method, sent, {
        cancellation: Cancellation.from(ctx.mcpReq.signal),
        callerEra,
      })
      // A tasks/get answered: the task is kept for its ttlMs from now (what the child says it keeps it for).
      if (outcome.ok && method === 'tasks/get') ledger.remember(owner, taskId, child.key, ttlOf(outcome.result.ttlMs))
      return answer(outcome) as never
    })
  }
}

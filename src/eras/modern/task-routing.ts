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
import { ChildTask } from '../../children/child-tasks.js'
import type { ToolCallContext } from '../../runtime/principal-tools.js'
import { Cancellation } from '../../protocol/cancellation.js'
import { passthrough } from '../../protocol/passthrough.js'
import type { RelayOutcome } from '../../protocol/request-relay.js'
import type { PrincipalView } from '../../principal/view.js'
import type { Runtime } from '../../runtime/runtime.js'
import { MAX_TASK_TTL_MS, type HostedTask } from './hosted-tasks.js'
import { keepFor, type TaskRegistry } from './task-registry.js'
import { coreStatus, isTerminalStatus } from './task-mapping.js'
import { principalOf } from './parked-registry.js'
import { hasTasksExtension, isObject, TASKS_EXTENSION, RpcCode } from '../../protocol/facts.js'

/**
 * The tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) for
 * 2026-07-28 clients, over the modern children that have it. A child creates
 * the task (a tools/call answered with a CreateTaskResult, `resultType:
 * "task"`), which passes back to the client as it is; myc remembers whose
 * task it is and which child process holds it (a scoped server's: the
 * instance that made it, the caller's own; children/child-tasks.ts), and
 * routes the client's `tasks/get`, `tasks/update` and `tasks/cancel` there
 * (with the modern envelope, so the child sees the extension the client
 * declared). A taskId myc does not know, or one created for another
 * credential, answers -32602 exactly as an unknown task: never "it exists,
 * but not for you". A task whose process is gone (a crash and restart, its
 * instance stopped) answers as failed, saying so, without asking anyone. A request that does
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
 * What a forwarded tools/call of `ctx` adds to its context: when it declared
 * the extension, a task a child creates for it is remembered as its
 * credential's, with the connection that made it (a scoped server's instance:
 * the caller's own), before the client has the taskId, so an immediate
 * tasks/get finds it. Nothing for a request that did not: a child does not
 * create tasks for it (the client's capabilities reach the child per request).
 */
export function taskCaller(tasks: TaskRegistry, ctx: ServerContext): Pick<ToolCallContext, 'answered'> {
  if (!hasTasksExtension(declaredCapabilities(ctx))) return {}
  const owner = principalOf(ctx)
  return {
    answered: (child, result) => {
      const task = createdTask(result)
      if (!task) return
      const made = {
        createdAt: typeof result.createdAt === 'string' ? result.createdAt : new Date().toISOString(),
        ttlMs: task.ttlMs ?? null,
      }
      const held = new ChildTask(child, task.taskId, made)
      tasks.ledger.remember(owner, task.taskId, held, task.ttlMs)
      held.hold(keepFor(task.ttlMs))
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
 * Each is answered by the child process holding the task (a scoped server's:
 * the instance that made it), or by myc for a task it holds
 * (hosted-tasks.ts), for the credential that created it, while the view
 * still reaches that child.
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
      if (typeof taskId !== 'string') throw unknownTask(taskId)
      // A task myc holds itself (a 2025 child's call, hosted-tasks.ts), while the view still reaches that child.
      const hosted = tasks.hosted.find(owner, taskId)
      if (hosted && view.serverVisible(hosted.server))
        return answerHosted(
          method,
          hosted,
          ctx.mcpReq.inputResponses ?? (params.inputResponses as Record<string, unknown> | undefined),
        ) as never
      const held = ledger.holderOf(owner, taskId)
      if (!held || !view.serverVisible(held.child.key)) throw unknownTask(taskId)
      const outcome = held.alive ? await askHolder(method, held, params, ctx, declared) : undefined
      // Its process is gone (before the request, or during it): the task is lost, and said so.
      if (!held.alive && !outcome?.ok) return lostAnswer(method, held) as never
      if (outcome?.ok) settle(method, held, outcome.result, (ttlMs) => ledger.remember(owner, taskId, held, ttlMs))
      return answer(outcome!) as never
    })
  }
}

/** A task request sent to the process holding the task, with the modern envelope of the request. */
function askHolder(
  method: (typeof TASK_METHODS)[number],
  held: ChildTask,
  params: Record<string, unknown>,
  ctx: ServerContext,
  declared: ClientCapabilities | undefined,
): Promise<RelayOutcome> {
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
  return held.child.forward(method, sent, { cancellation: Cancellation.from(ctx.mcpReq.signal), callerEra })
}

/**
 * What the child's answer says of the task: a tasks/get keeps it for its
 * ttlMs from now (what the child says it keeps it for), and the task holds
 * its instance while it runs; one that ended, or was cancelled, holds it no
 * longer.
 */
function settle(
  method: (typeof TASK_METHODS)[number],
  held: ChildTask,
  result: Record<string, unknown>,
  remember: (ttlMs: number | null | undefined) => void,
): void {
  if (method === 'tasks/cancel') return held.release()
  if (method !== 'tasks/get') return
  const ttlMs = ttlOf(result.ttlMs)
  remember(ttlMs)
  if (isTerminalStatus(coreStatus(result.status))) held.release()
  else held.hold(keepFor(ttlMs))
}

/**
 * A task whose process is gone (a crash and restart, its instance stopped):
 * tasks/get says it failed, and why; tasks/update and tasks/cancel are
 * acknowledged as for any ended task (nothing is sent anywhere).
 */
function lostAnswer(method: (typeof TASK_METHODS)[number], held: ChildTask): Record<string, unknown> {
  held.release()
  if (method !== 'tasks/get') return {}
  const message = held.lostMessage()
  return {
    taskId: held.taskId,
    status: 'failed',
    statusMessage: message,
    createdAt: held.made.createdAt,
    lastUpdatedAt: held.lostSince,
    ttlMs: held.made.ttlMs,
    error: { code: RpcCode.internalError, message },
  }
}

import type { Server, ServerContext } from '@modelcontextprotocol/server'
import { describe, expect, it } from 'vitest'
import type { ChildConnection } from '../../../src/children/child.js'
import type { CallerEra } from '../../../src/children/child-session.js'
import { ChildTask } from '../../../src/children/child-tasks.js'
import { TaskHolds } from '../../../src/children/task-holds.js'
import type { PrincipalView } from '../../../src/principal/view.js'
import type { RelayOutcome } from '../../../src/protocol/request-relay.js'
import type { Runtime } from '../../../src/runtime/runtime.js'
import {
  createdTask,
  hasTasksExtension,
  MAX_TASK_TTL_MS,
  registerTaskHandlers,
  TASKS_EXTENSION,
  taskCaller,
} from '../../../src/eras/modern/task-routing.js'
import { DEFAULT_TASK_TTL_MS, keepFor, TaskLedger, TaskRegistry } from '../../../src/eras/modern/task-registry.js'

const CAPS_KEY = 'io.modelcontextprotocol/clientCapabilities'
const WITH_TASKS = { extensions: { [TASKS_EXTENSION]: {} } }

type Forward = (
  method: string,
  params: Record<string, unknown>,
  options: { callerEra?: CallerEra },
) => Promise<RelayOutcome>

/** A child connection as the routing sees one: its key, a running process, its held tasks, and `forward`. */
function fakeChild(key: string, forward: Forward = () => Promise.reject(new Error('not sent'))): ChildConnection {
  return {
    key,
    state: 'RUNNING',
    startedAt: new Date(0),
    lastError: undefined,
    heldTasks: new TaskHolds(),
    forward,
  } as unknown as ChildConnection
}

/** A handler context as the SDK gives one: the request's envelope, and the credential over HTTP. */
function ctxOf(
  options: { capabilities?: Record<string, unknown>; clientId?: string; inputResponses?: Record<string, unknown> } = {},
): ServerContext {
  return {
    mcpReq: {
      envelope: options.capabilities ? { [CAPS_KEY]: options.capabilities } : undefined,
      signal: new AbortController().signal,
      ...(options.inputResponses ? { inputResponses: options.inputResponses } : {}),
    },
    ...(options.clientId !== undefined
      ? { http: { authInfo: { token: '', clientId: options.clientId, scopes: [] } } }
      : {}),
  } as unknown as ServerContext
}

describe('the task ledger: which child holds whose task', () => {
  it('finds a task only for the credential it was made for', () => {
    const ledger = new TaskLedger(() => 0)
    ledger.remember('token:0', 't1', 'a', 1_000)
    expect(ledger.holderOf('token:0', 't1')).toBe('a')
    expect(ledger.holderOf('token:1', 't1')).toBeUndefined()
    expect(ledger.holderOf('token:0', 't2')).toBeUndefined()
  })

  it('keeps two credentials’ tasks apart when two children mint the same taskId', () => {
    const ledger = new TaskLedger(() => 0)
    ledger.remember('token:0', '1', 'a', 1_000)
    ledger.remember('token:1', '1', 'b', 1_000)
    expect(ledger.holderOf('token:0', '1')).toBe('a')
    expect(ledger.holderOf('token:1', '1')).toBe('b')
  })

  it('forgets a task after its ttlMs from the last time it was remembered', () => {
    let now = 0
    const ledger = new TaskLedger(() => now)
    ledger.remember('p', 't', 'a', 1_000)
    now = 999
    expect(ledger.holderOf('p', 't')).toBe('a')
    ledger.remember('p', 't', 'a', 1_000)
    now = 1_500
    expect(ledger.holderOf('p', 't')).toBe('a')
    now = 1_999
    expect(ledger.holderOf('p', 't')).toBeUndefined()
    expect(ledger.size).toBe(0)
  })

  it('holds at most its maximum: expired entries go first, then the least recently used', () => {
    let now = 0
    const ledger = new TaskLedger(() => now, 3)
    ledger.remember('p', 'short', 'a', 10)
    ledger.remember('p', 'old', 'a', 1_000)
    ledger.remember('p', 'used', 'a', 1_000)
    now = 20
    ledger.remember('p', 'new', 'a', 1_000)
    // 'short' had expired: nothing else had to go.
    expect(['short', 'old', 'used', 'new'].map((t) => ledger.holderOf('p', t))).toEqual([undefined, 'a', 'a', 'a'])
    ledger.remember('p', 'old', 'a', 1_000)
    ledger.remember('p', 'newer', 'a', 1_000)
    // 'used' was the least recently remembered.
    expect(['old', 'used', 'new', 'newer'].map((t) => ledger.holderOf('p', t))).toEqual(['a', undefined, 'a', 'a'])
    expect(ledger.size).toBe(3)
  })

  it('keeps an entry for the task’s ttlMs, a default without one, and never longer than its cap', () => {
    expect(keepFor(5_000)).toBe(5_000)
    expect(keepFor(undefined)).toBe(DEFAULT_TASK_TTL_MS)
    expect(keepFor(null)).toBe(MAX_TASK_TTL_MS)
    expect(keepFor(MAX_TASK_TTL_MS * 10)).toBe(MAX_TASK_TTL_MS)
  })
})

describe('what is a task, and who declared the extension', () => {
  it('reads a flat CreateTaskResult, and nothing else', () => {
    expect(createdTask({ resultType: 'task', taskId: 'x', status: 'working', ttlMs: 300_000 })).toEqual({
      taskId: 'x',
      ttlMs: 300_000,
    })
    expect(createdTask({ resultType: 'task', taskId: 'x', ttlMs: null })).toEqual({ taskId: 'x', ttlMs: null })
    expect(createdTask({ resultType: 'task', taskId: 'x', ttlMs: -1 })).toEqual({ taskId: 'x', ttlMs: undefined })
    expect(createdTask({ resultType: 'complete', taskId: 'x' })).toBeUndefined()
    expect(createdTask({ resultType: 'task', task: { taskId: 'x' } })).toBeUndefined()
    expect(createdTask({ resultType: 'task', taskId: '' })).toBeUndefined()
  })

  it('sees the extension under capabilities.extensions only', () => {
    expect(hasTasksExtension(WITH_TASKS)).toBe(true)
    expect(hasTasksExtension({ extensions: {} })).toBe(false)
    expect(hasTasksExtension({ tasks: {} } as never)).toBe(false)
    expect(hasTasksExtension(undefined)).toBe(false)
  })

  it('remembers a task a child creates for a request that declared the extension, as its credential’s', () => {
    const tasks = new TaskRegistry()
    const none = taskCaller(tasks, ctxOf({ capabilities: {}, clientId: 'token:0' }))
    expect(none.answered).toBeUndefined()
    const caller = taskCaller(tasks, ctxOf({ capabilities: WITH_TASKS, clientId: 'token:0' }))
    const kids = fakeChild('kids')
    caller.answered!(kids, { resultType: 'task', taskId: 'T', ttlMs: 1_000, createdAt: 'then' })
    caller.answered!(kids, { resultType: 'complete', taskId: 'U' })
    expect(tasks.ledger.holderOf('token:0', 'T')).toMatchObject({
      child: kids,
      taskId: 'T',
      made: { createdAt: 'then', ttlMs: 1_000 },
    })
    expect(tasks.ledger.holderOf('token:1', 'T')).toBeUndefined()
    expect(tasks.ledger.holderOf('token:0', 'U')).toBeUndefined()
    // The task runs: its process holds it (a scoped server's instance is busy meanwhile).
    expect(kids.heldTasks.any()).toBe(true)
    // Over stdio there is no credential: the launch's one principal.
    taskCaller(tasks, ctxOf({ capabilities: WITH_TASKS })).answered!(kids, { resultType: 'task', taskId: 'S' })
    expect(tasks.ledger.holderOf('', 'S')?.child).toBe(kids)
  })
})

/** tasks/* handlers registered on a fake server, over a fake runtime whose children record what they are sent. */
function routed(options: { advertised?: boolean; visible?: (server: string) => boolean; answer?: RelayOutcome } = {}) {
  const handlers = new Map<string, (params: Record<string, unknown>, ctx: ServerContext) => Promise<unknown>>()
  const server = {
    getCapabilities: () =>
      options.advertised === false ? { tools: {} } : { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
    setRequestHandler: (
      method: string,
      _schemas: unknown,
      handler: (params: Record<string, unknown>, ctx: ServerContext) => Promise<unknown>,
    ) => handlers.set(method, handler),
  } as unknown as Server
  const sent: Array<{
    server: string
    method: string
    params: Record<string, unknown>
    callerEra: CallerEra | undefined
  }> = []
  const children = new Map(
    ['a', 'b'].map((key) => [
      key,
      fakeChild(key, (method, params, o) => {
        sent.push({ server: key, method, params, callerEra: o.callerEra })
        return Promise.resolve(
          options.answer ?? { ok: true, result: { taskId: params.taskId, status: 'working', ttlMs: 60_000 } },
        )
      }),
    ]),
  )
  const runtime = { supervisor: { children } } as unknown as Runtime
  const view = { serverVisible: options.visible ?? (() => true) } as unknown as PrincipalView
  const tasks = new TaskRegistry()
  registerTaskHandlers(server, runtime, view, tasks)
  const call = (method: string, params: Record<string, unknown>, ctx: ServerContext) => {
    const handler = handlers.get(method)
    if (!handler) throw new Error(`${method} is not registered`)
    return handler(params, ctx).then(
      (result) => ({ result }),
      (error: { code: number; message: string; data?: unknown }) => ({
        error: { code: error.code, message: error.message, data: error.data },
      }),
    )
  }
  /** `owner`'s task `taskId`, made by child `key` (its process running), remembered for `ttlMs`. */
  const remember = (owner: string, taskId: string, key: string, ttlMs: number) => {
    const held = new ChildTask(children.get(key)!, taskId, { createdAt: 'then', ttlMs })
    tasks.ledger.remember(owner, taskId, held, ttlMs)
    return held
  }
  return { handlers, sent, ledger: tasks.ledger, remember, children, call }
}

describe('tasks/get, tasks/update and tasks/cancel, routed', () => {
  it('are registered only where the extension is advertised, and never tasks/list or tasks/result (removed: the SDK answers -32601)', () => {
    expect([...routed().handlers.keys()]).toEqual(['tasks/get', 'tasks/update', 'tasks/cancel'])
    expect(routed({ advertised: false }).handlers.size).toBe(0)
  })

  it('go to the child holding the credential’s task, with the envelope’s capabilities; a tasks/get keeps it for its ttlMs', async () => {
    const r = routed()
    r.remember('token:0', 'T', 'b', 1_000)
    const ctx = ctxOf({ capabilities: WITH_TASKS, clientId: 'token:0' })
    expect(await r.call('tasks/get', { taskId: 'T' }, ctx)).toEqual({
      result: { taskId: 'T', status: 'working', ttlMs: 60_000 },
    })
    expect(r.sent).toEqual([
      {
        server: 'b',
        method: 'tasks/get',
        params: { taskId: 'T' },
        callerEra: { era: 'modern' as const, clientCapabilities: WITH_TASKS },
      },
    ])
    await r.call('tasks/cancel', { taskId: 'T' }, ctx)
    expect(r.sent[1]).toMatchObject({ server: 'b', method: 'tasks/cancel', params: { taskId: 'T' } })
  })

  it('put back the inputResponses the SDK lifted off a tasks/update', async () => {
    const r = routed()
    r.remember('token:0', 'T', 'a', 1_000)
    await r.call(
      'tasks/update',
      { taskId: 'T' },
      ctxOf({ capabilities: WITH_TASKS, clientId: 'token:0', inputResponses: { confirm: { action: 'accept' } } }),
    )
    expect(r.sent[0]!.params).toEqual({ taskId: 'T', inputResponses: { confirm: { action: 'accept' } } })
  })

  it('answer a task never made, another credential’s and one of a server the view no longer reaches the same -32602, sending nothing', async () => {
    const r = routed({ visible: (s) => s !== 'b' })
    r.remember('token:0', 'mine', 'a', 1_000)
    r.remember('token:0', 'hidden', 'b', 1_000)
    const bob = ctxOf({ capabilities: WITH_TASKS, clientId: 'token:1' })
    const alice = ctxOf({ capabilities: WITH_TASKS, clientId: 'token:0' })
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      expect(await r.call(method, { taskId: 'mine' }, bob), method).toEqual({
        error: { code: -32602, message: 'Unknown taskId: mine', data: undefined },
      })
      expect(await r.call(method, { taskId: 'never' }, alice), method).toEqual({
        error: { code: -32602, message: 'Unknown taskId: never', data: undefined },
      })
      expect(await r.call(method, { taskId: 'hidden' }, alice), method).toEqual({
        error: { code: -32602, message: 'Unknown taskId: hidden', data: undefined },
      })
      expect(await r.call(method, { taskId: 7 }, alice), method).toEqual({
        error: { code: -32602, message: 'Unknown taskId: 7', data: undefined },
      })
    }
    expect(r.sent).toEqual([])
  })

  it('answer -32021 naming the extension to a request that did not declare it, before looking the task up', async () => {
    const r = routed()
    r.remember('token:0', 'T', 'a', 1_000)
    for (const capabilities of [undefined, {}, { extensions: {} }]) {
      const answer = await r.call(
        'tasks/get',
        { taskId: 'T' },
        ctxOf({ ...(capabilities ? { capabilities } : {}), clientId: 'token:0' }),
      )
      expect(answer).toMatchObject({
        error: { code: -32021, data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } },
      })
    }
    expect(r.sent).toEqual([])
  })

  it('pass the child’s error back as it is', async () => {
    const r = routed({
      answer: { ok: false, error: { code: -32602, message: 'Unknown taskId: T', data: { why: 'expired' } } },
    })
    r.remember('', 'T', 'a', 1_000)
    expect(await r.call('tasks/get', { taskId: 'T' }, ctxOf({ capabilities: WITH_TASKS }))).toEqual({
      error: { code: -32602, message: 'Unknown taskId: T', data: { why: 'expired' } },
    })
  })
})

describe('a task of a process that is gone, and a task that holds its process', () => {
  const ctx = ctxOf({ capabilities: WITH_TASKS, clientId: 'token:0' })

  it('answers tasks/get as failed, saying why, once the process that made it stopped or was restarted; sends nothing', async () => {
    const r = routed()
    r.remember('token:0', 'T', 'a', 60_000)
    const a = r.children.get('a')! as { state: string; lastError?: string; startedAt?: Date }
    a.state = 'FAILED'
    a.lastError = 'exited with code 3'
    const got = (await r.call('tasks/get', { taskId: 'T' }, ctx)) as { result: Record<string, unknown> }
    const message =
      'Task T failed: the process of server "a" that ran it is gone (it stopped: exited with code 3); call the tool again'
    expect(got.result).toEqual({
      taskId: 'T',
      status: 'failed',
      statusMessage: message,
      createdAt: 'then',
      lastUpdatedAt: expect.any(String),
      ttlMs: 60_000,
      error: { code: -32603, message },
    })
    // Ended: an update and a cancel are acknowledged, as for any ended task.
    expect(await r.call('tasks/update', { taskId: 'T' }, ctx)).toEqual({ result: {} })
    expect(await r.call('tasks/cancel', { taskId: 'T' }, ctx)).toEqual({ result: {} })
    // Running again, but another process: the task is not there either.
    a.state = 'RUNNING'
    a.startedAt = new Date(1)
    const again = (await r.call('tasks/get', { taskId: 'T' }, ctx)) as { result: { statusMessage: string } }
    expect(again.result.statusMessage).toContain('(it was restarted)')
    expect(r.sent).toEqual([])
    // Another credential still gets an unknown task.
    expect(
      await r.call('tasks/get', { taskId: 'T' }, ctxOf({ capabilities: WITH_TASKS, clientId: 'token:1' })),
    ).toEqual({ error: { code: -32602, message: 'Unknown taskId: T', data: undefined } })
  })

  it('holds its process while it runs, and lets it go once a tasks/get says it ended, or it is cancelled', async () => {
    const answers: Record<string, unknown>[] = [{ status: 'working' }, { status: 'completed' }]
    const r = routed()
    const b = r.children.get('b')!
    ;(b as { forward: Forward }).forward = (_m, params) =>
      Promise.resolve({ ok: true, result: { taskId: params.taskId, ttlMs: 60_000, ...answers.shift() } })
    const held = r.remember('token:0', 'T', 'b', 60_000)
    held.hold(60_000)
    await r.call('tasks/get', { taskId: 'T' }, ctx)
    expect(b.heldTasks.any()).toBe(true)
    await r.call('tasks/get', { taskId: 'T' }, ctx)
    expect(b.heldTasks.any()).toBe(false)
    r.remember('token:0', 'U', 'b', 60_000).hold(60_000)
    await r.call('tasks/cancel', { taskId: 'U' }, ctx)
    expect(b.heldTasks.any()).toBe(false)
  })
})

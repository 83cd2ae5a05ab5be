import type { Server, ServerContext } from '@modelcontextprotocol/server'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { ChildConnection } from '../../../src/children/child.js'
import type { PrincipalView } from '../../../src/principal/view.js'
import type { RelayOutcome } from '../../../src/protocol/request-relay.js'
import type { ConnectionHandle, Runtime } from '../../../src/runtime/runtime.js'
import {
  HOSTED_POLL_INTERVAL_MS,
  HostedTasks,
  needsTaskOptIn,
  startAsTask,
  taskHosting,
} from '../../../src/eras/modern/hosted-tasks.js'
import type { ParkedCall } from '../../../src/eras/modern/parked-calls.js'
import { ParkedCalls } from '../../../src/eras/modern/parked-registry.js'
import { registerTaskHandlers, TASKS_EXTENSION } from '../../../src/eras/modern/task-routing.js'
import { TaskRegistry } from '../../../src/eras/modern/task-registry.js'
import { quietWindow, waitFor } from '../../helpers/wait-for.js'

/** Each fake runtime's task registry, as serve-stdio or serve --http would make one for it. */
const registries = new WeakMap<Runtime, TaskRegistry>()
const registryOf = (runtime: Runtime) =>
  registries.get(runtime) ?? registries.set(runtime, new TaskRegistry()).get(runtime)!

function fakeRuntime(): Runtime {
  const joined = new Set<ConnectionHandle>()
  return {
    addConnection: (c: ConnectionHandle) => joined.add(c),
    removeConnection: (c: ConnectionHandle) => joined.delete(c),
  } as unknown as Runtime
}

const view = {
  serverVisible: (s: string) => s !== 'hidden',
  toolVisible: (e: { name: string }) => e.name !== 'secret',
} as unknown as PrincipalView
const WITH_TASKS = { extensions: { [TASKS_EXTENSION]: {} } }

function ctxOf(
  options: { clientId?: string; capabilities?: Record<string, unknown>; inputResponses?: Record<string, unknown> } = {},
): ServerContext {
  return {
    mcpReq: {
      method: 'tools/call',
      signal: new AbortController().signal,
      envelope: options.capabilities
        ? { 'io.modelcontextprotocol/clientCapabilities': options.capabilities }
        : undefined,
      inputResponses: options.inputResponses,
    },
    http:
      options.clientId === undefined ? undefined : { authInfo: { clientId: options.clientId, token: '', scopes: [] } },
  } as unknown as ServerContext
}

const elicitParams = {
  message: 'Delete?',
  requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
}
const text = (t: string): RelayOutcome => ({ ok: true, result: { content: [{ type: 'text', text: t }] } })

/** A call of a 2025 child running through a ParkedCall, as stateless-server.ts starts it; `script` asks as the child's requests would. */
function running(
  script: (
    ask: (params: Record<string, unknown>) => Promise<Record<string, unknown>>,
    signal: AbortSignal,
  ) => Promise<RelayOutcome | undefined>,
): ParkedCall {
  const call = new ParkedCalls(fakeRuntime()).open(
    view,
    { method: 'tools/call', name: 'kid__job' },
    ctxOf({ clientId: 'alice' }),
  )
  call.clientCapabilities = { elicitation: {} }
  call.start((origin) =>
    script(
      (params) =>
        call.forwardRequest('kid', 'elicitation/create', params, new AbortController().signal, origin.requestId),
      call.cancellation.signal,
    ),
  )
  return call
}

/** A call that ends when released (or, as a child does on notifications/cancelled, when cancelled: undefined). */
function releasable(): { call: ParkedCall; release: (outcome: RelayOutcome) => void; cancelled: () => boolean } {
  let release!: (outcome: RelayOutcome) => void
  let cancelled = false
  const call = running(
    (_ask, signal) =>
      new Promise<RelayOutcome | undefined>((resolve) => {
        release = resolve
        signal.addEventListener('abort', () => ((cancelled = true), resolve(undefined)))
      }),
  )
  return { call, release: (o) => release(o), cancelled: () => cancelled }
}

afterEach(() => vi.useRealTimers())

describe('HostedTask: a 2025 child’s call held as a task (SEP-2663 shapes)', () => {
  it('says the child’s latest progress as its statusMessage while it works: the message, else how far it got; moving lastUpdatedAt', async () => {
    const tasks = new HostedTasks()
    const { call, release } = releasable()
    const task = tasks.create('alice', 'kid', call)!
    const created = task.created()
    expect(created).not.toHaveProperty('statusMessage')
    expect(created.lastUpdatedAt).toBe(created.createdAt)
    await quietWindow(5) // the clock moves on, so lastUpdatedAt can differ from createdAt
    call.progress({ progress: 3, total: 10 })
    expect(task.detailed()).toMatchObject({ status: 'working', statusMessage: '3/10' })
    call.progress({ progress: 4 })
    expect(task.detailed().statusMessage).toBe('4')
    call.progress({ progress: 5, total: 10, message: 'indexing' })
    const working = task.detailed()
    expect(working.statusMessage).toBe('indexing')
    expect(working.lastUpdatedAt).not.toBe(created.lastUpdatedAt)
    release(text('done'))
    await waitFor(() => task.detailed().status === 'completed', 5_000, 'the task to complete')
    expect(task.detailed()).toMatchObject({ status: 'completed' })
    expect(task.detailed()).not.toHaveProperty('statusMessage')
  })

  it('is created flat (resultType "task", taskId, status, times, ttlMs, pollIntervalMs) and polled to completion with the result inline', async () => {
    const tasks = new HostedTasks()
    const { call, release } = releasable()
    const task = tasks.create('alice', 'kid', call)!
    const created = task.created()
    expect(created).toEqual({
      resultType: 'task',
      taskId: task.taskId,
      status: 'working',
      createdAt: expect.any(String),
      lastUpdatedAt: expect.any(String),
      ttlMs: 3_600_000,
      pollIntervalMs: HOSTED_POLL_INTERVAL_MS,
    })
    expect(Number.isInteger(created.ttlMs) && Number.isInteger(created.pollIntervalMs)).toBe(true)
    expect(new Date(created.createdAt as string).toISOString()).toBe(created.createdAt)
    expect(task.detailed()).not.toHaveProperty('result')
    await quietWindow(5) // the clock moves on before the task ends
    release({
      ok: true,
      result: {
        content: [{ type: 'text', text: 'done' }],
        _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'x' }, keep: 1 },
      },
    })
    await waitFor(() => task.detailed().status === 'completed', 5_000, 'the task to complete')
    const done = task.detailed()
    expect(done).toMatchObject({
      taskId: task.taskId,
      status: 'completed',
      result: { content: [{ type: 'text', text: 'done' }], _meta: { keep: 1 } },
    })
    expect((done.result as { _meta: Record<string, unknown> })._meta).not.toHaveProperty(
      'io.modelcontextprotocol/related-task',
    )
    expect(String(done.lastUpdatedAt) >= String(done.createdAt)).toBe(true)
    expect(done).not.toHaveProperty('error')
  })

  it('keeps a tool error completed (isError), and a protocol error failed with the error inline and no result', async () => {
    const tasks = new HostedTasks()
    const toolError = releasable()
    const protocolError = releasable()
    const a = tasks.create('alice', 'kid', toolError.call)!
    const b = tasks.create('alice', 'kid', protocolError.call)!
    toolError.release({ ok: true, result: { content: [{ type: 'text', text: 'nope' }], isError: true } })
    protocolError.release({ ok: false, error: { code: -32603, message: 'boom', data: { why: 1 } } })
    await waitFor(
      () => a.detailed().status === 'completed' && b.detailed().status === 'failed',
      5_000,
      'both tasks to end',
    )
    expect(a.detailed()).toMatchObject({ status: 'completed', result: { isError: true } })
    const failed = b.detailed()
    expect(failed).toMatchObject({ status: 'failed', error: { code: -32603, message: 'boom', data: { why: 1 } } })
    expect(failed).not.toHaveProperty('result')
  })

  it('is input_required with the child’s questions, tasks/update answers them (partly, then all), and it resumes to completion', async () => {
    const tasks = new HostedTasks()
    const call = running(async (ask) => {
      const [first, second] = await Promise.all([ask(elicitParams), ask({ ...elicitParams, message: 'Really?' })])
      return text(`${String(first.action)}/${String(second.action)}`)
    })
    const task = tasks.create('alice', 'kid', call)!
    await waitFor(() => task.detailed().status === 'input_required', 5_000, 'the child’s questions')
    const asked = task.detailed()
    expect(asked).toMatchObject({
      status: 'input_required',
      inputRequests: {
        elicitation_1: { method: 'elicitation/create', params: elicitParams },
        elicitation_2: { method: 'elicitation/create' },
      },
    })
    const before = asked.lastUpdatedAt as string
    // Unknown keys are ignored; a wrong shape is -32602 and answers nothing.
    task.update({ nothing: { action: 'accept' } })
    expect(() => task.update({ elicitation_1: { action: 'maybe' } })).toThrow(/elicitation_1/)
    task.update({ elicitation_1: { action: 'accept', content: { confirm: true } } })
    await waitFor(
      () => Object.keys(task.detailed().inputRequests ?? {}).join() === 'elicitation_2',
      5_000,
      'the first answer to be taken',
    )
    const partly = task.detailed()
    expect(partly.status).toBe('input_required')
    expect(Object.keys(partly.inputRequests as object)).toEqual(['elicitation_2'])
    expect(String(partly.lastUpdatedAt) >= before).toBe(true)
    task.update({ elicitation_2: { action: 'decline' } })
    await waitFor(() => task.detailed().status === 'completed', 5_000, 'the task to complete')
    expect(task.detailed()).toMatchObject({ status: 'completed', result: { content: [{ text: 'accept/decline' }] } })
    // Once ended, an update is a no-op.
    task.update({ elicitation_1: { action: 'maybe' } })
  })

  it('tasks/cancel cancels the child’s call and settles cancelled; again, or on an ended task, it changes nothing', async () => {
    const tasks = new HostedTasks()
    const running1 = releasable()
    const task = tasks.create('alice', 'kid', running1.call)!
    task.cancel()
    expect(running1.cancelled()).toBe(true)
    expect(task.detailed()).toMatchObject({ status: 'cancelled' })
    task.cancel()
    await quietWindow(5) // a second cancel must change nothing
    expect(task.detailed()).toMatchObject({ status: 'cancelled' })
    expect(task.detailed()).not.toHaveProperty('result')

    const finished = releasable()
    const done = tasks.create('alice', 'kid', finished.call)!
    finished.release(text('ok'))
    await waitFor(() => done.detailed().status === 'completed', 5_000, 'the task to complete')
    done.cancel()
    expect(finished.cancelled()).toBe(false)
    expect(done.detailed()).toMatchObject({ status: 'completed' })
  })
})

describe('HostedTasks: whose, how long, how many', () => {
  it('finds a task for its credential only', () => {
    const tasks = new HostedTasks()
    const task = tasks.create('alice', 'kid', releasable().call)!
    expect(tasks.find('alice', task.taskId)).toBe(task)
    expect(tasks.find('bob', task.taskId)).toBeUndefined()
    expect(tasks.find('alice', 'never')).toBeUndefined()
  })

  it('forgets a task after its ttl, cancelling its call when it still runs', async () => {
    vi.useFakeTimers()
    const tasks = new HostedTasks(10, 1_000)
    const { call, cancelled } = releasable()
    const task = tasks.create('alice', 'kid', call)!
    expect(task.created().ttlMs).toBe(1_000)
    await vi.advanceTimersByTimeAsync(999)
    expect(tasks.find('alice', task.taskId)).toBe(task)
    await vi.advanceTimersByTimeAsync(1)
    expect(tasks.find('alice', task.taskId)).toBeUndefined()
    expect(cancelled()).toBe(true)
  })

  it('holds at most its bound: the oldest ended task goes first; with none ended, no new task', async () => {
    const tasks = new HostedTasks(2)
    const a = releasable()
    const b = releasable()
    const first = tasks.create('alice', 'kid', a.call)!
    const second = tasks.create('alice', 'kid', b.call)!
    expect(tasks.create('alice', 'kid', releasable().call)).toBeUndefined()
    expect(tasks.size).toBe(2)
    b.release(text('b'))
    await waitFor(() => tasks.find('alice', second.taskId)?.terminal === true, 5_000, 'the second task to end')
    const third = tasks.create('alice', 'kid', releasable().call)!
    expect(third).toBeDefined()
    expect(tasks.find('alice', second.taskId)).toBeUndefined()
    expect(tasks.find('alice', first.taskId)).toBe(first)
    tasks.close()
    expect(a.cancelled()).toBe(true)
    expect(tasks.size).toBe(0)
  })
})

describe('taskHosting / needsTaskOptIn: which calls myc holds tasks for, and how', () => {
  const CORE_TASKS = { tasks: { requests: { tools: { call: {} } } } }
  const tools: Record<string, { server: string; name: string; def: Record<string, unknown> }> = {
    old__job: { server: 'old', name: 'job', def: {} },
    new__job: { server: 'new', name: 'job', def: {} },
    old__secret: { server: 'old', name: 'secret', def: {} },
    core__research: { server: 'core', name: 'research', def: { execution: { taskSupport: 'required' } } },
    core__maybe: { server: 'core', name: 'maybe', def: { execution: { taskSupport: 'optional' } } },
    core__plain: { server: 'core', name: 'plain', def: {} },
    // taskSupport without the capability means nothing: myc holds the task.
    old__claims: { server: 'old', name: 'claims', def: { execution: { taskSupport: 'required' } } },
  }
  const runtime = {
    catalogue: { toolByWire: (name: string) => tools[name] },
    supervisor: {
      children: new Map([
        ['old', { era: 'legacy' }],
        ['new', { era: 'modern', capabilities: CORE_TASKS }],
        ['core', { era: 'legacy', capabilities: CORE_TASKS }],
      ]),
    },
  } as unknown as Runtime
  const target = (name: string) => ({ method: 'tools/call', name })
  const declared = ctxOf({ capabilities: WITH_TASKS })

  it('a tools/call declaring the extension, to a visible tool of a 2025-era child: the child’s own task when it has core tasks for the tool, else myc’s', () => {
    expect(taskHosting(runtime, view, declared, target('old__job'))).toEqual({ server: 'old', core: false })
    expect(taskHosting(runtime, view, declared, target('old__claims'))).toEqual({ server: 'old', core: false })
    expect(taskHosting(runtime, view, declared, target('core__research'))).toEqual({ server: 'core', core: true })
    expect(taskHosting(runtime, view, declared, target('core__maybe'))).toEqual({ server: 'core', core: true })
    expect(taskHosting(runtime, view, declared, target('core__plain'))).toEqual({ server: 'core', core: false })
  })

  it('not without the extension, not for a modern child (its own tasks), a hidden or unknown tool, or another method', () => {
    expect(taskHosting(runtime, view, ctxOf({ capabilities: {} }), target('old__job'))).toBeUndefined()
    expect(taskHosting(runtime, view, ctxOf(), target('old__job'))).toBeUndefined()
    expect(taskHosting(runtime, view, declared, target('new__job'))).toBeUndefined()
    expect(taskHosting(runtime, view, declared, target('old__secret'))).toBeUndefined()
    expect(taskHosting(runtime, view, declared, target('nothing'))).toBeUndefined()
    expect(taskHosting(runtime, view, declared, { method: 'prompts/get', name: 'old__job' })).toBeUndefined()
  })

  it('a 2025 tool that runs only as a task needs the opt-in (-32021); others do not', () => {
    expect(needsTaskOptIn(runtime, view, ctxOf({ capabilities: {} }), target('core__research'))).toBe(true)
    expect(needsTaskOptIn(runtime, view, ctxOf(), target('core__research'))).toBe(true)
    expect(needsTaskOptIn(runtime, view, declared, target('core__research'))).toBe(false)
    expect(needsTaskOptIn(runtime, view, ctxOf({ capabilities: {} }), target('core__maybe'))).toBe(false)
    expect(needsTaskOptIn(runtime, view, ctxOf({ capabilities: {} }), target('old__claims'))).toBe(false)
  })
})

describe('startAsTask: a task opt-in’s call becomes a task', () => {
  const sinkOf = () => ({ log: () => {}, progress: () => {} })
  const open = (calls: ParkedCalls) => (t: { method: string; name: string }) =>
    calls.open(view, t, ctxOf({ clientId: 'alice' }))

  it('held by myc: answered as it is when it ends at once, else a task running the call', async () => {
    const runtime = { supervisor: { children: new Map() } } as unknown as Runtime
    const calls = new ParkedCalls(fakeRuntime())
    const quick = running(async () => text('quick'))
    expect(
      await startAsTask(
        registryOf(runtime).hosted,
        { server: 'kid', core: false },
        quick,
        ctxOf({ clientId: 'alice' }),
        sinkOf(),
        open(calls),
      ),
    ).toBeUndefined()
    const slow = releasable()
    const created = await startAsTask(
      registryOf(runtime).hosted,
      { server: 'kid', core: false },
      slow.call,
      ctxOf({ clientId: 'alice' }),
      sinkOf(),
      open(calls),
    )
    expect(created).toMatchObject({ resultType: 'task', status: 'working' })
    expect(registryOf(runtime).hosted.find('alice', created!.taskId as string)?.call).toBe(slow.call)
  }, 5_000)

  it('a child’s 2025 core task: its { task } answer becomes a task whose call is the child’s tasks/result; cancelling sends tasks/cancel', async () => {
    const sent: Array<{ method: string; params: unknown; timeoutMs?: number }> = []
    let finish!: (outcome: RelayOutcome) => void
    const child = {
      key: 'core',
      forward: (method: string, params: unknown, o: { timeoutMs?: number; cancellation?: { signal: AbortSignal } }) => {
        sent.push({ method, params, timeoutMs: o.timeoutMs })
        if (method === 'tasks/result')
          return new Promise<RelayOutcome>(
            (resolve) => (
              (finish = resolve),
              o.cancellation?.signal.addEventListener('abort', () =>
                resolve({ ok: false, error: { code: -32800, message: 'cancelled' } }),
              )
            ),
          )
        return Promise.resolve<RelayOutcome>({ ok: true, result: {} })
      },
    }
    // The server's own process never hears of it: the task lives in the connection that answered the call (a scoped server's instance).
    const own = { key: 'core', forward: () => Promise.reject(new Error('sent to the server’s own process')) }
    const runtime = { supervisor: { children: new Map([['core', own]]) } } as unknown as Runtime
    const calls = new ParkedCalls(fakeRuntime())
    const answered = (call: ParkedCall) => Object.assign(call, { answeredBy: child as unknown as ChildConnection })
    const coreTask = {
      task: {
        taskId: 'child-1',
        status: 'working',
        ttl: 300_000,
        pollInterval: 1_000,
        createdAt: '2026-01-01T00:00:00.000Z',
      },
    }
    const toolCall = answered(running(async () => ({ ok: true, result: coreTask })))
    const created = (await startAsTask(
      registryOf(runtime).hosted,
      { server: 'core', core: true },
      toolCall,
      ctxOf({ clientId: 'alice' }),
      sinkOf(),
      open(calls),
    ))!
    expect(created).toEqual({
      resultType: 'task',
      taskId: expect.any(String),
      status: 'working',
      createdAt: expect.any(String),
      lastUpdatedAt: expect.any(String),
      ttlMs: 300_000,
      pollIntervalMs: 1_000,
    })
    expect(created).not.toHaveProperty('task')
    expect(sent).toEqual([{ method: 'tasks/result', params: { taskId: 'child-1' }, timeoutMs: 300_000 }])
    const task = registryOf(runtime).hosted.find('alice', created.taskId as string)!
    finish({
      ok: true,
      result: {
        content: [{ type: 'text', text: 'report' }],
        _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'child-1' } },
      },
    })
    await waitFor(() => task.detailed().status === 'completed', 5_000, 'the child’s task to complete')
    expect(task.detailed()).toEqual({
      ...created,
      resultType: undefined,
      status: 'completed',
      lastUpdatedAt: expect.any(String),
      result: { content: [{ type: 'text', text: 'report' }] },
    })

    const second = (await startAsTask(
      registryOf(runtime).hosted,
      { server: 'core', core: true },
      answered(running(async () => ({ ok: true, result: { task: { taskId: 'child-2', status: 'working' } } }))),
      ctxOf({ clientId: 'alice' }),
      sinkOf(),
      open(calls),
    ))!
    expect(second.ttlMs).toBe(3_600_000)
    registryOf(runtime)
      .hosted.find('alice', second.taskId as string)!
      .cancel()
    expect(sent.slice(2)).toEqual([{ method: 'tasks/cancel', params: { taskId: 'child-2' }, timeoutMs: 10_000 }])
    await waitFor(
      () =>
        registryOf(runtime)
          .hosted.find('alice', second.taskId as string)!
          .detailed().status === 'cancelled',
      5_000,
      'the task to be cancelled',
    )
    expect(
      registryOf(runtime)
        .hosted.find('alice', second.taskId as string)!
        .detailed(),
    ).toMatchObject({ status: 'cancelled' })

    // A child answering something else (an error, a plain result) is answered as it is.
    expect(
      await startAsTask(
        registryOf(runtime).hosted,
        { server: 'core', core: true },
        running(async () => ({ ok: false, error: { code: -32602, message: 'bad' } })),
        ctxOf({ clientId: 'alice' }),
        sinkOf(),
        open(calls),
      ),
    ).toBeUndefined()
    expect(
      await startAsTask(
        registryOf(runtime).hosted,
        { server: 'core', core: true },
        running(async () => text('plain')),
        ctxOf({ clientId: 'alice' }),
        sinkOf(),
        open(calls),
      ),
    ).toBeUndefined()
  }, 5_000)
})

describe('tasks/get, tasks/update, tasks/cancel for a task myc holds', () => {
  function handlers(runtime: Runtime, visible: (s: string) => boolean = () => true) {
    const registered = new Map<string, (params: Record<string, unknown>, ctx: ServerContext) => Promise<unknown>>()
    const server = {
      getCapabilities: () => ({ tools: {}, extensions: { [TASKS_EXTENSION]: {} } }),
      setRequestHandler: (
        method: string,
        _s: unknown,
        handler: (params: Record<string, unknown>, ctx: ServerContext) => Promise<unknown>,
      ) => registered.set(method, handler),
    } as unknown as Server
    registerTaskHandlers(server, runtime, { serverVisible: visible } as unknown as PrincipalView, registryOf(runtime))
    return (method: string, params: Record<string, unknown>, ctx: ServerContext) =>
      registered.get(method)!(params, ctx).then(
        (result) => ({ result }),
        (error: { code: number; message: string }) => ({ error: { code: error.code, message: error.message } }),
      )
  }

  it('answers the owner from the task, with empty acks for update and cancel; another credential, or a view no longer reaching the child, gets -32602 as for an unknown task', async () => {
    const runtime = { supervisor: { children: new Map() } } as unknown as Runtime
    const call = running(async (ask) => text(String((await ask(elicitParams)).action)))
    const task = registryOf(runtime).hosted.create('token:0', 'kid', call)!
    const rpc = handlers(runtime)
    const alice = (inputResponses?: Record<string, unknown>) =>
      ctxOf({ clientId: 'token:0', capabilities: WITH_TASKS, ...(inputResponses ? { inputResponses } : {}) })
    const bob = ctxOf({ clientId: 'token:1', capabilities: WITH_TASKS })
    await waitFor(() => task.detailed().status === 'input_required', 5_000, 'the child’s question')
    expect(await rpc('tasks/get', { taskId: task.taskId }, alice())).toMatchObject({
      result: {
        taskId: task.taskId,
        status: 'input_required',
        inputRequests: { elicitation_1: { method: 'elicitation/create' } },
      },
    })
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      expect(await rpc(method, { taskId: task.taskId }, bob), method).toEqual({
        error: { code: -32602, message: `Unknown taskId: ${task.taskId}` },
      })
      expect(await handlers(runtime, (s) => s !== 'kid')(method, { taskId: task.taskId }, alice()), method).toEqual({
        error: { code: -32602, message: `Unknown taskId: ${task.taskId}` },
      })
    }
    // The SDK lifts inputResponses off the params: they are read from the request context.
    expect(
      await rpc('tasks/update', { taskId: task.taskId }, alice({ elicitation_1: { action: 'accept', content: {} } })),
    ).toEqual({ result: {} })
    await waitFor(() => task.detailed().status === 'completed', 5_000, 'the task to complete')
    expect(await rpc('tasks/get', { taskId: task.taskId }, alice())).toMatchObject({
      result: { status: 'completed', result: { content: [{ text: 'accept' }] } },
    })
    expect(await rpc('tasks/cancel', { taskId: task.taskId }, alice())).toEqual({ result: {} })
    // A wrong shape is -32602 naming the key.
    const other = registryOf(runtime).hosted.create(
      'token:0',
      'kid',
      running(async (ask) => text(String((await ask(elicitParams)).action))),
    )!
    await waitFor(() => other.detailed().status === 'input_required', 5_000, 'the child’s question')
    expect(await rpc('tasks/update', { taskId: other.taskId }, alice({ elicitation_1: 'yes' }))).toMatchObject({
      error: { code: -32602 },
    })
    expect(await rpc('tasks/cancel', { taskId: other.taskId }, alice())).toEqual({ result: {} })
    expect((await rpc('tasks/get', { taskId: other.taskId }, alice())) as unknown).toMatchObject({
      result: { status: 'cancelled' },
    })
  })
})

import { describe, expect, it } from 'vitest'
import { CoreTasksOverExtension, type TaskChild } from '../../../src/eras/legacy/core-tasks.js'
import { Cancellation } from '../../../src/protocol/cancellation.js'
import type { RelayOutcome } from '../../../src/protocol/request-relay.js'
import type { InputSource } from '../../../src/children/child-session.js'

const TASKS = 'io.modelcontextprotocol/tasks'

/** A modern child holding tasks, answering tasks/get from a script of DetailedTasks (the last repeats). */
function fakeChild(script: Record<string, Array<Record<string, unknown>>>) {
  const sent: Array<{ method: string; params: Record<string, unknown>; caps: unknown }> = []
  const child: TaskChild = {
    key: 'kid',
    config: { timeoutMs: 1_000 },
    forward: async (method, params, options) => {
      sent.push({ method, params: params!, caps: options.callerEra?.clientCapabilities })
      const taskId = String(params?.taskId)
      const steps = script[taskId]
      if (!steps) return { ok: false, error: { code: -32602, message: `Unknown taskId: ${taskId}` } }
      if (method === 'tasks/get') return { ok: true, result: steps.length > 1 ? steps.shift()! : steps[0]! }
      return { ok: true, result: {} }
    },
  }
  return { child, sent }
}

const task = (status: string, extra: Record<string, unknown> = {}) => ({
  taskId: 't',
  status,
  createdAt: 'c',
  lastUpdatedAt: 'u',
  ttlMs: 60_000,
  pollIntervalMs: 1,
  ...extra,
})
const ctx = () => ({
  requestId: 1,
  cancellation: new Cancellation(),
  callerEra: { era: 'legacy' as const, clientCapabilities: { elicitation: {} } },
})

describe('CoreTasksOverExtension: 2025 tasks/* over a modern child’s tasks extension', () => {
  it('tasks/get: the child’s tasks/get (declaring the extension) as the 2025 Task', async () => {
    const { child, sent } = fakeChild({ t: [task('working')] })
    const out = await new CoreTasksOverExtension(10_000).route('tasks/get', child, 't', ctx(), undefined)
    expect(out).toEqual({
      ok: true,
      result: { taskId: 't', status: 'working', ttl: 60_000, createdAt: 'c', lastUpdatedAt: 'u', pollInterval: 1 },
    })
    expect(sent[0]!.caps).toEqual({ elicitation: {}, extensions: { [TASKS]: {} } })
  })

  it('tasks/result: polls until terminal and answers the inline result, or the inline error', async () => {
    const { child, sent } = fakeChild({
      t: [task('working'), task('working'), task('completed', { result: { content: [] } })],
    })
    const out = await new CoreTasksOverExtension(10_000).route('tasks/result', child, 't', ctx(), undefined)
    expect(out).toMatchObject({
      ok: true,
      result: { content: [], _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } },
    })
    expect(sent.filter((s) => s.method === 'tasks/get')).toHaveLength(3)
    const failing = fakeChild({ t: [task('failed', { error: { code: -32000, message: 'nope' } })] })
    expect(
      await new CoreTasksOverExtension(10_000).route('tasks/result', failing.child, 't', ctx(), undefined),
    ).toEqual({ ok: false, error: { code: -32000, message: 'nope' } })
  })

  it('tasks/result: gives up after the timeout, and answers nothing once cancelled', async () => {
    const { child } = fakeChild({ t: [task('working')] })
    const out = (await new CoreTasksOverExtension(0).route(
      'tasks/result',
      { ...child, config: { timeoutMs: 30 } },
      't',
      ctx(),
      undefined,
    )) as RelayOutcome
    expect(out.ok).toBe(false)
    expect(!out.ok && out.error.message).toMatch(/did not finish within 30 ms/)
    const c = ctx()
    setTimeout(() => c.cancellation.cancel('stop'), 20)
    expect(await new CoreTasksOverExtension(60_000).route('tasks/result', child, 't', c, undefined)).toBeUndefined()
  })

  it('tasks/result: input_required asks the client (marked with the task) and answers with tasks/update', async () => {
    const ask = {
      method: 'elicitation/create',
      params: { message: 'Sure?', requestedSchema: { type: 'object', properties: {} } },
    }
    const { child, sent } = fakeChild({
      t: [
        task('input_required', { inputRequests: { confirm: ask } }),
        task('completed', { result: { content: [{ type: 'text', text: 'ok' }] } }),
      ],
    })
    const asked: Array<{ method: string; params: Record<string, unknown> }> = []
    const source: InputSource = {
      capabilities: { elicitation: {} },
      ask: async (method, params) => (asked.push({ method, params }), { action: 'accept', content: { ok: true } }),
    }
    const out = await new CoreTasksOverExtension(10_000).route('tasks/result', child, 't', ctx(), source)
    expect(out).toMatchObject({ ok: true, result: { content: [{ text: 'ok' }] } })
    expect(asked).toEqual([
      {
        method: 'elicitation/create',
        params: { ...ask.params, _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } },
      },
    ])
    expect(sent.find((s) => s.method === 'tasks/update')!.params).toEqual({
      taskId: 't',
      inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
    })
    // A client that cannot be asked: a clear error, not a wait.
    const again = fakeChild({ t: [task('input_required', { inputRequests: { confirm: ask } })] })
    const refused = (await new CoreTasksOverExtension(10_000).route('tasks/result', again.child, 't', ctx(), {
      capabilities: {},
      ask: async () => ({}),
    })) as RelayOutcome
    expect(!refused.ok && refused.error.message).toMatch(/did not declare the elicitation capability/)
  })

  it('tasks/cancel: the child’s tasks/cancel, answered with the cancelled Task; a terminal task is -32602', async () => {
    const { child, sent } = fakeChild({ t: [task('working'), task('cancelled')] })
    expect(await new CoreTasksOverExtension(10_000).route('tasks/cancel', child, 't', ctx(), undefined)).toMatchObject({
      ok: true,
      result: { taskId: 't', status: 'cancelled' },
    })
    expect(sent.map((s) => s.method)).toEqual(['tasks/get', 'tasks/cancel', 'tasks/get'])
    const done = fakeChild({ t: [task('completed', { result: {} })] })
    expect(
      await new CoreTasksOverExtension(10_000).route('tasks/cancel', done.child, 't', ctx(), undefined),
    ).toMatchObject({ ok: false, error: { code: -32602 } })
    expect(done.sent.map((s) => s.method)).toEqual(['tasks/get'])
  })

  it('list: each task as the child tells it, a task the child forgot left out, the last known one when the child fails', async () => {
    const { child } = fakeChild({ t: [task('working')] })
    const broken: TaskChild = {
      ...child,
      forward: async () => ({ ok: false, error: { code: -32000, message: 'down' } }),
    }
    const tasks = new CoreTasksOverExtension(10_000)
    tasks.remember({ taskId: 'k', status: 'working', ttl: null, createdAt: 'c', lastUpdatedAt: 'c' })
    const listed = await tasks.list(
      [
        ['t', child],
        ['gone', child],
        ['k', broken],
      ],
      ctx(),
    )
    expect(listed.map((t) => [t.taskId, t.status])).toEqual([
      ['t', 'working'],
      ['k', 'working'],
    ])
  })
})

import { describe, expect, it } from 'vitest'
import {
  coreCreateTaskResult,
  coreStatus,
  coreTask,
  coreTaskResult,
  isTaskAugmented,
  isTerminalStatus,
  RELATED_TASK_META_KEY,
  withoutTaskAugmentation,
  withRelatedTask,
  withTasksExtension,
} from '../../../src/eras/modern/task-mapping.js'

const TASKS = 'io.modelcontextprotocol/tasks'
const created = {
  resultType: 'task',
  taskId: 't1',
  status: 'working',
  createdAt: '2026-01-01T00:00:00Z',
  lastUpdatedAt: '2026-01-01T00:00:01Z',
  ttlMs: 300_000,
  pollIntervalMs: 200,
}

describe('task-mapping: 2026 tasks extension shapes as 2025-11-25 core tasks', () => {
  it('maps a CreateTaskResult to the 2025 shape: fields under task, ttlMs → ttl, pollIntervalMs → pollInterval', () => {
    expect(coreCreateTaskResult({ ...created, _meta: { k: 1 } })).toEqual({
      _meta: { k: 1 },
      task: {
        taskId: 't1',
        status: 'working',
        ttl: 300_000,
        createdAt: '2026-01-01T00:00:00Z',
        lastUpdatedAt: '2026-01-01T00:00:01Z',
        pollInterval: 200,
      },
    })
    expect(coreCreateTaskResult({ content: [] })).toBeUndefined()
    expect(coreCreateTaskResult({ resultType: 'task' })).toBeUndefined()
  })

  it('gives a missing or null ttlMs as null (unlimited), lastUpdatedAt defaulting to createdAt, and keeps a statusMessage', () => {
    expect(coreTask({ taskId: 'a', status: 'completed', createdAt: 'c', ttlMs: null, statusMessage: 'done' })).toEqual({
      taskId: 'a',
      status: 'completed',
      ttl: null,
      createdAt: 'c',
      lastUpdatedAt: 'c',
      statusMessage: 'done',
    })
    expect(coreTask({ taskId: 'a', status: 'working', createdAt: 'c' })!.ttl).toBeNull()
    expect(coreTask({ status: 'working' })).toBeUndefined()
  })

  it('maps the five statuses as they are and anything else to working', () => {
    for (const s of ['working', 'input_required', 'completed', 'failed', 'cancelled']) expect(coreStatus(s)).toBe(s)
    expect(coreStatus('paused')).toBe('working')
    expect(coreStatus(undefined)).toBe('working')
    expect(['completed', 'failed', 'cancelled'].every((s) => isTerminalStatus(coreStatus(s)))).toBe(true)
    expect(isTerminalStatus('input_required')).toBe(false)
  })

  it('opts in: the task member comes off the params, the extension joins the declared capabilities', () => {
    expect(isTaskAugmented({ name: 'x', task: { ttl: 1000 } })).toBe(true)
    expect(isTaskAugmented({ name: 'x', task: 5 })).toBe(false)
    expect(isTaskAugmented(undefined)).toBe(false)
    expect(withoutTaskAugmentation({ name: 'x', arguments: {}, task: { ttl: 1 } })).toEqual({
      name: 'x',
      arguments: {},
    })
    expect(withTasksExtension({ elicitation: {}, extensions: { other: { a: 1 } } } as never)).toEqual({
      elicitation: {},
      extensions: { other: { a: 1 }, [TASKS]: {} },
    })
    expect(withTasksExtension(undefined)).toEqual({ extensions: { [TASKS]: {} } })
  })

  it('answers tasks/result only once terminal: the inline result with the related task, the inline error, or cancelled', () => {
    const base = { taskId: 't1', createdAt: 'c' }
    expect(coreTaskResult({ ...base, status: 'working' })).toBeUndefined()
    expect(coreTaskResult({ ...base, status: 'input_required', inputRequests: {} })).toBeUndefined()
    expect(
      coreTaskResult({ ...base, status: 'completed', result: { content: [{ type: 'text', text: 'hi' }] } }),
    ).toEqual({
      ok: true,
      result: { content: [{ type: 'text', text: 'hi' }], _meta: { [RELATED_TASK_META_KEY]: { taskId: 't1' } } },
    })
    expect(coreTaskResult({ ...base, status: 'failed', error: { code: -32603, message: 'boom' } })).toEqual({
      ok: false,
      error: { code: -32603, message: 'boom' },
    })
    expect(coreTaskResult({ ...base, status: 'cancelled' })).toMatchObject({
      ok: false,
      error: { code: -32603, message: 'Task t1 was cancelled' },
    })
    expect(coreTaskResult({ ...base, status: 'completed' })).toMatchObject({
      ok: false,
      error: { message: 'Task t1 completed without a result' },
    })
  })

  it('adds the related task to a result’s own _meta', () => {
    expect(withRelatedTask({ _meta: { a: 1 }, x: 2 }, 'q')).toEqual({
      x: 2,
      _meta: { a: 1, [RELATED_TASK_META_KEY]: { taskId: 'q' } },
    })
  })
})

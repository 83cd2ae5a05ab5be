import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectToMyc, writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { passthrough } from '../../src/protocol/passthrough.js'

/**
 * 2025-11-25 core tasks of a 2025 client (`myc serve` on stdio) over a
 * 2026-07-28 child's tasks extension (SEP-2663): the both-era conformance
 * fixture, spoken to in the 2026 era (`"era": "auto"`), has no core tasks;
 * myc turns the client's task-augmented tools/call into the extension's
 * opt-in and its tasks/get, tasks/result, tasks/cancel and tasks/list into
 * the extension's requests (src/eras/face/core-tasks.ts).
 */

interface CoreTask {
  taskId: string
  status: string
  ttl: number | null
  createdAt: string
  lastUpdatedAt: string
  pollInterval?: number
}

describe('myc serve (build/myc.cjs): 2025 core tasks over a 2026 child’s tasks extension', () => {
  let client: Client
  let other: Client
  const elicited: Array<Record<string, unknown>> = []

  beforeAll(async () => {
    const config = writeConfig({
      mcpServers: {
        conformance: { command: process.execPath, args: [fixtureServer('conformance')], prefix: false, era: 'auto' },
      },
    })
    ;({ client } = await connectToMyc(['--config', config], {
      capabilities: { elicitation: { form: {} } },
      setup: (c) =>
        c.setRequestHandler('elicitation/create', (request) => {
          elicited.push(request.params as Record<string, unknown>)
          const content: Record<string, string | boolean> = /name/.test(String(request.params.message))
            ? { name: 'Ada' }
            : { confirm: true }
          return { action: 'accept', content }
        }),
    }))
    ;({ client: other } = await connectToMyc(['--config', config]))
  }, 30_000)

  afterAll(async () => {
    await client?.close()
    await other?.close()
  })

  const call = (c: Client, method: string, params: Record<string, unknown>, timeout = 15_000) =>
    c.request({ method, params } as never, passthrough, { timeout }) as Promise<Record<string, unknown>>
  const create = async (name: string, args: Record<string, unknown>) =>
    ((await call(client, 'tools/call', { name, arguments: args, task: { ttl: 60_000 } })) as { task: CoreTask }).task

  it('advertises the 2025 tasks capability for tools/call (the child has the extension)', () => {
    expect((client.getServerCapabilities() as { tasks?: unknown }).tasks).toMatchObject({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    })
  })

  it('creates a task in the 2025 shape, gets it, lists it, and waits for its result', async () => {
    const task = await create('slow_compute', { seconds: 1 })
    expect(task).toMatchObject({ status: 'working', ttl: 300_000, pollInterval: 200 })
    expect(typeof task.taskId).toBe('string')
    expect(typeof task.createdAt).toBe('string')
    expect(task).not.toHaveProperty('ttlMs')
    const got = await call(client, 'tasks/get', { taskId: task.taskId })
    expect(got).toMatchObject({ taskId: task.taskId, status: 'working', ttl: 300_000 })
    expect(got).not.toHaveProperty('resultType')
    const listed = (await call(client, 'tasks/list', {})) as { tasks: CoreTask[] }
    expect(listed.tasks.map((t) => t.taskId)).toContain(task.taskId)
    const result = (await call(client, 'tasks/result', { taskId: task.taskId })) as {
      content: Array<{ text: string }>
      _meta: Record<string, unknown>
    }
    expect(result.content[0]!.text).toBe('Computed in 1 s')
    expect(result._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId: task.taskId })
    expect(await call(client, 'tasks/get', { taskId: task.taskId })).toMatchObject({ status: 'completed' })
  })

  it('a call without task augmentation stays synchronous (no opt-in)', async () => {
    const result = (await call(client, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } })) as {
      content: Array<{ text: string }>
    }
    expect(result.content[0]!.text).toBe('Computed in 0 s')
  })

  it('cancels a task (then it is cancelled; cancelling again is -32602)', async () => {
    const task = await create('slow_compute', { seconds: 30 })
    const cancelled = await call(client, 'tasks/cancel', { taskId: task.taskId })
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' })
    expect(await call(client, 'tasks/get', { taskId: task.taskId })).toMatchObject({ status: 'cancelled' })
    await expect(call(client, 'tasks/cancel', { taskId: task.taskId })).rejects.toThrow(/already cancelled/)
    await expect(call(client, 'tasks/result', { taskId: task.taskId })).rejects.toThrow(/was cancelled/)
  })

  it('answers a failed task’s tasks/result with its error', async () => {
    const task = await create('protocol_error_job', {})
    await expect(call(client, 'tasks/result', { taskId: task.taskId })).rejects.toThrow(
      /protocol_error_job: internal failure/,
    )
  })

  it('asks the client (2025 elicitation) when the task needs input, and answers the child with tasks/update', async () => {
    const task = await create('confirm_delete', { path: '/tmp/x' })
    const result = (await call(client, 'tasks/result', { taskId: task.taskId })) as { content: Array<{ text: string }> }
    expect(result.content[0]!.text).toBe('Deleted /tmp/x')
    expect(elicited).toHaveLength(1)
    expect(elicited[0]).toMatchObject({
      message: '[conformance] Delete /tmp/x?',
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } },
    })
  })

  it('a task-required tool that asks before it becomes a task: the call is bridged, then the task runs', async () => {
    const before = elicited.length
    const task = await create('test_tool_with_task', {})
    expect(task.status).toBe('working')
    expect(elicited.slice(before).map((e) => e.message)).toEqual(['[conformance] What is your name?'])
    const result = (await call(client, 'tasks/result', { taskId: task.taskId })) as { content: Array<{ text: string }> }
    expect(result.content[0]!.text).toBe('Hello, Ada! (from the task)')
  })

  it('an unknown task, and another connection’s task, are unknown', async () => {
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel'])
      await expect(call(client, method, { taskId: 'no-such-task' })).rejects.toThrow(/Unknown task: no-such-task/)
    const task = await create('slow_compute', { seconds: 5 })
    await expect(call(other, 'tasks/get', { taskId: task.taskId })).rejects.toThrow(/Unknown task/)
    expect(((await call(other, 'tasks/list', {})) as { tasks: unknown[] }).tasks).toEqual([])
    await call(client, 'tasks/cancel', { taskId: task.taskId })
  })
})

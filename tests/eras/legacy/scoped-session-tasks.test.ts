import type { Server } from 'node:http'
import type { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { passthrough } from '../../../src/protocol/passthrough.js'
import type { Runtime } from '../../../src/runtime/runtime.js'
import { fixtureEntry, waitFor } from '../../helpers/runtime.js'
import { alive, instancePeople, peopleFace, personClient, scopedRuntime, type Person } from '../../helpers/scoped.js'

type Answer = { result: Record<string, unknown> } | { error: { code: number; message: string } }

/** One request of a 2025 session, its result or its error. */
async function ask(client: Client, method: string, params: Record<string, unknown>): Promise<Answer> {
  try {
    return { result: (await client.request({ method, params } as never, passthrough)) as Record<string, unknown> }
  } catch (error) {
    const { code, message } = error as { code: number; message: string }
    return { error: { code, message } }
  }
}

/** A task made by a task-augmented call of the conformance fixture's slow_compute: its taskId. */
async function created(client: Client, seconds: number): Promise<string> {
  const answer = await ask(client, 'tools/call', {
    name: 'jobs__slow_compute',
    arguments: { seconds },
    task: { ttl: 60_000 },
  })
  const task = 'result' in answer ? (answer.result.task as { taskId?: string } | undefined) : undefined
  if (!task?.taskId) throw new Error(`no task: ${JSON.stringify(answer)}`)
  return task.taskId
}

/**
 * 2025-11-25 core tasks of 2025 sessions on a scoped server (docs/team.md),
 * over a 2026 child's tasks extension (core-tasks.ts) and over a 2025
 * child's own: a task a person's instance made is remembered with that
 * instance and its tasks/get, tasks/result, tasks/cancel and tasks/list go
 * there (before, to the server's own process, which never made it); another
 * person's session gets an unknown task; a task whose instance crashed
 * fails at once, a tasks/result waiting on it included.
 */
describe.each([
  ['a 2026 child (its tasks extension)', 'auto'],
  ['a 2025 child (its core tasks)', 'legacy'],
])('2025 sessions: the tasks of a scoped server’s instances, over %s', (_kind, era) => {
  let runtime: Runtime
  let server: Server
  const open: Record<Person, Client> = {} as Record<Person, Client>
  /** The notifications/tasks/status each person's session was told. */
  const told: Record<Person, Array<Record<string, unknown>>> = { alice: [], bob: [], carol: [] }

  beforeAll(async () => {
    ;({ runtime } = await scopedRuntime({ jobs: fixtureEntry('conformance', { scope: 'principal', era }) }))
    let url: string
    ;({ url, server } = await peopleFace(runtime))
    for (const person of ['alice', 'bob'] as const) {
      open[person] = (await personClient(url, person)).client
      open[person].fallbackNotificationHandler = async (n) => {
        if (n.method === 'notifications/tasks/status') told[person].push(n.params as Record<string, unknown>)
      }
    }
  }, 30_000)
  afterAll(async () => {
    await Promise.all(Object.values(open).map((c) => c.close().catch(() => {})))
    server?.close()
    await runtime?.close()
  })

  it('sends each person’s tasks/* to their own instance; another person’s taskId is an unknown task', async () => {
    const { alice, bob } = open
    const [alices, bobs] = await Promise.all([created(alice, 0), created(bob, 0)])
    expect(instancePeople(runtime)).toEqual(['alice', 'bob'])
    for (const [client, taskId] of [
      [alice, alices],
      [bob, bobs],
    ] as const) {
      expect(await ask(client, 'tasks/get', { taskId })).toMatchObject({ result: { taskId } })
      expect(await ask(client, 'tasks/result', { taskId })).toMatchObject({
        result: { content: [{ type: 'text', text: 'Computed in 0 s' }] },
      })
    }
    const listed = await ask(alice, 'tasks/list', {})
    expect('result' in listed && (listed.result.tasks as Array<{ taskId: string }>).map((t) => t.taskId)).toEqual([
      alices,
    ])
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      const never = await ask(bob, method, { taskId: 'never-made' })
      expect(await ask(bob, method, { taskId: alices }), method).toEqual({
        error: { code: -32602, message: 'Unknown task: ' + alices },
      })
      expect(never).toEqual({ error: { code: -32602, message: 'Unknown task: never-made' } })
    }
    // A 2025 child tells of its tasks' status changes: each to the session whose call made the task, and no other.
    if (era === 'legacy') {
      await waitFor(() => told.alice.some((t) => t.status === 'completed'), 10_000, 'alice’s task to be told completed')
      await waitFor(() => told.bob.some((t) => t.status === 'completed'), 10_000, 'bob’s task to be told completed')
      expect(told.alice.map((t) => t.taskId)).toEqual(told.alice.map(() => alices))
      expect(told.bob.map((t) => t.taskId)).toEqual(told.bob.map(() => bobs))
    }
  }, 30_000)

  it('fails a task whose instance crashed at once, a tasks/result waiting on it too; the other person’s goes on', async () => {
    const { alice, bob } = open
    const [alices, bobs] = await Promise.all([created(alice, 60), created(bob, 60)])
    // Each instance runs its person's task, and says so (GET /instances).
    expect(runtime.supervisor.instances().map((i) => [i.principal, i.tasks])).toEqual([
      ['alice', 1],
      ['bob', 1],
    ])
    const waiting = ask(alice, 'tasks/result', { taskId: alices })
    const pid = runtime.supervisor.instances().find((i) => i.principal === 'alice')!.pid!
    // A 2025 child holds the tasks/result until the task ends: it is on its way to alice's instance. (Over a
    // 2026 child myc polls tasks/get, a short request each time: the kill falls during a poll or between two.)
    if (era === 'legacy')
      await waitFor(
        () => runtime.supervisor.instances().find((i) => i.principal === 'alice')!.inFlight > 0,
        5_000,
        'the tasks/result to reach alice’s instance',
      )
    process.kill(pid, 'SIGKILL')
    const lost = `Task ${alices} failed: the process of server "jobs" that ran it is gone`
    expect(await waiting).toMatchObject({ error: { code: -32603, message: expect.stringContaining(lost) } })
    expect(alive(pid)).toBe(false)
    expect(await ask(alice, 'tasks/get', { taskId: alices })).toMatchObject({
      result: { taskId: alices, status: 'failed', statusMessage: expect.stringContaining(lost) },
    })
    const listed = await ask(alice, 'tasks/list', {})
    expect('result' in listed && listed.result.tasks).toEqual(
      expect.arrayContaining([expect.objectContaining({ taskId: alices, status: 'failed' })]),
    )
    expect(await ask(alice, 'tasks/cancel', { taskId: alices })).toMatchObject({
      error: { code: -32602, message: expect.stringContaining(lost) },
    })
    expect(await ask(bob, 'tasks/get', { taskId: bobs })).toMatchObject({ result: { status: 'working' } })
    expect(await ask(bob, 'tasks/cancel', { taskId: bobs })).toMatchObject({ result: { status: 'cancelled' } })
  }, 30_000)
})

/** A `scope: "session"` server: the session's task is its instance's, and the session's end stops it all the same. */
describe('2025 sessions: a task of a session’s instance', () => {
  let runtime: Runtime
  let server: Server

  beforeAll(async () => {
    ;({ runtime } = await scopedRuntime({ jobs: fixtureEntry('conformance', { scope: 'session', era: 'auto' }) }))
    ;({ server } = await peopleFace(runtime))
  }, 30_000)
  afterAll(async () => {
    server?.close()
    await runtime?.close()
  })

  it('is reached through its session only, and ends with it: DELETE stops the instance though the task runs', async () => {
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`
    const [first, second] = [await personClient(base, 'alice'), await personClient(base, 'alice')]
    const taskId = await created(first.client, 60)
    expect(await ask(first.client, 'tasks/get', { taskId })).toMatchObject({ result: { status: 'working' } })
    // Another session of the same person: its own instance, which never made it.
    expect(await ask(second.client, 'tasks/get', { taskId })).toEqual({
      error: { code: -32602, message: `Unknown task: ${taskId}` },
    })
    const sessionId = (first.transport as StreamableHTTPClientTransport).sessionId
    const firstPid = runtime.supervisor.instances().find((i) => i.session === sessionId)!.pid!
    await (first.transport as StreamableHTTPClientTransport).terminateSession()
    await waitFor(() => !alive(firstPid), 5_000, 'the ended session’s instance to stop')
    await second.client.close()
  }, 30_000)
})

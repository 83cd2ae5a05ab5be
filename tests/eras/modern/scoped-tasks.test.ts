import type { Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../../src/runtime/runtime.js'
import { modernRequest, type RpcAnswer } from '../../helpers/http.js'
import { fixtureEntry, waitFor } from '../../helpers/runtime.js'
import { alive, instancePeople, peopleFace, PEOPLE, scopedRuntime, type Person } from '../../helpers/scoped.js'

const WITH_TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } }

/** One 2026-07-28 request of `person` over HTTP, declaring the tasks extension: its JSON-RPC answer. */
async function rpc(url: string, person: Person, method: string, params: Record<string, unknown>): Promise<RpcAnswer> {
  return (await modernRequest(url, method, params, { token: PEOPLE[person], capabilities: WITH_TASKS })).answer
}

/** A task made by `person`'s call of `tool` (the conformance fixture's slow_compute), its taskId. */
async function created(url: string, person: Person, tool: string, seconds: number): Promise<string> {
  const answer = await rpc(url, person, 'tools/call', { name: tool, arguments: { seconds } })
  const result = answer.result as { resultType?: string; taskId?: string } | undefined
  if (result?.resultType !== 'task') throw new Error(`no task: ${JSON.stringify(answer)}`)
  return result.taskId!
}

/** `person`'s tasks/get of `taskId`, polled until the task is no longer working. */
async function ended(url: string, person: Person, taskId: string): Promise<Record<string, unknown>> {
  let last: RpcAnswer | undefined
  await waitFor(
    async () => {
      last = await rpc(url, person, 'tasks/get', { taskId })
      return (last.result as { status?: string } | undefined)?.status !== 'working'
    },
    15_000,
    `${person}'s task to end`,
  )
  return (last!.result ?? { error: last!.error }) as Record<string, unknown>
}

/** Alice's and Bob's tasks of `tool`, made at once: each completes with its result, asked of its person's instance. */
async function bothComplete(url: string, tool: string): Promise<{ alices: string; bobs: string }> {
  const [alices, bobs] = await Promise.all([created(url, 'alice', tool, 0), created(url, 'bob', tool, 0)])
  for (const [person, taskId] of [
    ['alice', alices],
    ['bob', bobs],
  ] as const)
    expect(await ended(url, person, taskId)).toMatchObject({
      taskId,
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Computed in 0 s' }] },
    })
  return { alices, bobs }
}

/** A runtime whose server `name` is the conformance fixture, scoped per person and spoken to in `era`, behind a face. */
function scopedJobs(name: string, era: string) {
  const served = {} as { runtime: Runtime; server: Server; url: string }
  beforeAll(async () => {
    ;({ runtime: served.runtime } = await scopedRuntime({
      [name]: fixtureEntry('conformance', { scope: 'principal', era }),
    }))
    ;({ url: served.url, server: served.server } = await peopleFace(served.runtime))
  }, 30_000)
  afterAll(async () => {
    served.server?.close()
    await served.runtime?.close()
  })
  return served
}

/** The pid of `person`'s instance. */
function pidOf(runtime: Runtime, person: Person): number {
  const pid = runtime.supervisor.instances().find((i) => i.principal === person)?.pid
  if (!pid) throw new Error(`${person} has no instance`)
  return pid
}

/**
 * The tasks extension (SEP-2663) on a scoped server (docs/team.md): a task a
 * person's instance made is remembered with that instance, its tasks/get,
 * tasks/update and tasks/cancel go there and nowhere else (before, they went
 * to the server's own process, which answered -32602 for a task it never
 * made), another person's taskId is an unknown one, and a task whose
 * instance crashed answers as failed, saying so.
 */
describe('2026 requests: the tasks of a scoped server’s instances', () => {
  const served = scopedJobs('jobs', 'auto')

  it('sends each person’s tasks/* to their own instance; another person’s taskId answers as an unknown one', async () => {
    const { runtime, url } = served
    const { alices } = await bothComplete(url, 'jobs__slow_compute')
    expect(instancePeople(runtime)).toEqual(['alice', 'bob'])
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const never = await rpc(url, 'bob', method, { taskId: 'never-made' })
      const theirs = await rpc(url, 'bob', method, { taskId: alices })
      expect(theirs.error, method).toEqual({
        ...never.error,
        message: never.error!.message.replace('never-made', alices),
      })
    }
    expect(await rpc(url, 'alice', 'tasks/get', { taskId: alices })).toMatchObject({ result: { status: 'completed' } })
  }, 30_000)

  it('answers a task whose instance crashed as failed, saying so; the other person’s task goes on', async () => {
    const { runtime, url } = served
    const [alices, bobs] = await Promise.all([
      created(url, 'alice', 'jobs__slow_compute', 60),
      created(url, 'bob', 'jobs__slow_compute', 60),
    ])
    expect(await rpc(url, 'alice', 'tasks/get', { taskId: alices })).toMatchObject({ result: { status: 'working' } })
    const pid = pidOf(runtime, 'alice')
    process.kill(pid, 'SIGKILL')
    await waitFor(() => !alive(pid), 5_000, 'alice’s instance to be gone')
    const got = await ended(url, 'alice', alices)
    expect(got).toMatchObject({ taskId: alices, status: 'failed', error: { code: -32603 } })
    expect(got.statusMessage).toMatch(
      new RegExp(
        `^Task ${alices} failed: the process of server "jobs" that ran it is gone \\(it .+\\); call the tool again$`,
      ),
    )
    // Nothing is sent anywhere for it: a cancel is acknowledged as for any ended task.
    expect(await rpc(url, 'alice', 'tasks/cancel', { taskId: alices })).toMatchObject({ result: {} })
    expect(await rpc(url, 'bob', 'tasks/get', { taskId: bobs })).toMatchObject({ result: { status: 'working' } })
    expect(await rpc(url, 'bob', 'tasks/cancel', { taskId: bobs })).toMatchObject({ result: {} })
  }, 30_000)
})

/**
 * A 2025 child with 2025-11-25 core tasks (the conformance fixture in the
 * 2025 era) on a scoped server: myc holds the task over the child's own
 * (hosted-tasks.ts), whose tasks/result goes to the instance that made it.
 */
describe('2026 requests: a scoped 2025 child’s own tasks', () => {
  const served = scopedJobs('old', 'legacy')

  it('takes the task’s result from the instance that made it, for its person only', async () => {
    const { url } = served
    const { alices } = await bothComplete(url, 'old__slow_compute')
    const never = await rpc(url, 'bob', 'tasks/get', { taskId: 'never-made' })
    expect((await rpc(url, 'bob', 'tasks/get', { taskId: alices })).error).toEqual({
      ...never.error,
      message: never.error!.message.replace('never-made', alices),
    })
  }, 30_000)
})

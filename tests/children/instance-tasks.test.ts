import type { Server } from 'node:http'
import type { Client } from '@modelcontextprotocol/client'
import { afterEach, describe, expect, it } from 'vitest'
import { passthrough } from '../../src/protocol/passthrough.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { modernRequest } from '../helpers/http.js'
import { fixtureEntry, waitFor } from '../helpers/runtime.js'
import { alive, firstText, peopleFace, PEOPLE, personClient, scopedRuntime } from '../helpers/scoped.js'

const WITH_TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } }

/**
 * A scoped server's instance that runs a task for its person is busy
 * (children/instances.ts): the task answered its tools/call at once and goes
 * on in the child, so no call is in flight, yet `idleMs` must not stop the
 * instance (the task would be lost) and `maxInstances` must not make room
 * with it. Once the task is seen to end (here: cancelled), it is idle again.
 */
describe('a scoped server’s instance running a task is busy', () => {
  let runtime: Runtime | undefined
  let server: Server | undefined
  const open: Client[] = []
  const start = async (entry: Record<string, unknown>) => {
    ;({ runtime } = await scopedRuntime({
      jobs: fixtureEntry('conformance', { scope: 'principal', era: 'auto', ...entry }),
    }))
    let url: string
    ;({ url, server } = await peopleFace(runtime))
    return url
  }
  const pidOf = (person: string) => runtime!.supervisor.instances().find((i) => i.principal === person)?.pid
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close().catch(() => {})))
    server?.close()
    await runtime?.close()
  })

  it('is not stopped for being idle while its task runs (a 2026 request’s task); it is once the task ended', async () => {
    const url = await start({ idleMs: 300 })
    const modern = (person: 'alice' | 'bob', method: string, params: Record<string, unknown>) =>
      modernRequest(url, method, params, { token: PEOPLE[person], capabilities: WITH_TASKS }).then((r) => r.answer)
    const made = await modern('alice', 'tools/call', { name: 'jobs__slow_compute', arguments: { seconds: 60 } })
    const taskId = (made.result as { taskId: string }).taskId
    const alices = pidOf('alice')!
    // Bob's instance, with no task, is stopped as idle: the sweep has run past alice's idleMs meanwhile.
    expect(firstText((await modern('bob', 'tools/call', { name: 'jobs__greet', arguments: {} })).result)).toBe(
      'Hello, world!',
    )
    const bobs = pidOf('bob')!
    await waitFor(() => !alive(bobs), 10_000, 'bob’s idle instance to stop')
    expect(alive(alices)).toBe(true)
    expect(await modern('alice', 'tasks/get', { taskId })).toMatchObject({ result: { status: 'working' } })
    expect(await modern('alice', 'tasks/cancel', { taskId })).toMatchObject({ result: {} })
    await waitFor(() => !alive(alices), 10_000, 'alice’s instance to stop once idle')
  }, 30_000)

  it('is not stopped to make room at maxInstances (a 2025 session’s task): the call is refused; once the task ended it makes room', async () => {
    const url = await start({ maxInstances: 1 })
    const [alice, bob] = [(await personClient(url, 'alice')).client, (await personClient(url, 'bob')).client]
    open.push(alice, bob)
    const made = (await alice.request(
      {
        method: 'tools/call',
        params: { name: 'jobs__slow_compute', arguments: { seconds: 60 }, task: { ttl: 60_000 } },
      } as never,
      passthrough,
    )) as { task: { taskId: string } }
    const alices = pidOf('alice')!
    const refused = await bob.callTool({ name: 'jobs__greet', arguments: {} })
    expect(refused.isError).toBe(true)
    expect(firstText(refused)).toBe('jobs: every instance is busy (maxInstances 1); retry shortly')
    expect(alive(alices)).toBe(true)
    await alice.request({ method: 'tasks/cancel', params: { taskId: made.task.taskId } } as never, passthrough)
    expect(firstText(await bob.callTool({ name: 'jobs__greet', arguments: {} }))).toBe('Hello, world!')
    await waitFor(() => !alive(alices), 5_000, 'alice’s instance to make room')
  }, 30_000)
})

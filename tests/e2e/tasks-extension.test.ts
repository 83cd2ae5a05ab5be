import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { modernRequest, startHttpMyc, type HttpMyc, type RpcAnswer } from '../helpers/http.js'

/**
 * The tasks extension (SEP-2663, io.modelcontextprotocol/tasks) through
 * `myc serve --http` for 2026-07-28 clients, with the both-era conformance
 * fixture as an unprefixed child spoken to in the 2026 era (`"era": "auto"`):
 * the child creates the tasks, myc routes tasks/get, tasks/update and
 * tasks/cancel to it for the credential that created each, and any other
 * taskId (never made, or another credential's) is -32602 alike. Raw POSTs,
 * so every envelope and header is the test's own.
 */

const TASKS = 'io.modelcontextprotocol/tasks'
const TOKENS = {
  MYC_E2E_TASKS_ALICE: 'alice-tasks-0123456789abcdef0123456789ab',
  MYC_E2E_TASKS_BOB: 'bob-tasks-0123456789abcdef0123456789abcd',
}
const alice = TOKENS.MYC_E2E_TASKS_ALICE
const bob = TOKENS.MYC_E2E_TASKS_BOB
/** What a request declares: the tasks extension, or nothing. */
const WITH_TASKS = { extensions: { [TASKS]: {} } }
const WITHOUT = {}

/** One 2026-07-28 request of `token` (tests/helpers/http.ts modernRequest); its JSON-RPC answer. */
async function rpc(
  url: string,
  token: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = WITH_TASKS,
): Promise<RpcAnswer> {
  return (await modernRequest(url, method, params, { token, capabilities, clientName: 'tasks-e2e' })).answer
}

/** Polls tasks/get until the task is terminal. */
async function settled(url: string, token: string, taskId: string, ms = 15_000): Promise<Record<string, unknown>> {
  const until = Date.now() + ms
  for (;;) {
    const got = await rpc(url, token, 'tasks/get', { taskId })
    if (got.error) throw new Error(`tasks/get ${taskId}: ${got.error.code} ${got.error.message}`)
    const status = got.result!.status
    if (status === 'completed' || status === 'failed' || status === 'cancelled') return got.result!
    if (Date.now() > until) throw new Error(`task ${taskId} still ${String(status)} after ${ms} ms`)
    await new Promise((r) => setTimeout(r, 150))
  }
}

describe('myc serve --http: the tasks extension (SEP-2663) for 2026-07-28 clients, a 2026 child (build/myc.cjs)', () => {
  let m: HttpMyc

  beforeAll(async () => {
    const config = writeConfig({
      mcpServers: {
        conformance: { command: process.execPath, args: [fixtureServer('conformance')], prefix: false, era: 'auto' },
      },
      http: {
        // Two credentials with the same role: one view, two principals (a task is its credential's, not its view's).
        tokens: [
          { env: 'MYC_E2E_TASKS_ALICE', role: 'user', name: 'alice' },
          { env: 'MYC_E2E_TASKS_BOB', role: 'user', name: 'bob' },
        ],
      },
    })
    m = await startHttpMyc(config, { env: TOKENS })
  }, 30_000)
  afterAll(async () => {
    const code = await m?.stop()
    expect(code).toBe(0)
  })

  it('advertises the extension in server/discover when a child has it', async () => {
    const discover = await rpc(m.url, alice, 'server/discover', {})
    expect(discover.result?.capabilities).toMatchObject({ extensions: { [TASKS]: {} } })
    expect(discover.result?.capabilities).not.toHaveProperty('tasks')
  })

  it('a task-supporting tool answers a CreateTaskResult; tasks/get is polled to completion with the result inlined', async () => {
    const created = await rpc(m.url, alice, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1 } })
    expect(created.error).toBeUndefined()
    const task = created.result!
    expect(task).toMatchObject({
      resultType: 'task',
      taskId: expect.any(String),
      status: 'working',
      createdAt: expect.any(String),
      lastUpdatedAt: expect.any(String),
      ttlMs: expect.any(Number),
    })
    // Nothing of a DetailedTask's (the SDK's tools/call codec adds an empty content, as straight from the child).
    for (const key of ['result', 'error', 'inputRequests', 'requestState']) expect(task).not.toHaveProperty(key)
    // Found at once (remembered before the client had the taskId), still working.
    const first = await rpc(m.url, alice, 'tasks/get', { taskId: task.taskId })
    expect(first.result).toMatchObject({ taskId: task.taskId, status: 'working', resultType: 'complete' })
    expect(first.result).not.toHaveProperty('result')
    const done = await settled(m.url, alice, task.taskId as string)
    expect(done).toMatchObject({
      taskId: task.taskId,
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Computed in 1 s' }] },
    })
  })

  it('tasks/update answers the input a task waits for; tasks/cancel cancels a running task', async () => {
    const asking = (await rpc(m.url, alice, 'tools/call', { name: 'confirm_delete', arguments: { path: '/tmp/x' } }))
      .result!
    expect(asking.resultType).toBe('task')
    let waiting: Record<string, unknown> | undefined
    for (let i = 0; i < 50 && waiting?.status !== 'input_required'; i++) {
      waiting = (await rpc(m.url, alice, 'tasks/get', { taskId: asking.taskId })).result
      if (waiting?.status !== 'input_required') await new Promise((r) => setTimeout(r, 100))
    }
    expect(waiting).toMatchObject({
      status: 'input_required',
      inputRequests: { confirm: { method: 'elicitation/create' } },
    })
    const ack = await rpc(m.url, alice, 'tasks/update', {
      taskId: asking.taskId,
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    })
    expect(ack.error).toBeUndefined()
    expect(ack.result).toMatchObject({ resultType: 'complete' })
    expect(await settled(m.url, alice, asking.taskId as string)).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'Deleted /tmp/x' }] },
    })

    const long = (await rpc(m.url, alice, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result!
    const cancelled = await rpc(m.url, alice, 'tasks/cancel', { taskId: long.taskId })
    expect(cancelled.error).toBeUndefined()
    expect(cancelled.result).toMatchObject({ resultType: 'complete' })
    expect(cancelled.result).not.toHaveProperty('status')
    expect(await settled(m.url, alice, long.taskId as string)).toMatchObject({ status: 'cancelled' })
  })

  it("an unknown taskId and another credential's answer -32602 alike, for every task method; without the extension, -32021", async () => {
    const mine = (await rpc(m.url, alice, 'tools/call', { name: 'slow_compute', arguments: { seconds: 30 } })).result!
    expect(mine.resultType).toBe('task')
    const taskId = mine.taskId as string
    const unknownId = 'f0f0f0f0-0000-4000-8000-000000000000'
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const extra = method === 'tasks/update' ? { inputResponses: {} } : {}
      const never = await rpc(m.url, bob, method, { taskId: unknownId, ...extra })
      const theirs = await rpc(m.url, bob, method, { taskId, ...extra })
      expect(never.error, method).toEqual({ code: -32602, message: `Unknown taskId: ${unknownId}` })
      // Word for word the same answer, but for the id it names: nothing says the task exists.
      expect(theirs.error, method).toEqual({ code: -32602, message: `Unknown taskId: ${taskId}` })
      // The same for alice when she does not declare the extension: -32021 naming it, before any lookup.
      const undeclared = await rpc(m.url, alice, method, { taskId, ...extra }, WITHOUT)
      expect(undeclared.error?.code, method).toBe(-32021)
      expect(undeclared.error?.data, method).toMatchObject({ requiredCapabilities: { extensions: { [TASKS]: {} } } })
    }
    // Bob's attempts changed nothing: the task is alice's, still running, until she cancels it.
    expect((await rpc(m.url, alice, 'tasks/get', { taskId })).result).toMatchObject({ taskId, status: 'working' })
    await rpc(m.url, alice, 'tasks/cancel', { taskId })
    expect(await settled(m.url, alice, taskId)).toMatchObject({ status: 'cancelled' })
  })

  it('a request that does not declare the extension gets the tool run inline (optional) or -32021 (required), from the child', async () => {
    const inline = await rpc(m.url, bob, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, WITHOUT)
    expect(inline.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Computed in 0 s' }],
    })
    expect(inline.result).not.toHaveProperty('taskId')
    const required = await rpc(m.url, bob, 'tools/call', { name: 'failing_job', arguments: {} }, WITHOUT)
    expect(required.error?.code).toBe(-32021)
  })
})

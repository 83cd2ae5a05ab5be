import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, npmServer, requireBundle, writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { modernRequest, startHttpMyc, type HttpMyc, type RpcAnswer } from '../helpers/http.js'
import { waitFor } from '../helpers/runtime.js'

/**
 * The tasks extension (SEP-2663) for the tools of 2025 children, which have
 * no tasks: myc holds the task (src/eras/face/hosted-tasks.ts). 2026-07-28
 * clients of `myc serve --http` (raw POSTs) and of `myc serve --era modern`
 * on stdio (raw lines) call tools of 2025 fixture children (elicit.mjs asks
 * mid-call, progress.mjs is slow, hang.mjs never answers until cancelled and
 * says so on stderr): a call that does not answer at once becomes a task,
 * polled with tasks/get, answered with tasks/update, cancelled with
 * tasks/cancel; another credential's taskId is an unknown one. A 2025
 * child with 2025-11-25 core tasks (server-everything from npm) makes the
 * task itself: myc maps the extension onto it (`task: { ttl }`, the child's
 * tasks/result for the result and its questions, tasks/cancel).
 */

const MODERN = '2026-07-28'
const TASKS = 'io.modelcontextprotocol/tasks'
const TOKENS = {
  MYC_E2E_HOSTED_ALICE: 'alice-hosted-0123456789abcdef0123456789',
  MYC_E2E_HOSTED_BOB: 'bob-hosted-0123456789abcdef0123456789ab',
}
const alice = TOKENS.MYC_E2E_HOSTED_ALICE
const bob = TOKENS.MYC_E2E_HOSTED_BOB
/** What a request declares: the tasks extension (and elicitation, for the child's questions), or nothing. */
const WITH_TASKS = { elicitation: {}, extensions: { [TASKS]: {} } }
const WITHOUT = { elicitation: {} }
const server = (name: string) => ({ command: process.execPath, args: [fixtureServer(name)] })
const CHILDREN = { asker: server('elicit'), slow: server('progress'), hang: server('hang') }

type Rpc = (
  method: string,
  params: Record<string, unknown>,
  capabilities?: Record<string, unknown>,
) => Promise<RpcAnswer>

let nextId = 1
const envelope = (capabilities: Record<string, unknown>) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'hosted-tasks-e2e', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': capabilities,
})

/** One 2026-07-28 request of `token` over HTTP (tests/helpers/http.ts modernRequest); its JSON-RPC answer. */
function httpRpc(url: string, token: string): Rpc {
  return async (method, params, capabilities = WITH_TASKS) =>
    (await modernRequest(url, method, params, { token, capabilities, clientName: 'hosted-tasks-e2e' })).answer
}

/** `myc serve --era modern` on stdio, spoken to in raw lines. */
class StdioRpc {
  readonly proc: ChildProcessWithoutNullStreams
  stderr = ''
  private buffer = ''
  private readonly waiters = new Map<number, (answer: RpcAnswer) => void>()

  constructor(config: string) {
    requireBundle()
    this.proc = spawn(process.execPath, [bundle, 'serve', '--era', 'modern', '--config', config], { stdio: 'pipe' })
    this.proc.stderr.setEncoding('utf8').on('data', (s: string) => (this.stderr += s))
    this.proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffer += chunk
      let nl: number
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl).trim()
        this.buffer = this.buffer.slice(nl + 1)
        if (!line) continue
        const message = JSON.parse(line) as RpcAnswer & { id?: number }
        if (typeof message.id === 'number' && (message.result !== undefined || message.error !== undefined))
          this.waiters.get(message.id)?.(message)
      }
    })
  }

  readonly rpc: Rpc = (method, params, capabilities = WITH_TASKS) => {
    const id = nextId++
    const answer = new Promise<RpcAnswer>((resolve) => this.waiters.set(id, resolve))
    this.proc.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: envelope(capabilities) } })}\n`,
    )
    return answer
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.proc.once('exit', resolve))
    this.proc.stdin.end()
    await exited
  }
}

/** Polls tasks/get until `done` says so. */
async function pollUntil(
  rpc: Rpc,
  taskId: string,
  done: (task: Record<string, unknown>) => boolean,
  ms = 15_000,
): Promise<Record<string, unknown>> {
  const until = Date.now() + ms
  for (;;) {
    const got = await rpc('tasks/get', { taskId })
    if (got.error) throw new Error(`tasks/get ${taskId}: ${got.error.code} ${got.error.message}`)
    if (done(got.result!)) return got.result!
    if (Date.now() > until) throw new Error(`task ${taskId}: still ${JSON.stringify(got.result)} after ${ms} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}
const terminal = (t: Record<string, unknown>) =>
  t.status === 'completed' || t.status === 'failed' || t.status === 'cancelled'

/** The checks both faces share: a task created, polled to completion; one that asks; the quick path. */
function lifecycle(rpc: () => Rpc) {
  it('answers a quick call at once (no task); a slow one with a CreateTaskResult, polled to completion with the result inline', async () => {
    const quick = await rpc()('tools/call', { name: 'hang__echo', arguments: { message: 'hi' } })
    expect(quick.error).toBeUndefined()
    expect(quick.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text' }] })
    expect(quick.result).not.toHaveProperty('taskId')

    const created = await rpc()('tools/call', { name: 'slow__count', arguments: { steps: 4, stepMs: 300 } })
    expect(created.error).toBeUndefined()
    const task = created.result!
    expect(task).toMatchObject({
      resultType: 'task',
      taskId: expect.any(String),
      status: 'working',
      createdAt: expect.any(String),
      lastUpdatedAt: expect.any(String),
      ttlMs: expect.any(Number),
      pollIntervalMs: expect.any(Number),
    })
    for (const key of ['result', 'error', 'inputRequests', 'requestState', 'ttl', 'pollInterval', 'task'])
      expect(task).not.toHaveProperty(key)
    const first = await rpc()('tasks/get', { taskId: task.taskId })
    expect(first.result).toMatchObject({ taskId: task.taskId, status: 'working', resultType: 'complete' })
    expect(first.result).not.toHaveProperty('result')
    // The child's progress reports (step 1 at 300 ms, step 2 at 600 ms…) show as the task's statusMessage while it works.
    const stepping = await pollUntil(
      rpc(),
      task.taskId as string,
      (t) => typeof t.statusMessage === 'string' || terminal(t),
    )
    expect(stepping).toMatchObject({ status: 'working', statusMessage: expect.stringMatching(/^step [1-4]$/) })
    const done = await pollUntil(rpc(), task.taskId as string, terminal)
    expect(done).toMatchObject({
      taskId: task.taskId,
      status: 'completed',
      result: { content: [{ type: 'text', text: 'counted 4' }] },
    })
    expect(done).not.toHaveProperty('requestState')
    expect(done).not.toHaveProperty('statusMessage')
  })

  it('a task whose child asks is input_required with the question; tasks/update answers it and the task completes', async () => {
    const task = (await rpc()('tools/call', { name: 'asker__ask', arguments: {} })).result!
    expect(task).toMatchObject({ resultType: 'task' })
    const waiting = await pollUntil(rpc(), task.taskId as string, (t) => t.status !== 'working')
    expect(waiting).toMatchObject({
      status: 'input_required',
      inputRequests: {
        elicitation_1: {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: 'Favourite colour?',
            requestedSchema: { type: 'object', properties: { colour: { type: 'string' } } },
          },
        },
      },
    })
    // A wrong shape is -32602 naming the key; the question stays out.
    const wrong = await rpc()('tasks/update', {
      taskId: task.taskId,
      inputResponses: { elicitation_1: { action: 'perhaps' } },
    })
    expect(wrong.error).toMatchObject({ code: -32602 })
    const ack = await rpc()('tasks/update', {
      taskId: task.taskId,
      inputResponses: { elicitation_1: { action: 'accept', content: { colour: 'teal' } } },
    })
    expect(ack.error).toBeUndefined()
    expect(ack.result).toMatchObject({ resultType: 'complete' })
    for (const key of ['taskId', 'status', 'result', 'inputRequests']) expect(ack.result).not.toHaveProperty(key)
    const done = await pollUntil(rpc(), task.taskId as string, terminal)
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text' }] } })
    expect(JSON.parse((done.result as { content: Array<{ text: string }> }).content[0]!.text)).toEqual({
      action: 'accept',
      content: { colour: 'teal' },
    })
  })
}

describe('myc serve --http: tasks myc holds for a 2025 child’s tools (build/myc.cjs)', () => {
  let m: HttpMyc

  beforeAll(async () => {
    const config = writeConfig({
      mcpServers: CHILDREN,
      http: {
        tokens: [
          { env: 'MYC_E2E_HOSTED_ALICE', role: 'user', name: 'alice' },
          { env: 'MYC_E2E_HOSTED_BOB', role: 'user', name: 'bob' },
        ],
      },
    })
    m = await startHttpMyc(config, { env: TOKENS })
  }, 30_000)
  afterAll(async () => {
    expect(await m?.stop()).toBe(0)
  })

  it('advertises the extension in server/discover (2025 children: myc holds their tasks)', async () => {
    const discover = await httpRpc(m.url, alice)('server/discover', {})
    expect(discover.result?.capabilities).toMatchObject({ extensions: { [TASKS]: {} } })
    expect(discover.result?.capabilities).not.toHaveProperty('tasks')
  })

  lifecycle(() => httpRpc(m.url, alice))

  it('tasks/cancel cancels the child’s call (the child sees notifications/cancelled) and the task settles cancelled', async () => {
    const rpc = httpRpc(m.url, alice)
    const task = (await rpc('tools/call', { name: 'hang__hang', arguments: {} })).result!
    expect(task).toMatchObject({ resultType: 'task', status: 'working' })
    const before = m.stderr().split('hang: cancelled').length
    const ack = await rpc('tasks/cancel', { taskId: task.taskId })
    expect(ack.error).toBeUndefined()
    expect(ack.result).toMatchObject({ resultType: 'complete' })
    expect(ack.result).not.toHaveProperty('status')
    await waitFor(() => m.stderr().split('hang: cancelled').length > before, 5_000, 'the child to see the cancellation')
    expect(await pollUntil(rpc, task.taskId as string, terminal)).toMatchObject({ status: 'cancelled' })
    // Again, on an ended task: the same empty ack.
    expect((await rpc('tasks/cancel', { taskId: task.taskId })).result).toMatchObject({ resultType: 'complete' })
  })

  it("another credential's taskId answers -32602 as an unknown one, for every task method; without the extension, -32021", async () => {
    const rpcAlice = httpRpc(m.url, alice)
    const rpcBob = httpRpc(m.url, bob)
    const task = (await rpcAlice('tools/call', { name: 'hang__hang', arguments: {} })).result!
    const taskId = task.taskId as string
    const unknownId = 'f0f0f0f0-0000-4000-8000-000000000000'
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const extra = method === 'tasks/update' ? { inputResponses: {} } : {}
      expect((await rpcBob(method, { taskId: unknownId, ...extra })).error, method).toEqual({
        code: -32602,
        message: `Unknown taskId: ${unknownId}`,
      })
      expect((await rpcBob(method, { taskId, ...extra })).error, method).toEqual({
        code: -32602,
        message: `Unknown taskId: ${taskId}`,
      })
      const undeclared = await rpcAlice(method, { taskId, ...extra }, WITHOUT)
      expect(undeclared.error?.code, method).toBe(-32021)
    }
    // Bob's attempts changed nothing: still alice's, still running.
    expect((await rpcAlice('tasks/get', { taskId })).result).toMatchObject({ taskId, status: 'working' })
    await rpcAlice('tasks/cancel', { taskId })
    expect(await pollUntil(rpcAlice, taskId, terminal)).toMatchObject({ status: 'cancelled' })
  })

  it('without the extension a slow call runs inline, as before', async () => {
    const inline = await httpRpc(m.url, bob)(
      'tools/call',
      { name: 'slow__count', arguments: { steps: 3, stepMs: 250 } },
      WITHOUT,
    )
    expect(inline.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'counted 3' }] })
    expect(inline.result).not.toHaveProperty('taskId')
  })
})

describe('myc serve --era modern on stdio: tasks myc holds for a 2025 child’s tools (build/myc.cjs)', () => {
  let client: StdioRpc

  beforeAll(async () => {
    client = new StdioRpc(writeConfig({ mcpServers: CHILDREN }))
    const discover = await client.rpc('server/discover', {})
    expect(discover.result?.capabilities).toMatchObject({ extensions: { [TASKS]: {} } })
  }, 30_000)
  afterAll(async () => {
    await client?.close()
  })

  lifecycle(() => client.rpc)

  it('tasks/cancel reaches the child', async () => {
    const task = (await client.rpc('tools/call', { name: 'hang__hang', arguments: {} })).result!
    expect(task).toMatchObject({ resultType: 'task' })
    expect((await client.rpc('tasks/cancel', { taskId: task.taskId })).result).toMatchObject({ resultType: 'complete' })
    await waitFor(() => client.stderr.includes('hang: cancelled'), 5_000, 'the child to see the cancellation')
    expect(await pollUntil(client.rpc, task.taskId as string, terminal)).toMatchObject({ status: 'cancelled' })
  })
})

describe('myc serve --http: a 2025 child’s own core tasks (server-everything) under the tasks extension (build/myc.cjs)', () => {
  let m: HttpMyc
  const RESEARCH = 'everything__simulate-research-query'

  beforeAll(async () => {
    const config = writeConfig({
      mcpServers: { everything: { command: process.execPath, args: [npmServer('server-everything'), 'stdio'] } },
      http: {
        tokens: [
          { env: 'MYC_E2E_HOSTED_ALICE', role: 'user', name: 'alice' },
          { env: 'MYC_E2E_HOSTED_BOB', role: 'user', name: 'bob' },
        ],
      },
    })
    m = await startHttpMyc(config, { env: TOKENS })
    // server-everything registers its task tool after initialize.
    await waitFor(
      async () =>
        ((await httpRpc(m.url, alice)('tools/list', {})).result?.tools as Array<{ name: string }> | undefined)?.some(
          (t) => t.name === RESEARCH,
        ) ?? false,
      15_000,
      'the task tool to be listed',
    )
  }, 40_000)
  afterAll(async () => {
    expect(await m?.stop()).toBe(0)
  })

  it('the child’s task becomes the extension’s: a flat CreateTaskResult, tasks/get polled to completion with the result inline', async () => {
    const rpc = httpRpc(m.url, alice)
    const created = await rpc('tools/call', { name: RESEARCH, arguments: { topic: 'ants' } })
    expect(created.error).toBeUndefined()
    const task = created.result!
    expect(task).toMatchObject({
      resultType: 'task',
      taskId: expect.any(String),
      status: 'working',
      ttlMs: 300_000,
      pollIntervalMs: 1_000,
    })
    for (const key of ['task', 'ttl', 'pollInterval', 'result']) expect(task).not.toHaveProperty(key)
    const done = await pollUntil(rpc, task.taskId as string, terminal, 20_000)
    expect(done).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: expect.stringContaining('# Research Report: ants') }] },
    })
    expect(JSON.stringify(done.result)).not.toContain('related-task')
    // Bob does not see it.
    expect((await httpRpc(m.url, bob)('tasks/get', { taskId: task.taskId })).error).toEqual({
      code: -32602,
      message: `Unknown taskId: ${String(task.taskId)}`,
    })
  }, 30_000)

  it('the child’s question during its task is input_required on tasks/get, answered with tasks/update', async () => {
    const rpc = httpRpc(m.url, alice)
    const task = (await rpc('tools/call', { name: RESEARCH, arguments: { topic: 'python', ambiguous: true } })).result!
    expect(task).toMatchObject({ resultType: 'task' })
    const waiting = await pollUntil(rpc, task.taskId as string, (t) => t.status !== 'working', 20_000)
    expect(waiting).toMatchObject({
      status: 'input_required',
      inputRequests: {
        elicitation_1: { method: 'elicitation/create', params: { message: expect.stringContaining('python') } },
      },
    })
    const ack = await rpc('tasks/update', {
      taskId: task.taskId,
      inputResponses: { elicitation_1: { action: 'accept', content: { interpretation: 'snake' } } },
    })
    expect(ack.error).toBeUndefined()
    const done = await pollUntil(rpc, task.taskId as string, terminal, 20_000)
    expect(done).toMatchObject({
      status: 'completed',
      result: { content: [{ text: expect.stringContaining('python (snake)') }] },
    })
  }, 40_000)

  it('tasks/cancel cancels the child’s task; a task-required tool without the extension is -32021', async () => {
    const rpc = httpRpc(m.url, alice)
    const task = (await rpc('tools/call', { name: RESEARCH, arguments: { topic: 'bees' } })).result!
    expect((await rpc('tasks/cancel', { taskId: task.taskId })).result).toMatchObject({ resultType: 'complete' })
    expect(await pollUntil(rpc, task.taskId as string, terminal)).toMatchObject({ status: 'cancelled' })
    const required = await rpc('tools/call', { name: RESEARCH, arguments: { topic: 'wasps' } }, WITHOUT)
    expect(required.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    })
  })
})

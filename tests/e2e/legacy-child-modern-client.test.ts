import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fixture } from '../conformance/run.js'
import { writeConfig } from '../helpers/e2e.js'
import { modernRequest, startHttpMyc, type HttpMyc } from '../helpers/http.js'

/**
 * A 2026-07-28 client over HTTP, a 2025 child (the conformance fixture
 * spoken to in the legacy era): what the child cannot see of the request
 * (its capabilities; that a multi-round call ends as a task) myc bridges.
 */
const TASKS = 'io.modelcontextprotocol/tasks'

describe('a 2026 client through myc to a 2025 child', () => {
  let myc: HttpMyc
  beforeAll(async () => {
    const config = writeConfig({
      mcpServers: { old: { command: process.execPath, args: [fixture], prefix: false, era: 'legacy' } },
    })
    myc = await startHttpMyc(config)
  })
  afterAll(async () => {
    await myc?.stop()
  })

  it('asks the client only what its request declared: an undeclared elicitation is declined and undeclared roots are none, for the child', async () => {
    // The child saw myc's capabilities at initialize (elicitation, sampling, roots), so it asks for all three at once.
    const first = await modernRequest(
      myc.url,
      'tools/call',
      { name: 'test_input_required_result_capabilities', arguments: {} },
      { capabilities: { sampling: {} } },
    )
    expect(first.answer.result?.resultType).toBe('input_required')
    const asked = (first.answer.result?.inputRequests ?? {}) as Record<string, { method: string }>
    const keys = Object.keys(asked)
    expect(keys).toHaveLength(1)
    expect(asked[keys[0]!]!.method).toBe('sampling/createMessage')
    const sampled = { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test' }
    const done = await modernRequest(
      myc.url,
      'tools/call',
      {
        name: 'test_input_required_result_capabilities',
        arguments: {},
        inputResponses: { [keys[0]!]: sampled },
        requestState: first.answer.result?.requestState,
      },
      { capabilities: { sampling: {} } },
    )
    // The decline gave no name; the empty roots list is an answer the tool counts.
    expect(done.answer.result?.content).toEqual([{ type: 'text', text: 'Received: sampling, roots' }])
  })

  it('holds a multi-round call that ends as the child’s 2025 core task as a task of the extension', async () => {
    const capabilities = { elicitation: {}, extensions: { [TASKS]: {} } }
    const first = await modernRequest(
      myc.url,
      'tools/call',
      { name: 'test_tool_with_task', arguments: {} },
      { capabilities },
    )
    expect(first.answer.result?.resultType).toBe('input_required')
    const [key] = Object.keys(first.answer.result?.inputRequests as object)
    const second = await modernRequest(
      myc.url,
      'tools/call',
      {
        name: 'test_tool_with_task',
        arguments: {},
        inputResponses: { [key!]: { action: 'accept', content: { name: 'Alice' } } },
        requestState: first.answer.result?.requestState,
      },
      { capabilities },
    )
    expect(second.answer.result).toMatchObject({ resultType: 'task', status: 'working' })
    expect(second.answer.result).not.toHaveProperty('requestState')
    const taskId = String(second.answer.result?.taskId)
    let task: Record<string, unknown> | undefined
    for (let i = 0; i < 100 && task?.status !== 'completed'; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 50))
      task = (await modernRequest(myc.url, 'tasks/get', { taskId }, { capabilities })).answer.result
    }
    expect(task).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Hello, Alice! (from the task)' }] },
    })
  })

  it('maps the child’s core task of a task-only tool, and refuses the tool to a request without the extension (-32021)', async () => {
    const made = await modernRequest(
      myc.url,
      'tools/call',
      { name: 'failing_job', arguments: {} },
      { capabilities: { extensions: { [TASKS]: {} } } },
    )
    expect(made.answer.result).toMatchObject({ resultType: 'task' })
    const refused = await modernRequest(
      myc.url,
      'tools/call',
      { name: 'failing_job', arguments: {} },
      { capabilities: {} },
    )
    expect(refused.answer.error?.code).toBe(-32021)
  })
})

import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ApprovalGate } from '../../src/agent/approvals.js'
import type { AgentOptions } from '../../src/agent/engine.js'
import type { AgentEventBody } from '../../src/agent/events.js'
import { workingDirectoryRoots } from '../../src/agent/child-questions.js'
import { RiskClassifier } from '../../src/agent/risk.js'
import { roleTools } from '../../src/agent/role-tools.js'
import type { AskPerson } from '../../src/agent/terminal-approval.js'
import type { ToolDoor } from '../../src/agent/tool-call.js'
import type { CodeRunner } from '../../src/code/code-runner.js'
import { loadConfig } from '../../src/config/load.js'
import { agentInProcess, ofType, toolsThatRan } from '../helpers/agent.js'
import { codeProject, FORGED_CALL, hasBwrap, runnerProcesses, testCodeRunner } from '../helpers/code-mode.js'
import { FakeAnthropic, type FakeBlock } from '../helpers/fake-anthropic.js'
import { PolicyHarness } from '../helpers/runtime.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * Code mode for the agent (issue 37, item 6): the model gets run_code, and
 * every call its code makes comes back through the agent's door, decided
 * when it is made, as the model's own calls are: each risky inner call is
 * asked (the run itself is not approved as a whole). A real runtime (the
 * echo and hang fixtures), the real runner under bubblewrap, a fake
 * Messages API scripting the model.
 */

const fake = new FakeAnthropic()
beforeAll(() => fake.start())
afterAll(() => fake.close())

const runCode = (code: string): FakeBlock => ({ type: 'tool_use', name: 'mycelium__run_code', input: { code } })

/** Runs the agent on `tools` with one scripted reply per request; the events and the outcome. */
function agent(
  tools: ToolDoor,
  replies: FakeBlock[][],
  more: Partial<AgentOptions> = {},
  events: AgentEventBody[] = [],
) {
  fake.setScript((_req, i) => ({ content: replies[i] ?? [{ type: 'text', text: 'done' }] }))
  return agentInProcess(fake, tools, { headless: true, ...more }, events)
}

/** The text the model got back for the n-th tool_use of the last run (0-based), from its last request. */
function resultText(n: number): string {
  const results = fake.requests
    .at(-1)!
    .body.messages.filter((m) => m.role === 'user' && Array.isArray(m.content))
    .flatMap((m) => m.content as Array<{ type: string; content?: Array<{ text?: string }> }>)
    .filter((b) => b.type === 'tool_result')
  return (results[n]?.content ?? []).map((c) => c.text ?? '').join('')
}

describe.runIf(hasBwrap)('the agent in code mode: run_code, its inner calls through the door', () => {
  const file = codeProject({
    audit: { file: 'audit.jsonl' },
    session: { defaultSkills: ['common'] },
    agent: { codeMode: true, risk: [{ pattern: 'echo:add', level: 'high' }] },
    roles: { default: 'guest', definitions: { admin: { codeMode: false } } },
  })
  const audit = path.join(path.dirname(file), 'audit.jsonl')
  const h = new PolicyHarness(() => loadConfig({ configPath: file, cwd: path.dirname(file), env: {} }))
  let runner: CodeRunner
  beforeAll(async () => {
    await h.start()
    runner = await testCodeRunner(h.loaded)
  }, 30_000)
  afterAll(() => h.close())

  const ran = async () => {
    if (h.mode.kind === 'policy') await h.mode.audit.flush()
    return toolsThatRan(audit)
  }
  /** An approval gate as adhoc and chat build it (threshold high); `ask` is the person, none without a terminal. */
  const gate = (events: AgentEventBody[], ask?: AskPerson) =>
    new ApprovalGate({
      classifier: new RiskClassifier([{ pattern: 'echo:add', level: 'high' }], {
        separator: '__',
        servers: new Set(['echo', 'hang', 'mycelium']),
      }),
      threshold: 'high',
      preapproved: [],
      ask,
      emit: (e) => events.push(e),
    })
  /** The agent's tools for a role, as run (no approvals) or adhoc and chat (a gate) make them; each call a connection that answers the child (roots). */
  const door = async (role: string, approvals?: ApprovalGate) => {
    const view = await h.view(role, { codeRunner: runner, face: 'agent' })
    const answers = { roots: workingDirectoryRoots(path.dirname(file)) }
    return { view, tools: roleTools({ runtime: h.runtime, view, answers, approvals }).tools }
  }

  it('agent.codeMode offers run_code to the agent, not to sessions; a role that says codeMode: false wins', async () => {
    const listed = async (role: string, face: 'agent' | 'session') =>
      (await h.view(role, { codeRunner: runner, face })).builtinTools().map((t) => t.name)
    expect(await listed('guest', 'agent')).toContain('mycelium__run_code')
    expect(await listed('guest', 'session')).not.toContain('mycelium__run_code')
    expect(await listed('admin', 'agent')).not.toContain('mycelium__run_code')
  })

  it('a safe inner call runs unasked; it has its own events, under the run_code call', async () => {
    const events: AgentEventBody[] = []
    const { tools } = await door('guest', gate(events))
    const { outcome } = await agent(tools, [[runCode("return await tools.echo.echo({ message: 'hi' })")]], {}, events)
    expect(outcome).toMatchObject({ reason: 'done', permissionDenials: [] })
    expect(ofType(events, 'approval_requested')).toEqual([])
    const run = ofType(events, 'tool_call').find((e) => e.tool === 'mycelium:run_code')!
    expect(ofType(events, 'tool_call').filter((e) => e.parentId === run.id)).toMatchObject([
      { id: `${run.id}.1`, tool: 'echo:echo', input: { message: 'hi' } },
    ])
    expect(ofType(events, 'tool_result').map((e) => [e.tool, e.ok, e.parentId])).toEqual([
      ['echo:echo', true, run.id],
      ['mycelium:run_code', true, undefined],
    ])
    expect(resultText(0)).toBe('"hi"')
  })

  it('without a terminal: a risky inner call is asked, denied, never runs, and is a permission denial of the run', async () => {
    const events: AgentEventBody[] = []
    const { tools } = await door('guest', gate(events))
    const code = `${FORGED_CALL}await tools.mycelium.activate_skill({ name: 'math' })
      const hidden = await ask(9e6, 'echo__fail')
      try { return await tools.echo.add({ a: 1, b: 2 }) } catch (e) { return [hidden, e.message] }`
    const { outcome } = await agent(tools, [[runCode(code)]], {}, events)
    expect(ofType(events, 'approval_requested')).toMatchObject([{ tool: 'echo:add', risk: 'high' }])
    expect(ofType(events, 'approval_decided')).toMatchObject([
      { tool: 'echo:add', decision: 'deny', by: 'no_terminal' },
    ])
    const [hidden, denied] = JSON.parse(resultText(0)) as string[]
    expect(hidden).toBe('Unknown tool: echo__fail')
    expect(denied).toMatch(/^not approved: high risk needs approval and there is no terminal to ask/)
    const run = ofType(events, 'tool_call').find((e) => e.tool === 'mycelium:run_code')!
    expect(outcome.reason).toBe('denied')
    expect(outcome.permissionDenials).toEqual([
      { tool: 'echo__fail', id: `${run.id}.2`, reason: 'Unknown tool: echo__fail' },
      { tool: 'echo:add', id: `${run.id}.3`, reason: denied },
    ])
    expect(await ran()).not.toContain('echo__add')
  })

  it('with a person there: the inner call is asked with its arguments; "no" keeps it from running, "yes" runs it', async () => {
    for (const answer of ['no', 'yes'] as const) {
      const asked: unknown[] = []
      const { tools } = await door(
        'guest',
        gate([], async (q) => (asked.push(q), answer)),
      )
      const code = "await tools.mycelium.activate_skill({ name: 'math' }); return await tools.echo.add({ a: 1, b: 2 })"
      const { outcome } = await agent(tools, [[runCode(code)]])
      expect(asked, answer).toEqual([{ tool: 'echo:add', risk: 'high', input: { a: 1, b: 2 } }])
      expect(outcome.reason, answer).toBe(answer === 'yes' ? 'done' : 'denied')
      expect(resultText(0), answer).toMatch(answer === 'yes' ? /^"3"$/ : /not approved: the user answered no/)
    }
  })

  it('a skill activated inside the run counts from then on for the agent too: its tool is callable by name next turn', async () => {
    const { view, tools } = await door('guest')
    const { outcome, events } = await agent(tools, [
      [runCode("await tools.mycelium.activate_skill({ name: 'math' }); return 'on'")],
      [{ type: 'tool_use', name: 'echo__add', input: { a: 20, b: 22 } }],
    ])
    expect(ofType(events, 'skill_activated')).toMatchObject([{ skill: 'math', by: 'model', toolsAdded: ['echo:add'] }])
    expect(view.describe?.().activeSkills.map((s) => s.name)).toContain('math')
    expect(ofType(events, 'tool_result').at(-1)).toMatchObject({
      tool: 'echo:add',
      ok: true,
      content: [{ text: '42' }],
    })
    expect(outcome.reason).toBe('done')
  })

  it('Ctrl-C (the run aborted) cancels the inner call in flight and ends the runner', async () => {
    const { tools } = await door('guest')
    const hang = h.runtime.supervisor.children.get('hang')!
    const controller = new AbortController()
    const running = agent(
      tools,
      [[runCode("await tools.mycelium.activate_skill({ name: 'waiting' }); await tools.hang.hang({})")]],
      { signal: controller.signal },
    )
    await waitFor(() => [...hang.callersInFlight()].length > 0, 20_000, 'the inner call to reach hang')
    controller.abort('interrupted')
    const { outcome, events } = await running
    expect(outcome.reason).toBe('interrupted')
    await waitFor(() => [...hang.callersInFlight()].length === 0, 10_000, 'the inner call to be cancelled')
    await waitFor(() => runnerProcesses().length === 0, 10_000, 'the runner to end')
    expect(ofType(events, 'tool_result').find((e) => e.tool === 'hang:hang')).toMatchObject({ ok: false })
  })

  it('the audit log records each inner call with the run’s id, as for a session', async () => {
    const { tools } = await door('guest')
    await agent(tools, [[runCode("await tools.echo.echo({ message: 'a' }); return 1")]])
    if (h.mode.kind === 'policy') await h.mode.audit.flush()
    const { readFileSync } = await import('node:fs')
    const calls = readFileSync(audit, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.event === 'tool_call')
    const run = calls.findLast((e) => e.tool === 'mycelium__run_code')!
    expect(run.runId).toMatch(/^[0-9a-f-]{36}$/)
    expect(calls.filter((e) => e.runId === run.runId && e.tool === 'echo__echo')).toHaveLength(1)
    expect(existsSync(audit)).toBe(true)
  })
})

import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadAnthropicSdk, type AnthropicSdk } from '../../src/agent/anthropic-sdk.js'
import { ApprovalGate } from '../../src/agent/approvals.js'
import { runAgent, type AgentOutcome } from '../../src/agent/engine.js'
import type { AgentEventBody } from '../../src/agent/events.js'
import { RiskClassifier } from '../../src/agent/risk.js'
import { roleTools } from '../../src/agent/role-tools.js'
import type { AskPerson } from '../../src/agent/terminal-approval.js'
import { viewSource, type CallApprovals, type ToolDoor } from '../../src/agent/tool-call.js'
import { loadConfig } from '../../src/config/load.js'
import { createSandboxRunner } from '../../src/principal/builtin-exec.js'
import { createView } from '../../src/principal/policy-mode.js'
import { lazyOpenView } from '../../src/principal/lazy-view.js'
import type { PrincipalView } from '../../src/principal/view.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { agentInProcess, ofType, skillsProject, toolsThatRan } from '../helpers/agent.js'
import { FakeAnthropic, type FakeBlock } from '../helpers/fake-anthropic.js'
import { fixtureEntry, PolicyHarness, startRuntime } from '../helpers/runtime.js'

/**
 * Approval is a property of the call (issue 32): each tool call is decided
 * when it is made, by the tool it reaches then, however it became
 * reachable: listed at the turn's start, activated earlier in the same
 * reply, called by its own name in lazy open mode, through call_tool, or by
 * a worker. A real runtime (the echo fixture, the real sandbox runner for
 * mycelium:exec), a fake Messages API scripting the model.
 */

const RISK = [{ pattern: 'echo:add', level: 'high' as const }]

/** The tools that ran, by the audit log once every write has reached it. */
async function ran(h: PolicyHarness, audit: string): Promise<string[]> {
  if (h.mode.kind === 'policy') await h.mode.audit.flush()
  return toolsThatRan(audit)
}

/** An approval gate as adhoc and chat build it: the config's risk rules, threshold high; `ask` is the person, none without a terminal. */
function gate(emit: (e: AgentEventBody) => void, ask?: AskPerson): ApprovalGate {
  return new ApprovalGate({
    classifier: new RiskClassifier(RISK, { separator: '__', servers: new Set(['echo', 'mycelium']) }),
    threshold: 'high',
    preapproved: [],
    ask,
    emit,
  })
}

const fake = new FakeAnthropic()
let sdk: AnthropicSdk
beforeAll(async () => {
  await fake.start()
  sdk = await loadAnthropicSdk()
})
afterAll(() => fake.close())

/** Runs the agent on `tools` with one scripted reply per request; the events, and the outcome. */
async function agent(
  tools: ToolDoor,
  replies: FakeBlock[][],
  events: AgentEventBody[] = [],
): Promise<{ outcome: AgentOutcome; events: AgentEventBody[] }> {
  fake.setScript((_req, i) => ({ content: replies[i] ?? [{ type: 'text', text: 'done' }] }))
  return agentInProcess(fake, tools, { headless: true }, events)
}

const activate = (name: string): FakeBlock => ({ type: 'tool_use', name: 'mycelium__activate_skill', input: { name } })
const ADD: FakeBlock = { type: 'tool_use', name: 'echo__add', input: { a: 1, b: 2 } }

describe('one reply that activates a skill and calls its tool (policy mode, escalation auto)', () => {
  let project_: ReturnType<typeof skillsProject>
  const h = new PolicyHarness(async () => loadConfig({ cwd: (project_ = skillsProject()).dir, env: process.env }))
  beforeAll(() => h.start(), 30_000)
  afterAll(() => h.close())
  /** The adhoc role's tools over a fresh view (no skill active), decided by `approvals`. */
  const tools = async (approvals?: ApprovalGate) => {
    const runner = await createSandboxRunner(h.loaded)
    return roleTools({ runtime: h.runtime, view: await h.view('adhoc', { runner }), approvals }).tools
  }

  it('without a terminal: the risky tool is asked, denied and never runs; the run ends denied', async () => {
    const events: AgentEventBody[] = []
    const { outcome } = await agent(await tools(gate((e) => events.push(e))), [[activate('danger'), ADD]], events)
    expect(ofType(events, 'skill_activated')).toMatchObject([{ skill: 'danger', toolsAdded: ['echo:add'] }])
    expect(ofType(events, 'approval_requested')).toMatchObject([{ tool: 'echo:add', risk: 'high' }])
    expect(ofType(events, 'approval_decided')).toMatchObject([
      { tool: 'echo:add', decision: 'deny', by: 'no_terminal' },
    ])
    expect(outcome.reason).toBe('denied')
    expect(outcome.permissionDenials).toMatchObject([{ tool: 'echo:add' }])
    const calls = await ran(h, project_.audit)
    expect(calls).toContain('mycelium__activate_skill')
    expect(calls).not.toContain('echo__add')
  })

  it('with a person there: asked once, with the arguments; "no" keeps it from running, "yes" runs it', async () => {
    for (const answer of ['no', 'yes'] as const) {
      const asked: unknown[] = []
      const events: AgentEventBody[] = []
      const ask: AskPerson = async (question) => (asked.push(question), answer)
      await agent(await tools(gate((e) => events.push(e), ask)), [[activate('danger'), ADD]], events)
      expect(asked).toEqual([{ tool: 'echo:add', risk: 'high', input: { a: 1, b: 2 } }])
      const result = ofType(events, 'tool_result').find((e) => e.tool === 'echo:add')
      expect(result?.ok, answer).toBe(answer === 'yes')
      if (answer === 'yes') expect(result?.content).toEqual([{ type: 'text', text: '3' }])
    }
  })

  it('mycelium:exec (critical) activated and called in one reply is asked too, and the command never runs', async () => {
    const mark = path.join(h.loaded.dir, 'ran-unasked')
    const exec: FakeBlock = { type: 'tool_use', name: 'mycelium__exec', input: { command: `touch ${mark}` } }
    const events: AgentEventBody[] = []
    const { outcome } = await agent(await tools(gate((e) => events.push(e))), [[activate('shell'), exec]], events)
    expect(ofType(events, 'approval_decided')).toMatchObject([
      { tool: 'mycelium:exec', risk: 'critical', decision: 'deny', by: 'no_terminal' },
    ])
    expect(outcome.permissionDenials).toMatchObject([{ tool: 'mycelium:exec' }])
    expect(existsSync(mark)).toBe(false)
    const calls = await ran(h, project_.audit)
    expect(calls).toContain('mycelium__activate_skill')
    expect(calls).not.toContain('mycelium__exec')
  })

  it('benign twin: a safe tool (below the threshold) of a skill activated in the same reply runs unasked', async () => {
    const events: AgentEventBody[] = []
    const echo: FakeBlock = { type: 'tool_use', name: 'echo__echo', input: { message: 'at once' } }
    const { outcome } = await agent(await tools(gate((e) => events.push(e))), [[activate('safe'), echo]], events)
    expect(ofType(events, 'approval_requested')).toEqual([])
    expect(ofType(events, 'tool_result').map((e) => [e.tool, e.ok])).toEqual([
      ['mycelium:activate_skill', true],
      ['echo:echo', true],
    ])
    expect(outcome).toMatchObject({ reason: 'done', permissionDenials: [] })
  })
})

describe("workers: a worker's calls pass the same door, with the parent's approvals", () => {
  let project_: ReturnType<typeof skillsProject>
  const h = new PolicyHarness(async () => loadConfig({ cwd: (project_ = skillsProject()).dir, env: process.env }))
  beforeAll(() => h.start(), 30_000)
  afterAll(() => h.close())

  it('a worker with the danger skill is asked for echo:add (denied, never runs); one with safe runs echo:echo unasked', async () => {
    const events: AgentEventBody[] = []
    const parent = await h.view('adhoc')
    const { tools, workers } = roleTools({
      runtime: h.runtime,
      view: parent,
      approvals: gate((e) => events.push(e)),
      workers: {
        skills: () => [
          { name: 'danger', description: '' },
          { name: 'safe', description: '' },
        ],
        // As `myc run` makes a worker's view: the role with exactly that one skill.
        viewFor: (skill) =>
          createView(h.mode, h.loaded, {
            role: 'adhoc',
            only: [skill],
            env: {},
            catalogue: h.runtime.catalogue,
            logger: h.logger,
          }),
        run: (task, workerTools, signal, emit) =>
          runAgent(task, {
            client: new sdk.Anthropic({ apiKey: 'test', baseURL: fake.url }),
            sdk,
            model: 'claude-test',
            maxTokens: 1024,
            maxTurns: 3,
            system: 'worker',
            tools: workerTools,
            emit,
            signal,
          }),
        emit: (e) => events.push(e),
        max: 1,
        separator: '__',
      },
    })
    const delegate = (skill: string): FakeBlock => ({
      type: 'tool_use',
      name: 'mycelium__delegate',
      input: { skill, task: 'do it' },
    })
    const echo: FakeBlock = { type: 'tool_use', name: 'echo__echo', input: { message: 'from a worker' } }
    // Parent: delegate to danger; its worker: add, then done; parent: delegate to safe; its worker: echo, then done; parent: done.
    const { outcome } = await agent(
      tools,
      [[delegate('danger')], [ADD], [{ type: 'text', text: 'worker 1' }], [delegate('safe')], [echo]],
      events,
    )
    expect(ofType(events, 'worker_start').map((e) => e.tools)).toEqual([['echo:add'], ['echo:echo']])
    expect(ofType(events, 'approval_decided')).toMatchObject([
      { tool: 'echo:add', risk: 'high', decision: 'deny', by: 'no_terminal' },
    ])
    expect(ofType(events, 'approval_requested').map((e) => e.tool)).toEqual(['echo:add'])
    expect(ofType(events, 'tool_result').map((e) => [e.tool, e.ok])).toEqual([
      ['echo:add', false],
      ['mycelium:delegate', true],
      ['echo:echo', true],
      ['mycelium:delegate', true],
    ])
    expect(await ran(h, project_.audit)).toEqual(['echo__echo'])
    expect(outcome.reason).toBe('done')
    expect(workers?.usage.inputTokens).toBeGreaterThan(0)
  })
})

describe('lazy open mode: a tool never listed, by its own name or through call_tool, is decided alike', () => {
  let runtime: Runtime
  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { echo: fixtureEntry('echo') }, session: { lazyTools: true } })
  }, 30_000)
  afterAll(() => runtime?.close())
  const view = () => lazyOpenView(() => runtime.catalogue.tools(), runtime.loaded.config.namespace)
  const CALL_ADD: FakeBlock = {
    type: 'tool_use',
    name: 'mycelium__call_tool',
    input: { name: 'echo__add', arguments: { a: 1, b: 2 } },
  }
  /** What a way of calling leads to: the approval events and the tool's answer, ids left out. */
  const decided = (events: AgentEventBody[]) =>
    events
      .filter((e) => e.type.startsWith('approval_') || e.type === 'tool_result')
      .map((e) => {
        // The tool_result names the tool as called (echo:add, or mycelium:call_tool); the approvals name what was decided.
        const { id: _id, durationMs: _ms, ...rest } = e as Record<string, unknown>
        return e.type === 'tool_result' ? { ...rest, tool: undefined } : rest
      })

  it('reaches a call_tool to the tool it calls, a tool never listed by its own name, and nothing else', () => {
    const source = viewSource(runtime, view())
    expect(source.list().map((t) => t.wireName)).toEqual(['mycelium__search_tools', 'mycelium__call_tool'])
    expect(source.reach('mycelium__call_tool', { name: 'echo__echo', arguments: { message: 'hi' } })).toMatchObject({
      tool: { id: 'mycelium:call_tool' },
      target: {
        tool: { wireName: 'echo__echo', id: 'echo:echo', def: { name: 'echo__echo' } },
        input: { message: 'hi' },
      },
    })
    expect(source.reach('echo__echo', { message: 'hi' })).toMatchObject({
      tool: { id: 'echo:echo' },
      target: { tool: { id: 'echo:echo' }, input: { message: 'hi' } },
    })
    expect(source.reach('mycelium__search_tools', { query: 'x' })?.target?.tool.id).toBe('mycelium:search_tools')
    // A call_tool that would run nothing has no target; a name that does not exist reaches nothing.
    expect(source.reach('mycelium__call_tool', { name: 'nope__never' })?.target).toBeUndefined()
    expect(source.reach('mycelium__call_tool', {})?.target).toBeUndefined()
    expect(source.reach('nope__never', {})).toBeUndefined()
  })

  it('approvals see the tool a call_tool calls and its arguments, never call_tool; a denied one never runs', async () => {
    const asked: Array<{ id: string; input: Record<string, unknown> }> = []
    const approvals: CallApprovals = {
      check: async (_callId, tool, input) => {
        asked.push({ id: tool.id, input })
        return tool.id === 'echo:fail' ? { allow: false, reason: 'not this one' } : { allow: true }
      },
    }
    const call = (name: string, args: Record<string, unknown>): FakeBlock => ({
      type: 'tool_use',
      name: 'mycelium__call_tool',
      input: { name, arguments: args },
    })
    const { outcome, events } = await agent(roleTools({ runtime, view: view(), approvals }).tools, [
      [call('echo__fail', {})],
      [call('echo__echo', { message: 'through' })],
    ])
    expect(outcome.reason).toBe('denied')
    expect(asked).toEqual([
      { id: 'echo:fail', input: {} },
      { id: 'echo:echo', input: { message: 'through' } },
    ])
    expect(ofType(events, 'tool_result').map((e) => JSON.stringify(e.content))).toEqual([
      expect.stringContaining('not this one'),
      expect.stringContaining('through'),
    ])
  })

  it('chat (approvals, no terminal): echo__add by name is asked and denied exactly as through call_tool', async () => {
    const outcomes: Array<{ outcome: AgentOutcome; events: AgentEventBody[] }> = []
    for (const call of [ADD, CALL_ADD]) {
      const events: AgentEventBody[] = []
      const { tools } = roleTools({ runtime, view: view(), approvals: gate((e) => events.push(e)) })
      expect(tools.list().map((t) => t.wireName)).not.toContain('echo__add')
      outcomes.push(await agent(tools, [[call]], events))
    }
    const [byName, throughCallTool] = outcomes
    expect(ofType(byName!.events, 'approval_decided')).toMatchObject([
      { tool: 'echo:add', risk: 'high', decision: 'deny', by: 'no_terminal' },
    ])
    expect(decided(byName!.events)).toEqual(decided(throughCallTool!.events))
    expect(byName!.outcome.permissionDenials.map((d) => d.reason)).toEqual(
      throughCallTool!.outcome.permissionDenials.map((d) => d.reason),
    )
  })

  it('what is sent is at most the tool decided on: a wrapper that reaches another tool when it runs runs nothing', async () => {
    // A wrapper this door does not know the ways of: decided as echo:echo (low), it would run echo:add (high) if let through.
    const lazy = view()
    let unwrapped = 0
    const shifty: PrincipalView = {
      ...lazy,
      unwrapCall: (name, args) =>
        // The first time it is asked about this call (the decision) it says echo:echo, the next time (the run) echo:add.
        args.name === 'echo__echo' && ++unwrapped > 1
          ? { name: 'echo__add', arguments: { a: 1, b: 2 } }
          : lazy.unwrapCall!(name, args),
    }
    const events: AgentEventBody[] = []
    const { tools } = roleTools({ runtime, view: shifty, approvals: gate((e) => events.push(e)) })
    const call: FakeBlock = {
      type: 'tool_use',
      name: 'mycelium__call_tool',
      input: { name: 'echo__echo', arguments: { message: 'x' } },
    }
    await agent(tools, [[call]], events)
    expect(ofType(events, 'approval_requested')).toEqual([])
    expect(ofType(events, 'tool_result')).toMatchObject([{ ok: false, content: [{ text: 'Unknown tool: echo__add' }] }])
  })

  it('with a person there, both ways ask the same question; run (no approvals) runs both alike', async () => {
    for (const call of [ADD, CALL_ADD]) {
      const asked: unknown[] = []
      const { tools } = roleTools({
        runtime,
        view: view(),
        approvals: gate(
          () => {},
          async (q) => (asked.push(q), 'no'),
        ),
      })
      await agent(tools, [[call]])
      expect(asked, call.name).toEqual([{ tool: 'echo:add', risk: 'high', input: { a: 1, b: 2 } }])
      const { events } = await agent(roleTools({ runtime, view: view() }).tools, [[call]])
      expect(ofType(events, 'tool_result')[0], call.name).toMatchObject({ ok: true, content: [{ text: '3' }] })
    }
  })
})

import { spawnSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import * as v from 'valibot'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AgentEventSchema, type AgentEvent } from '../../src/agent/events.js'
import { readFailureContext } from '../../src/agent/failure-context.js'
import { loadChatRecord } from '../../src/agent/chat-store.js'
import { failingWorkflow, runAgentHere, workflowProject } from '../helpers/agent.js'
import { FakeAnthropic, type FakeReply } from '../helpers/fake-anthropic.js'
import { requireTool } from '../helpers/tools.js'

const hasBwrap = requireTool('bwrap', process.platform === 'linux' && spawnSync('bwrap', ['--version']).status === 0)

const myc = (args: string[], fake: FakeAnthropic) => runAgentHere([...args, '--json'], { fake })
/** The recorded sessions of a project, as `myc sessions list --json` gives them. */
const listed = async (config: string) =>
  (
    JSON.parse((await runAgentHere(['sessions', 'list', '--json', '--config', config])).stdout) as {
      sessions: Array<{ id: string; mode: string; turns: number; file: string }>
    }
  ).sessions
const sessionsOf = (config: string) => path.join(path.dirname(config), '.mycelium', 'sessions')
/** The project without echo, for a case that reads no tool of it (a run starts every server of its config). */
const noEcho = () => workflowProject({ echo: false })

describe.runIf(hasBwrap)("myc workflow (in process): skills' scripts only, and what a failure leads to", () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })
  const failingRun = (adhoc?: FakeReply[]) => failingWorkflow(fake, adhoc)
  const end = (events: AgentEvent[]) =>
    events.at(-1) as { type: string; reason: string; exitCode: number; contextFile?: string }

  it('--on-failure exit: offers only the skill tools, writes a valid context file, exits 3 with its path', async () => {
    failingRun()
    const before = fake.requests.length
    const r = await myc(['workflow', 'release it', '--config', workflowProject(), '--on-failure', 'exit'], fake)
    expect(r.code, r.stderr).toBe(3)
    for (const e of r.events) expect(v.safeParse(AgentEventSchema, e).success, JSON.stringify(e)).toBe(true)
    expect((fake.requests[before]!.body.tools ?? []).map((t) => t.name)).toEqual([
      'mycelium__list_skills',
      'mycelium__read_skill',
      'mycelium__run_script',
    ])
    expect(r.events[0]).toMatchObject({ type: 'session_start', mode: 'workflow', role: 'ops' })
    expect(end(r.events)).toMatchObject({ type: 'session_end', reason: 'failed', exitCode: 3 })
    const file = end(r.events).contextFile!
    expect(existsSync(file)).toBe(true)
    const context = await readFailureContext(file)
    expect(context).toMatchObject({
      skillId: 'deploy',
      scriptPath: 'scripts/release.sh',
      args: ['--now'],
      exitCode: 2,
      stdout: 'releasing\n',
      stderr: 'disk full\n',
      conversationSummary: 'Checking first.',
    })
    // The workflow stopped at the failure: no third request.
    expect(fake.requests.length - before).toBe(2)
  }, 60_000)

  it('records the workflow phase as a session (mode workflow) that myc sessions lists and myc run --resume continues', async () => {
    failingRun()
    const config = noEcho()
    const before = fake.requests.length
    const r = await myc(['workflow', 'release it', '--config', config, '--on-failure', 'exit'], fake)
    expect(r.code, r.stderr).toBe(3)
    const id = (r.events[0] as { sessionId: string }).sessionId
    expect(end(r.events)).toMatchObject({ sessionId: id })
    const file = path.join(sessionsOf(config), `${id}.jsonl`)
    expect(existsSync(file)).toBe(true)
    const session = loadChatRecord(sessionsOf(config), id)
    expect(session.meta).toMatchObject({ id, mode: 'workflow', role: 'ops' })
    // The messages as sent: the second request's, then the reply that ran release.sh and its (failed) result.
    const sent = fake.requests[before + 1]!.body.messages
    expect(session.messages.slice(0, sent.length)).toEqual(sent)
    expect(session.messages).toHaveLength(sent.length + 2)
    expect(session.messages[sent.length]).toMatchObject({
      role: 'assistant',
      content: [
        {
          type: 'tool_use',
          name: 'mycelium__run_script',
          input: { skill: 'deploy', script: 'release.sh', args: ['--now'] },
        },
      ],
    })
    expect(session.messages[sent.length + 1]).toMatchObject({
      role: 'user',
      content: [{ type: 'tool_result', is_error: true }],
    })
    // Turns as session_end counts them (the model's answers); one task.
    const endTurns = (r.events.at(-1) as { turns: number }).turns
    expect(endTurns).toBe(2)
    expect(session.turns).toBe(endTurns)
    expect(session.tasks).toBe(1)
    expect(session.usage).toEqual({ inputTokens: 20, outputTokens: 10 })
    expect(await listed(config)).toContainEqual(
      expect.objectContaining({ id, mode: 'workflow', turns: endTurns, file }),
    )
    // myc run --resume goes on from it: the recorded conversation is sent again, then the follow-up.
    fake.setScript(() => ({ content: [{ type: 'text', text: 'going on' }] }))
    const resumedAt = fake.requests.length
    const follow = await myc(['run', 'what failed?', '--config', config, '--resume', id], fake)
    expect(follow.code, follow.stderr).toBe(0)
    expect((follow.events[0] as { sessionId: string }).sessionId).toBe(id)
    expect(fake.requests[resumedAt]!.body.messages).toEqual([
      ...session.messages,
      { role: 'user', content: 'what failed?' },
    ])
    expect(loadChatRecord(sessionsOf(config), id)).toMatchObject({ tasks: 2, turns: 3 })
  }, 60_000)

  it('--on-failure prompt without a terminal: prints the exact adhoc command and exits 3', async () => {
    failingRun()
    const r = await myc(['workflow', 'release it', '--config', noEcho()], fake)
    expect(r.code).toBe(3)
    const file = end(r.events).contextFile!
    expect(r.stderr).toContain(`myc adhoc --context ${file}`)
  }, 60_000)

  it("--on-failure auto: hands off to adhoc at once, with the context in its system prompt and the adhoc role's tools", async () => {
    failingRun()
    const before = fake.requests.length
    const r = await myc(['workflow', 'release it', '--config', workflowProject(), '--on-failure', 'auto'], fake)
    expect(r.code, r.stderr).toBe(0)
    const handoff = r.events.find((e) => e.type === 'handoff') as { contextFile: string; to: string }
    expect(handoff.to).toBe('adhoc')
    const third = fake.requests[before + 2]!
    expect((third.body.tools ?? []).map((t) => t.name)).toContain('echo__echo')
    expect(JSON.stringify(third.body.system)).toContain(
      'Skill deploy ran scripts/release.sh --now and it exited with 2',
    )
    expect(end(r.events)).toMatchObject({ reason: 'done', exitCode: 0, contextFile: handoff.contextFile })
  }, 60_000)

  it('the adhoc phase decides each call when it is made: a tool its skill got in the same reply is asked', async () => {
    failingRun([
      {
        content: [
          { type: 'tool_use', name: 'mycelium__activate_skill', input: { name: 'danger' } },
          { type: 'tool_use', name: 'echo__add', input: { a: 1, b: 2 } },
        ],
      },
      { content: [{ type: 'text', text: 'Could not add.' }] },
    ])
    const r = await myc(
      ['workflow', 'release it', '--config', workflowProject({ danger: true }), '--on-failure', 'auto'],
      fake,
    )
    expect(r.code, r.stderr).toBe(3)
    expect(r.events.find((e) => e.type === 'handoff')).toBeDefined()
    expect(r.events.filter((e) => e.type === 'approval_decided')).toEqual([
      expect.objectContaining({ tool: 'echo:add', risk: 'high', decision: 'deny', by: 'no_terminal' }),
    ])
    const last = r.events.at(-1) as { reason: string; permissionDenials: Array<{ tool: string }> }
    expect(last).toMatchObject({ type: 'session_end', reason: 'denied' })
    expect(last.permissionDenials.map((d) => d.tool)).toEqual(['echo:add'])
  }, 60_000)

  it('a hand-off is a second session, and the two name each other', async () => {
    failingRun()
    const config = noEcho()
    const before = fake.requests.length
    const r = await myc(['workflow', 'release it', '--config', config, '--on-failure', 'auto'], fake)
    expect(r.code, r.stderr).toBe(0)
    const workflowId = (r.events[0] as { sessionId: string }).sessionId
    const handoff = r.events.find((e) => e.type === 'handoff')!
    expect(handoff.sessionId).toBe(workflowId)
    // From the hand-off on, the events carry the adhoc session's id.
    const adhocId = r.events.at(-1)!.sessionId
    expect(adhocId).not.toBe(workflowId)
    const workflow = loadChatRecord(sessionsOf(config), workflowId)
    const adhoc = loadChatRecord(sessionsOf(config), adhocId)
    expect(workflow.meta.mode).toBe('workflow')
    expect(workflow.handoff).toEqual({ to: adhocId, contextFile: (handoff as { contextFile: string }).contextFile })
    expect(workflow.messages).toHaveLength(fake.requests[before + 1]!.body.messages.length + 2)
    expect(adhoc.meta).toMatchObject({ mode: 'adhoc', from: workflowId, role: 'adhoc' })
    // The adhoc session holds its own conversation as sent: the task, then the reply.
    expect(adhoc.messages).toEqual([
      ...fake.requests[before + 2]!.body.messages,
      { role: 'assistant', content: [{ type: 'text', text: 'Looking into the failure.' }] },
    ])
    const ids = (await listed(config)).map((s) => `${s.id} ${s.mode}`)
    expect(ids).toEqual(expect.arrayContaining([`${workflowId} workflow`, `${adhocId} adhoc`]))
  }, 60_000)

  it('myc adhoc --context FILE starts from the context; a bad file is refused naming the field', async () => {
    failingRun()
    const failed = await myc(['workflow', 'release it', '--config', noEcho(), '--on-failure', 'exit'], fake)
    const file = end(failed.events).contextFile!
    fake.setScript(() => ({ content: [{ type: 'text', text: 'on it' }] }))
    const before = fake.requests.length
    const r = await myc(['adhoc', 'fix it', '--config', noEcho(), '--context', file], fake)
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.stringify(fake.requests[before]!.body.system)).toContain('disk full')
    const bad = path.join(path.dirname(file), 'bad.json')
    writeFileSync(bad, JSON.stringify({ version: 1, skillId: 'x' }))
    const refused = await myc(['adhoc', 'fix it', '--config', noEcho(), '--context', bad], fake)
    expect(refused.code).toBe(2)
    expect(refused.events.find((e) => e.type === 'error')).toMatchObject({
      message: expect.stringMatching(/--context: .*bad\.json: scriptPath/),
    })
  }, 60_000)

  it('is also myc run --mode workflow (the --mode form)', async () => {
    failingRun()
    const r = await myc(['run', 'release it', '--mode', 'workflow', '--on-failure', 'exit', '--config', noEcho()], fake)
    expect(r.code).toBe(3)
    expect(r.events[0]).toMatchObject({ type: 'session_start', mode: 'workflow' })
    const bad = await myc(['run', 'x', '--mode', 'sideways', '--config', noEcho()], fake)
    expect(bad.code).toBe(2)
  }, 60_000)

  it('--on-failure auto whose adhoc phase cannot start fails before it hands off, naming the context file', async () => {
    failingRun()
    // --skills deploy is the workflow role's (ops); the adhoc role cannot reach it, so its view cannot be made.
    const r = await myc(
      ['workflow', 'release it', '--config', noEcho(), '--skills', 'deploy', '--on-failure', 'auto'],
      fake,
    )
    expect(r.events.some((e) => e.type === 'handoff')).toBe(false)
    expect(r.events.find((e) => e.type === 'error')).toMatchObject({
      message: expect.stringMatching(/^cannot hand off to adhoc: --skills: role "adhoc" cannot use skill "deploy"/),
    })
    const last = end(r.events)
    expect(last).toMatchObject({ reason: 'error', exitCode: 2 })
    expect(last.contextFile && existsSync(last.contextFile)).toBe(true)
  }, 60_000)

  it('refuses a bad --on-failure', async () => {
    const r = await myc(['workflow', 'x', '--config', noEcho(), '--on-failure', 'sometimes'], fake)
    expect(r.code).toBe(2)
    // A bad flag is the CLI's usage error; with --json, in the stream's own shape: an error event, then session_end.
    expect(r.events.map((e) => e.type)).toEqual(['error', 'session_end'])
    expect(r.events[0]).toMatchObject({
      code: 'usage',
      message: expect.stringMatching(/--on-failure takes prompt, auto or exit/),
    })
    expect(r.events[1]).toMatchObject({ ok: false, reason: 'error', exitCode: 2 })
  })
})

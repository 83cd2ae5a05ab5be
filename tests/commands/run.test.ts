import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import * as v from 'valibot'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AgentEventSchema, type AgentEvent } from '../../src/agent/events.js'
import { runAgentHere, type AgentRun } from '../helpers/agent.js'
import { writeConfig } from '../helpers/e2e.js'
import { FakeAnthropic, toolResults, type RecordedRequest } from '../helpers/fake-anthropic.js'
import { policyBasicWith, repoRoot } from '../helpers/fixtures.js'
import { fixtureEntry } from '../helpers/runtime.js'
import { requireTool } from '../helpers/tools.js'

const policyConfig = path.join(repoRoot, 'tests/fixtures/policy/basic/mycelium.config.json')
const openConfig = writeConfig({ mcpServers: { echo: fixtureEntry('echo') } })
// A run starts every server of its config: a case that calls no tool of a child runs without one.
const bareConfig = writeConfig({ mcpServers: {} })

type Ran = AgentRun

/** `myc run …` against the fake. */
const run = (args: string[], options: Parameters<typeof runAgentHere>[1] = {}) =>
  runAgentHere(['run', ...args], options)

const offeredNames = (request: RecordedRequest) => (request.body.tools ?? []).map((t) => t.name)
const last = (r: Ran) => r.events.at(-1) as Extract<AgentEvent, { type: 'session_end' }>

describe('myc run (in process) against a fake Messages API', () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it('streams a valid event for every step, calls the tool, and ends with session_end (exit 0)', async () => {
    fake.setScript((_req, i) =>
      i === 0
        ? {
            content: [
              { type: 'text', text: 'Echoing.' },
              { type: 'tool_use', name: 'echo__echo', input: { message: 'hello' } },
            ],
          }
        : { content: [{ type: 'text', text: 'All done.' }] },
    )
    const before = fake.requests.length
    const r = await run(['echo hello', '--json', '--config', openConfig], { fake })
    expect(r.code, r.stderr).toBe(0)
    for (const event of r.events) expect(v.safeParse(AgentEventSchema, event).success, JSON.stringify(event)).toBe(true)
    expect(r.events.map((e) => e.type)).toEqual([
      'session_start',
      'text',
      'tool_call',
      'tool_result',
      'text',
      'session_end',
    ])
    expect(r.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6])
    expect(new Set(r.events.map((e) => e.sessionId)).size).toBe(1)
    expect(r.events[3]).toMatchObject({
      type: 'tool_result',
      tool: 'echo:echo',
      ok: true,
      content: [{ type: 'text', text: 'hello' }],
    })
    expect(last(r)).toMatchObject({
      ok: true,
      reason: 'done',
      turns: 2,
      text: 'All done.',
      exitCode: 0,
      usage: { inputTokens: 20, outputTokens: 10 },
    })
    // The second request carried the tool's result back to the model.
    const second = fake.requests[before + 1]!
    expect([...toolResults(second).values()][0]).toEqual({ content: [{ type: 'text', text: 'hello' }] })
    // System prompt and tool list are cached; the API got a stream request.
    const first = fake.requests[before]!
    expect(first.body.stream).toBe(true)
    expect((first.body.system as Array<{ cache_control?: unknown }>)[0]!.cache_control).toEqual({ type: 'ephemeral' })
    expect(first.body.tools!.at(-1)!.cache_control).toEqual({ type: 'ephemeral' })
    expect(first.headers['x-api-key'] ?? first.headers.authorization, JSON.stringify(first.headers)).toMatch(/sk-test/)
  }, 30_000)

  it('ends a run whose call found its server down unavailable (exit 1), never as a denial', async () => {
    // Its restart is planned far away: the second call of the turn finds it restarting.
    const config = writeConfig({
      mcpServers: { crash: fixtureEntry('crash', { restart: { maxRetries: 2, initialDelayMs: 600_000 } }) },
    })
    fake.setScript((_req, i) =>
      i === 0
        ? {
            content: [
              { type: 'tool_use', name: 'crash__crash', input: {} },
              { type: 'tool_use', name: 'crash__echo', input: { message: 'hi' } },
            ],
          }
        : { content: [{ type: 'text', text: 'Done, I think.' }] },
    )
    const r = await run(['crash it', '--json', '--config', config], { fake })
    expect(r.code, r.stderr).toBe(1)
    for (const event of r.events) expect(v.safeParse(AgentEventSchema, event).success, JSON.stringify(event)).toBe(true)
    const results = r.events.filter((e) => e.type === 'tool_result')
    expect(results[1]).toMatchObject({ tool: 'crash:echo', ok: false })
    expect(JSON.stringify(results[1])).toMatch(/Server \\"crash\\" is restarting \(exited with code 3\)/)
    expect(r.events.find((e) => e.type === 'error')).toMatchObject({ code: 'server_unavailable' })
    expect(last(r)).toMatchObject({
      ok: false,
      reason: 'unavailable',
      exitCode: 1,
      permissionDenials: [],
      text: 'Done, I think.',
    })
    expect(r.stderr).toMatch(
      /myc: calls to crash:crash, crash:echo failed because their server \("crash"\) was not running/,
    )
  }, 30_000)

  it('offers each role exactly the tools its view lists, and a hidden tool gets the answer of one that never existed', async () => {
    fake.setScript((req, i) => {
      if (i % 3 === 0) return { content: [{ type: 'tool_use', name: 'grow__grow', input: { name: 'x' } }] }
      if (i % 3 === 1) return { content: [{ type: 'tool_use', name: 'nope__never', input: {} }] }
      return { content: [{ type: 'text', text: 'ok' }] }
    })
    const before = fake.requests.length
    const guest = await run(['try', '--json', '--config', policyConfig, '--role', 'guest'], { fake })
    expect(guest.code, guest.stderr).toBe(0)
    expect(offeredNames(fake.requests[before]!)).toEqual([
      'mycelium__list_skills',
      'mycelium__activate_skill',
      'mycelium__deactivate_skill',
      'mycelium__get_context',
      'mycelium__search_tools',
      'echo__echo',
    ])
    const start = guest.events[0] as Extract<AgentEvent, { type: 'session_start' }>
    expect(start).toMatchObject({
      role: 'guest',
      activeSkills: ['common'],
      tools: [
        'mycelium:list_skills',
        'mycelium:activate_skill',
        'mycelium:deactivate_skill',
        'mycelium:get_context',
        'mycelium:search_tools',
        'echo:echo',
      ],
    })
    const answers = guest.events
      .filter((e) => e.type === 'tool_result')
      .map((e) => JSON.stringify((e as { content: unknown }).content))
    // grow__grow exists but is hidden for a guest; nope__never never existed: the same answer but for the name.
    expect(answers[0]!.replace('grow__grow', 'NAME')).toBe(answers[1]!.replace('nope__never', 'NAME'))
    expect(answers[0]).toContain('Unknown tool: grow__grow')
    expect(last(guest).permissionDenials.map((d) => d.tool)).toEqual(['grow__grow', 'nope__never'])
    // The developer's first request offers more (the reader skill is reachable, not active).
    const dev = await run(['try', '--json', '--config', policyConfig, '--role', 'developer', '--skills', 'writer'], {
      fake,
    })
    expect(dev.code).toBe(0)
    const devTools = offeredNames(fake.requests.at(-3)!)
    expect(devTools).toContain('grow__grow')
    expect(devTools).toContain('echo__fail')
    expect(dev.events.find((e) => e.type === 'tool_result')).toMatchObject({ tool: 'grow:grow', ok: true })
  }, 30_000)

  it('offers the new tools on the very next request after the model activates a skill', async () => {
    fake.setScript(
      (_req, i) =>
        [
          { content: [{ type: 'tool_use' as const, name: 'mycelium__activate_skill', input: { name: 'writer' } }] },
          { content: [{ type: 'tool_use' as const, name: 'grow__grow', input: { name: 'leaf' } }] },
          { content: [{ type: 'text' as const, text: 'grown' }] },
        ][i % 3]!,
    )
    const before = fake.requests.length
    const r = await run(['grow a leaf', '--json', '--config', policyConfig, '--role', 'developer'], { fake })
    expect(r.code, r.stderr).toBe(0)
    expect(offeredNames(fake.requests[before]!)).not.toContain('grow__grow')
    expect(offeredNames(fake.requests[before + 1]!)).toContain('grow__grow')
    const activated = r.events.find((e) => e.type === 'skill_activated') as {
      skill: string
      by: string
      toolsAdded: string[]
    }
    expect(activated).toMatchObject({ skill: 'writer', by: 'model' })
    expect(activated.toolsAdded).toContain('grow:grow')
    expect(r.events.filter((e) => e.type === 'tool_result').at(-1)).toMatchObject({
      tool: 'grow:grow',
      ok: true,
      content: [{ type: 'text', text: 'added leaf' }],
    })
  }, 30_000)

  it('exits 3 at max turns, with session_end saying so', async () => {
    // No server: the turns are myc's to count, and a call of a tool that does not exist is a turn all the same.
    fake.setScript(() => ({ content: [{ type: 'tool_use', name: 'echo__echo', input: { message: 'again' } }] }))
    const r = await run(['loop', '--json', '--config', bareConfig, '--max-turns', '2'], { fake })
    expect(r.code).toBe(3)
    expect(last(r)).toMatchObject({ ok: false, reason: 'max_turns', turns: 2, exitCode: 3 })
  }, 30_000)

  it('exits 1 with one clear line when the API rejects the key or cannot be reached, and still ends the stream', async () => {
    fake.setScript(() => ({ status: 401, error: { type: 'authentication_error', message: 'invalid x-api-key' } }))
    const rejected = await run(['x', '--json', '--config', bareConfig], { fake })
    expect(rejected.code).toBe(1)
    expect(rejected.events.find((e) => e.type === 'error')).toMatchObject({
      code: 'api_key_rejected',
      message: expect.stringContaining('ANTHROPIC_API_KEY'),
    })
    expect(last(rejected)).toMatchObject({ type: 'session_end', reason: 'error', exitCode: 1 })
    const unreachable = await run(['x', '--config', bareConfig], { env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' } })
    expect(unreachable.code).toBe(1)
    expect(unreachable.stderr).toMatch(/cannot reach the Anthropic API at http:\/\/127\.0\.0\.1:9/)
    expect(unreachable.stdout).toBe('')
  }, 60_000)

  it('exits 2 naming the variable when there is no key at all, and for a missing task or a bad --max-turns', async () => {
    const noKey = await run(['x', '--json', '--config', openConfig], { env: { ANTHROPIC_API_KEY: undefined } })
    expect(noKey.code).toBe(2)
    // Its own code: not `usage` (a bad flag), and still exit 2 (set up wrong before anything starts).
    expect(noKey.events.find((e) => e.type === 'error')).toMatchObject({
      code: 'api_key_missing',
      message: expect.stringContaining('ANTHROPIC_API_KEY'),
    })
    expect(last(noKey)).toMatchObject({ type: 'session_end', ok: false, exitCode: 2 })
    const noTask = await run(['--config', openConfig], { input: '   ' })
    expect(noTask.code).toBe(2)
    expect(noTask.stderr).toMatch(/needs a task/)
    const badTurns = await run(['x', '--max-turns', 'many', '--config', openConfig])
    expect(badTurns.code).toBe(2)
    expect(badTurns.stderr).toMatch(/--max-turns takes a whole number/)
  }, 30_000)

  it('takes the task from stdin, and without --json writes the answer on stdout and the tool activity on stderr', async () => {
    fake.setScript((req, i) =>
      i % 2 === 0
        ? {
            content: [
              { type: 'tool_use', name: 'echo__echo', input: { message: String(req.body.messages[0]!.content) } },
            ],
          }
        : { content: [{ type: 'text', text: 'The answer.' }] },
    )
    const r = await run(['-', '--config', openConfig], { fake, input: 'task from stdin' })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe('The answer.\n')
    expect(r.stderr).toMatch(/→ echo:echo \{"message":"task from stdin"\}/)
    expect(r.stderr).toMatch(/✓ echo:echo/)
  }, 30_000)

  it('prints the JSON Schema of its events', async () => {
    const r = await run(['--json-schema'])
    expect(r.code).toBe(0)
    const schema = JSON.parse(r.stdout) as Record<string, unknown>
    expect(JSON.stringify(schema)).toContain('session_end')
    expect(schema.$schema).toMatch(/draft-07/)
  })

  const hasBwrap = requireTool('bwrap', process.platform === 'linux' && spawnSync('bwrap', ['--version']).status === 0)
  it.runIf(hasBwrap)(
    'runs mycelium__exec in the real sandbox when an active skill allows it, and the guard still blocks',
    async () => {
      fake.setScript(
        (_req, i) =>
          [
            {
              content: [
                { type: 'tool_use' as const, name: 'mycelium__exec', input: { command: 'echo from-the-sandbox' } },
              ],
            },
            {
              content: [
                { type: 'tool_use' as const, name: 'mycelium__exec', input: { command: 'echo / | xargs rm -rf' } },
              ],
            },
            { content: [{ type: 'text' as const, text: 'ran' }] },
          ][i]!,
      )
      const before = fake.requests.length
      // shell's tools are built-ins: the basic skills with no server.
      const r = await run(
        ['run things', '--json', '--config', policyBasicWith([]), '--role', 'developer', '--skills', 'shell'],
        { fake },
      )
      expect(r.code, r.stderr).toBe(0)
      expect(offeredNames(fake.requests[before]!)).toContain('mycelium__exec')
      const results = r.events.filter((e) => e.type === 'tool_result') as Array<{
        tool: string
        ok: boolean
        content: Array<{ text?: string }>
      }>
      expect(results[0]).toMatchObject({ tool: 'mycelium:exec', ok: true })
      expect(results[0]!.content[0]!.text).toContain('from-the-sandbox')
      expect(results[1]).toMatchObject({ tool: 'mycelium:exec', ok: false })
      expect(results[1]!.content[0]!.text).toMatch(/destructive-unknown-target|from input/)
      expect(r.events.find((e) => e.type === 'guard_blocked')).toMatchObject({
        tool: 'mycelium:exec',
        rule: 'destructive-unknown-target',
      })
    },
    60_000,
  )

  it('streams text_delta events with --include-partial, and they add up to the text', async () => {
    fake.setScript(() => ({ content: [{ type: 'text', text: 'A longer answer, streamed in pieces.' }] }))
    const r = await run(['x', '--json', '--include-partial', '--config', bareConfig], { fake })
    expect(r.code).toBe(0)
    const deltas = r.events.filter((e) => e.type === 'text_delta') as Array<{ text: string }>
    expect(deltas.length).toBeGreaterThan(1)
    expect(deltas.map((d) => d.text).join('')).toBe('A longer answer, streamed in pieces.')
    for (const event of r.events) expect(v.safeParse(AgentEventSchema, event).success).toBe(true)
  }, 30_000)

  it('hands MCP results to the model as API content: images as images, what the API cannot take as text', async () => {
    fake.setScript((_req, i) =>
      i === 0
        ? { content: [{ type: 'tool_use', name: 'echo__image', input: {} }] }
        : { content: [{ type: 'text', text: 'seen' }] },
    )
    const before = fake.requests.length
    const r = await run(['look', '--json', '--config', openConfig], { fake })
    expect(r.code, r.stderr).toBe(0)
    const blocks = [...toolResults(fake.requests[before + 1]!).values()][0]!.content as Array<{
      type: string
      source?: { type: string; media_type?: string }
      text?: string
    }>
    expect(blocks[0]).toMatchObject({ type: 'image', source: { type: 'base64', media_type: 'image/png' } })
    // The embedded text resource, as the SDK's helper converts it.
    expect(JSON.stringify(blocks[1])).toContain('static text')
    // A non-http resource link and audio: described, not dropped and not a failed turn.
    expect(blocks.slice(2).map((b) => b.text)).toEqual([
      '[resource link: item 7 echo://item/7]',
      '[audio content (audio/wav) that the model cannot receive]',
    ])
  }, 30_000)

  it('activates the skills whose triggers the task names before the first request (escalation auto)', async () => {
    fake.setScript(() => ({ content: [{ type: 'text', text: 'ok' }] }))
    const before = fake.requests.length
    const r = await run(['please write a leaf', '--json', '--config', policyConfig, '--role', 'developer'], { fake })
    expect(r.code, r.stderr).toBe(0)
    expect(r.events[1]).toMatchObject({ type: 'skill_activated', skill: 'writer', by: 'trigger' })
    expect((r.events[1] as { toolsAdded: string[] }).toolsAdded).toContain('grow:grow')
    expect(offeredNames(fake.requests[before]!)).toContain('grow__grow')
    // No trigger named: nothing activated.
    const plain = await run(['hello there', '--json', '--config', policyConfig, '--role', 'developer'], { fake })
    expect(plain.events.some((e) => e.type === 'skill_activated')).toBe(false)
    expect(offeredNames(fake.requests.at(-1)!)).not.toContain('grow__grow')
  }, 30_000)

  it("delegates to a worker that has one skill's tools and nothing else (agent.workers)", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-workers-'))
    for (const [name, tools] of [
      ['echoing', '["echo:echo"]'],
      ['growing', '["grow:*"]'],
    ]) {
      mkdirSync(path.join(dir, 'skills', name!), { recursive: true })
      writeFileSync(
        path.join(dir, 'skills', name!, 'SKILL.md'),
        `---\nname: ${name}\ndescription: The ${name} skill\nallowedRoles: [dev]\nallowedTools: ${tools}\n---\n`,
      )
    }
    const config = path.join(dir, 'mycelium.config.json')
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { echo: fixtureEntry('echo'), grow: fixtureEntry('list-changing') },
        roles: { default: 'dev' },
        agent: { workers: { enabled: true, max: 1, maxTurns: 3 } },
      }),
    )
    // Parent: delegate; worker: call echo, then answer; parent: finish.
    fake.setScript((req, i) => {
      const offered = offeredNames(req)
      if (i === 0)
        return {
          content: [{ type: 'tool_use', name: 'mycelium__delegate', input: { skill: 'echoing', task: 'say hi' } }],
        }
      if (i === 1) {
        // The worker's request: that skill's tools only, no meta tools, no delegate.
        expect(offered).toEqual(['echo__echo'])
        return { content: [{ type: 'tool_use', name: 'echo__echo', input: { message: 'hi from the worker' } }] }
      }
      if (i === 2) return { content: [{ type: 'tool_use', name: 'grow__grow', input: { name: 'sneaky' } }] }
      if (i === 3) return { content: [{ type: 'text', text: 'worker done: hi from the worker' }] }
      return { content: [{ type: 'text', text: 'parent done' }] }
    })
    const before = fake.requests.length
    const r = await run(['delegate it', '--json', '--config', config], { fake })
    expect(r.code, r.stderr).toBe(0)
    expect(offeredNames(fake.requests[before]!)).toContain('mycelium__delegate')
    expect(offeredNames(fake.requests[before + 1]!)).toEqual(['echo__echo'])
    // The worker asked for a tool outside its skill: the answer of a tool that does not exist.
    expect([...toolResults(fake.requests[before + 3]!).values()][0]).toMatchObject({
      is_error: true,
      content: [{ type: 'text', text: 'Unknown tool: grow__grow' }],
    })
    const start = r.events.find((e) => e.type === 'worker_start') as {
      parentId: string
      skill: string
      tools: string[]
    }
    const finished = r.events.find((e) => e.type === 'worker_end') as {
      parentId: string
      ok: boolean
      text: string
      turns: number
    }
    const delegateCall = r.events.find((e) => e.type === 'tool_call') as { id: string }
    expect(start).toMatchObject({ parentId: delegateCall.id, skill: 'echoing', tools: ['echo:echo'] })
    expect(finished).toMatchObject({
      parentId: delegateCall.id,
      ok: true,
      turns: 3,
      text: 'worker done: hi from the worker',
    })
    // What the worker did is in the stream too, each event naming the delegate call; the parent's own events name none.
    const byWorker = r.events.filter((e) => (e as { worker?: string }).worker !== undefined)
    expect(byWorker.map((e) => [e.type, (e as { tool?: string }).tool ?? null])).toEqual([
      ['tool_call', 'echo:echo'],
      ['tool_result', 'echo:echo'],
      // Outside the worker's view: named as the model named it (a tool that does not exist has no id).
      ['tool_call', 'grow__grow'],
      ['tool_result', 'grow__grow'],
      ['text', null],
    ])
    expect(byWorker.every((e) => (e as { worker?: string }).worker === delegateCall.id)).toBe(true)
    for (const event of r.events) expect(v.safeParse(AgentEventSchema, event).success, JSON.stringify(event)).toBe(true)
    expect(r.events.filter((e) => e.type === 'tool_call' && !(e as { worker?: string }).worker)).toHaveLength(1)
    // The parent got the worker's answer as the tool's result, and session_end counts the worker's usage too.
    expect(JSON.stringify([...toolResults(fake.requests.at(-1)!).values()][0])).toContain(
      'worker done: hi from the worker',
    )
    expect((r.events.at(-1) as { usage: { inputTokens: number } }).usage.inputTokens).toBe(50)
  }, 30_000)

  it('lets a classifier model pick skills when no trigger matched, and prices the run when a price is configured', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-classifier-'))
    const basic = path.join(repoRoot, 'tests/fixtures/policy/basic')
    const config = path.join(dir, 'mycelium.config.json')
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          echo: { command: 'node', args: [path.join(basic, '../../servers/echo.mjs')] },
          grow: { command: 'node', args: [path.join(basic, '../../servers/list-changing.mjs')] },
        },
        skills: { dirs: [path.join(basic, 'skills')] },
        roles: { default: 'developer' },
        agent: { classifier: { model: 'tiny-classifier' }, price: { inputPerMTok: 3, outputPerMTok: 15 } },
      }),
    )
    fake.setScript((req) => {
      // The classifier's question: not streamed, its own model, the skills' descriptions in it.
      if (req.body.model === 'tiny-classifier') {
        expect(req.body.stream).not.toBe(true)
        expect(JSON.stringify(req.body.messages)).toContain('writer: Secret writer skill')
        return { content: [{ type: 'text', text: 'I would pick ["writer", "not-a-skill"]' }] }
      }
      return { content: [{ type: 'text', text: 'done' }] }
    })
    const before = fake.requests.length
    const r = await run(['grow something for me', '--json', '--config', config], { fake })
    expect(r.code, r.stderr).toBe(0)
    expect(fake.requests[before]!.body.model).toBe('tiny-classifier')
    expect(r.events.find((e) => e.type === 'skill_activated')).toMatchObject({ skill: 'writer', by: 'classifier' })
    expect(offeredNames(fake.requests[before + 1]!)).toContain('grow__grow')
    // 10 input and 5 output tokens of the agent's one request, at $3 and $15 per million.
    expect((r.events.at(-1) as { costUsd?: number }).costUsd).toBeCloseTo((10 * 3 + 5 * 15) / 1e6, 9)
  }, 30_000)
})

import * as v from 'valibot'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AgentEventSchema, type AgentEvent } from '../../src/agent/events.js'
import { readFailureContext } from '../../src/agent/failure-context.js'
import { toolTokens } from '../../src/principal/token-count.js'
import { adhocProject, runAgentCli, toolsThatRan, workflowProject } from '../helpers/agent.js'
import { codeProject, hasBwrap } from '../helpers/code-mode.js'
import { connectToMyc, runMyc } from '../helpers/e2e.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'

// Code mode's runner is the program itself (build/myc-main.cjs started again
// inside the sandbox), so the commands that run code stay here; the rest of
// adhoc, workflow and tokens is tested in this process (tests/commands/).

const adhoc = (args: string[], fake: FakeAnthropic) => runAgentCli(['adhoc', ...args, '--json'], { fake })
const myc = async (args: string[]) => runMyc(args)

/** What `myc tokens --json` says of code mode. */
interface CodeModeCost {
  sessions: boolean
  agent: boolean
  tools: number
  tokens: number
  ratio: number
}
interface TokensDoc {
  codeMode: CodeModeCost
  roles: Array<{ role: string; codeMode: CodeModeCost }>
}

describe.runIf(hasBwrap)('myc adhoc in code mode (build/myc.cjs, agent.codeMode)', () => {
  const fake = new FakeAnthropic()
  beforeAll(() => fake.start())
  afterAll(() => fake.close())

  it('offers run_code; a risky inner call is denied without a terminal and in session_end.permissionDenials, a safe one runs unasked', async () => {
    const { config, audit } = adhocProject(
      { investigate: ['echo:*'] },
      {
        session: { defaultSkills: ['investigate'] },
        agent: { codeMode: true, risk: [{ pattern: 'echo:add', level: 'high' }] },
      },
    )
    const code = `const said = await tools.echo.echo({ message: 'low' })
      try { return await tools.echo.add({ a: 1, b: 2 }) } catch (e) { return [said, e.message] }`
    fake.setScript(
      (_req, i) =>
        [
          { content: [{ type: 'tool_use' as const, name: 'mycelium__run_code', input: { code } }] },
          { content: [{ type: 'text' as const, text: 'finished' }] },
        ][i]!,
    )
    const r = await adhoc(['look around', '--config', config], fake)
    expect(r.code, r.stderr).toBe(3)
    for (const e of r.events) expect(v.safeParse(AgentEventSchema, e).success, JSON.stringify(e)).toBe(true)
    const start = r.events[0] as { tools: string[] }
    expect(start.tools).toContain('mycelium:run_code')
    expect(start.tools).not.toContain('echo:echo')
    expect(r.events.filter((e) => e.type === 'approval_decided')).toEqual([
      expect.objectContaining({ tool: 'echo:add', risk: 'high', decision: 'deny', by: 'no_terminal' }),
    ])
    expect(r.events.some((e) => e.type === 'approval_requested' && e.tool === 'echo:echo')).toBe(false)
    const run = r.events.find((e) => e.type === 'tool_call' && e.tool === 'mycelium:run_code') as { id: string }
    const result = r.events.find((e) => e.type === 'tool_result' && e.tool === 'mycelium:run_code') as {
      content: Array<{ text: string }>
    }
    expect(JSON.parse(result.content[0]!.text)).toEqual([
      { echoed: 'low' },
      expect.stringMatching(/^not approved: high risk/),
    ])
    expect(r.events.at(-1)).toMatchObject({
      type: 'session_end',
      reason: 'denied',
      permissionDenials: [{ tool: 'echo:add', id: `${run.id}.2` }],
    })
    expect(toolsThatRan(audit)).toEqual(['echo__echo', 'mycelium__run_code'])
  }, 30_000)
})

describe.runIf(hasBwrap)('myc workflow in code mode (build/myc.cjs, agent.codeMode)', () => {
  const fake = new FakeAnthropic()
  beforeAll(() => fake.start())
  afterAll(() => fake.close())
  const end = (events: AgentEvent[]) =>
    events.at(-1) as { type: string; reason: string; exitCode: number; contextFile?: string }
  const workflow = (args: string[]) => runAgentCli([...args, '--json'], { fake })

  it('in code mode (agent.codeMode) offers run_code over the scripts too; a script that fails in a run ends the workflow', async () => {
    const code = `await tools.mycelium.run_script({ skill: 'deploy', script: 'check.sh' })
      await tools.mycelium.run_script({ skill: 'deploy', script: 'release.sh', args: ['--now'] })`
    fake.setScript((_req, i) =>
      i === 0
        ? { content: [{ type: 'tool_use', name: 'mycelium__run_code', input: { code } }] }
        : { content: [{ type: 'text', text: 'should not be asked' }] },
    )
    const before = fake.requests.length
    const r = await workflow([
      'workflow',
      'release it',
      '--config',
      workflowProject({ codeMode: true }),
      '--on-failure',
      'exit',
    ])
    expect(r.code, r.stderr).toBe(3)
    expect((fake.requests[before]!.body.tools ?? []).map((t) => t.name)).toEqual([
      'mycelium__list_skills',
      'mycelium__read_skill',
      'mycelium__run_script',
      'mycelium__run_code',
    ])
    const run = r.events.find((e) => e.type === 'tool_call' && e.tool === 'mycelium:run_code') as { id: string }
    expect(
      r.events
        .filter((e) => e.type === 'tool_result' && e.parentId === run.id)
        .map((e) => [e.type === 'tool_result' && e.ok]),
    ).toEqual([[true], [false]])
    expect(await readFailureContext(end(r.events).contextFile!)).toMatchObject({
      scriptPath: 'scripts/release.sh',
      args: ['--now'],
      exitCode: 2,
    })
    expect(fake.requests.length - before).toBe(1)
  }, 60_000)
})

describe.runIf(hasBwrap)('myc tokens on code mode (build/myc.cjs)', () => {
  it('says which roles are in code mode, for sessions and the agent, and what a session in code mode lists costs', async () => {
    const file = codeProject({
      roles: { default: 'guest', definitions: { admin: { codeMode: false } } },
      agent: { codeMode: true },
    })
    const r = await myc(['tokens', '--config', file, '--json'])
    expect(r.code, r.stderr).toBe(0)
    const doc = JSON.parse(r.stdout) as TokensDoc
    const role = (name: string) => doc.roles.find((x) => x.role === name)!
    expect(role('guest').codeMode).toMatchObject({ sessions: true, agent: true, tools: 6 })
    expect(role('admin').codeMode).toMatchObject({ sessions: false, agent: false, tools: 6 })
    // Policy mode: no open-mode session is in code mode.
    expect(doc.codeMode).toMatchObject({ sessions: false, agent: false, tools: 2 })
    // The figure is what a session of the role in code mode gets: its tools/list, counted the same way.
    const { client } = await connectToMyc(['serve', '--config', file, '--role', 'guest'])
    const listed = (await client.listTools()).tools
    await client.close()
    expect(listed.map((t) => t.name)).toContain('mycelium__run_code')
    expect(role('guest').codeMode.tokens).toBe(toolTokens(listed))
    const text = (await myc(['tokens', '--config', file, '--role', 'guest'])).stdout
    expect(text).toContain(
      `  code mode (sessions on, agent on): 6 tools, ${role('guest').codeMode.tokens} tokens (${(role('guest').codeMode.ratio * 100).toFixed(1)}% of open mode), whatever the skills`,
    )
  }, 60_000)
})

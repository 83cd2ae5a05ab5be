import { existsSync } from 'node:fs'
import path from 'node:path'
import * as v from 'valibot'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AgentEventSchema } from '../../src/agent/events.js'
import { activateAndCall, investigateProject, runAgentHere, skillsProject, toolsThatRan } from '../helpers/agent.js'
import { writeConfig } from '../helpers/e2e.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { fixtureEntry } from '../helpers/runtime.js'

const adhoc = (args: string[], fake: FakeAnthropic) => runAgentHere(['adhoc', ...args, '--json'], { fake })

describe('myc adhoc (in process): approvals decided before the call, headless', () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })
  // The model calls a low-risk, a high-risk and a critical tool, then stops.
  const script = () =>
    fake.setScript(
      (_req, i) =>
        [
          { content: [{ type: 'tool_use' as const, name: 'echo__echo', input: { message: 'low' } }] },
          { content: [{ type: 'tool_use' as const, name: 'echo__add', input: { a: 1, b: 2 } }] },
          { content: [{ type: 'tool_use' as const, name: 'echo__fail', input: {} }] },
          { content: [{ type: 'text' as const, text: 'finished' }] },
        ][i]!,
    )

  it('without a terminal denies what reaches the threshold (nothing waits), tells the model, and goes on', async () => {
    const { config, audit } = investigateProject()
    script()
    const r = await adhoc(['look around', '--config', config], fake)
    // Every risky call was refused: the run did not do what it was asked, so it does not end ok (exit 3).
    expect(r.code, r.stderr).toBe(3)
    for (const e of r.events) expect(v.safeParse(AgentEventSchema, e).success, JSON.stringify(e)).toBe(true)
    expect(r.events[0]).toMatchObject({ type: 'session_start', mode: 'adhoc', role: 'adhoc' })
    const decided = r.events.filter((e) => e.type === 'approval_decided')
    expect(decided).toEqual([
      expect.objectContaining({ tool: 'echo:add', risk: 'high', decision: 'deny', by: 'no_terminal' }),
      expect.objectContaining({ tool: 'echo:fail', risk: 'critical', decision: 'deny', by: 'no_terminal' }),
    ])
    // echo:echo (readOnlyHint) is below the threshold: no approval asked.
    expect(r.events.some((e) => e.type === 'approval_requested' && e.tool === 'echo:echo')).toBe(false)
    const results = r.events.filter((e) => e.type === 'tool_result') as Array<{
      tool: string
      ok: boolean
      content: Array<{ text: string }>
    }>
    expect(results.map((x) => [x.tool, x.ok])).toEqual([
      ['echo:echo', true],
      ['echo:add', false],
      ['echo:fail', false],
    ])
    expect(results[1]!.content[0]!.text).toMatch(/not approved: .*--approve high or --approve echo:add/)
    const end = r.events.at(-1) as {
      permissionDenials: Array<{ tool: string }>
      reason: string
      ok: boolean
      text: string
    }
    expect(end).toMatchObject({ reason: 'denied', ok: false })
    // The model's last text is kept.
    expect(end.text).toBe((r.events.filter((e) => e.type === 'text').at(-1) as { text: string }).text)
    expect(end.permissionDenials.map((d) => d.tool)).toEqual(['echo:add', 'echo:fail'])
    // The denied calls never reached the child: the audit log saw only the allowed one.
    expect(toolsThatRan(audit)).toEqual(['echo__echo'])
  }, 30_000)

  it('one reply that activates a skill and calls its risky tool: denied without a terminal, in permissionDenials; exec too; a safe one runs', async () => {
    const { dir, config, audit } = skillsProject()
    const mark = path.join(dir, 'ran-unasked')
    const replies = activateAndCall(mark)
    fake.setScript((_req, i) => replies[i]!)
    const r = await adhoc(['look around', '--config', config], fake)
    expect(r.code, r.stderr).toBe(3)
    const decided = r.events.filter((e) => e.type === 'approval_decided')
    expect(decided).toEqual([
      expect.objectContaining({ tool: 'echo:add', risk: 'high', decision: 'deny', by: 'no_terminal' }),
      expect.objectContaining({ tool: 'mycelium:exec', risk: 'critical', decision: 'deny', by: 'no_terminal' }),
    ])
    const end = r.events.at(-1) as { type: string; reason: string; permissionDenials: Array<{ tool: string }> }
    expect(end).toMatchObject({ type: 'session_end', reason: 'denied' })
    expect(end.permissionDenials.map((d) => d.tool)).toEqual(['echo:add', 'mycelium:exec'])
    // The benign twin: echo:echo, activated with safe in the same reply, ran unasked.
    expect(r.events.some((e) => e.type === 'approval_requested' && e.tool === 'echo:echo')).toBe(false)
    expect(existsSync(mark)).toBe(false)
    expect(toolsThatRan(audit).filter((t) => !t.endsWith('activate_skill'))).toEqual(['echo__echo'])
  }, 30_000)

  it('--approve takes a level (that and below) and patterns, repeatedly', async () => {
    const { config, audit } = investigateProject()
    script()
    const byLevel = await adhoc(['look', '--config', config, '--approve', 'high'], fake)
    // echo:fail (critical) is still refused.
    expect(byLevel.code).toBe(3)
    expect(
      byLevel.events
        .filter((e) => e.type === 'approval_decided')
        .map((e) => [(e as { tool: string }).tool, (e as { decision: string }).decision, (e as { by: string }).by]),
    ).toEqual([
      ['echo:add', 'allow', 'preapproved'],
      ['echo:fail', 'deny', 'no_terminal'],
    ])
    script()
    const both = await adhoc(['look', '--config', config, '--approve', 'high', '--approve', 'echo:fail'], fake)
    expect(
      both.events
        .filter((e) => e.type === 'approval_decided')
        .every((e) => (e as { decision: string }).decision === 'allow'),
    ).toBe(true)
    expect(toolsThatRan(audit)).toEqual(['echo__echo', 'echo__add', 'echo__echo', 'echo__add', 'echo__fail'])
  }, 30_000)

  it('refuses bad input: an --approve that is neither a level nor a pattern, open mode, an unknown adhoc role', async () => {
    const { config } = investigateProject()
    const bad = await adhoc(['x', '--config', config, '--approve', 'echo:'], fake)
    expect(bad.code).toBe(2)
    expect(bad.events.find((e) => e.type === 'error')).toMatchObject({
      message: expect.stringMatching(/--approve takes a risk level/),
    })
    const open = await adhoc(['x', '--config', writeConfig({ mcpServers: { echo: fixtureEntry('echo') } })], fake)
    expect(open.code).toBe(2)
    expect(open.events.find((e) => e.type === 'error')).toMatchObject({
      message: expect.stringMatching(/needs policy mode/),
    })
    const role = await adhoc(['x', '--config', config, '--role', 'nobody'], fake)
    expect(role.code).toBe(2)
    expect(role.events.find((e) => e.type === 'error')).toMatchObject({ message: expect.stringMatching(/nobody/) })
  }, 30_000)
})

import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import * as v from 'valibot'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AgentEventSchema } from '../../src/agent/events.js'
import { runAgentCli } from '../helpers/agent.js'
import { writeConfig } from '../helpers/e2e.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { fixtureEntry } from '../helpers/runtime.js'

/** A policy-mode folder with an adhoc role that reaches every echo tool, and risk rules. */
function adhocFolder(): { config: string; audit: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-adhoc-'))
  mkdirSync(path.join(dir, 'skills', 'investigate'), { recursive: true })
  writeFileSync(
    path.join(dir, 'skills', 'investigate', 'SKILL.md'),
    '---\nname: investigate\ndescription: Everything echo has\nallowedRoles: [adhoc]\nallowedTools: ["echo:*"]\n---\nInvestigate.\n',
  )
  const audit = path.join(dir, 'audit.jsonl')
  const config = path.join(dir, 'mycelium.config.json')
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { echo: fixtureEntry('echo') },
      session: { defaultSkills: ['investigate'] },
      audit: { file: audit },
      agent: {
        risk: [
          { pattern: 'echo:add', level: 'high' },
          { pattern: 'echo:fail', level: 'critical' },
        ],
      },
    }),
  )
  return { config, audit }
}

const adhoc = (args: string[], fake: FakeAnthropic) => runAgentCli(['adhoc', ...args, '--json'], { fake })

const toolsCalled = (audit: string) =>
  existsSync(audit)
    ? readFileSync(audit, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; tool?: string })
        .filter((e) => e.event === 'tool_call')
        .map((e) => e.tool)
    : []

describe('myc adhoc (build/myc.cjs): approvals decided before the call, headless', () => {
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
    const { config, audit } = adhocFolder()
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
    expect(toolsCalled(audit)).toEqual(['echo__echo'])
  }, 30_000)

  it('--approve takes a level (that and below) and patterns, repeatedly', async () => {
    const { config, audit } = adhocFolder()
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
    expect(toolsCalled(audit)).toEqual(['echo__echo', 'echo__add', 'echo__echo', 'echo__add', 'echo__fail'])
  }, 30_000)

  it('refuses bad input: an --approve that is neither a level nor a pattern, open mode, an unknown adhoc role', async () => {
    const { config } = adhocFolder()
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

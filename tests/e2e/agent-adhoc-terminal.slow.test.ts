import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle } from '../helpers/e2e.js'
import { activateAndCall, investigateProject, skillsProject, toolsThatRan } from '../helpers/agent.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { fixtureEntry, waitFor } from '../helpers/runtime.js'
import { requireTool } from '../helpers/tools.js'
import { Terminal } from '../helpers/terminal.js'

const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)

/** A real terminal (tmux): myc adhoc asks before a risky call, and the answer typed decides. */
describe.runIf(hasTmux)('myc adhoc on a terminal (tmux)', () => {
  const fake = new FakeAnthropic()
  const term = new Terminal('test')
  const { tmux } = term
  const screen = () => tmux('capture-pane', '-p', '-t', 'adhoc')
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    term.close()
    await fake.close()
  })

  it('asks one call at a time; "always" allows and "n" denies before anything runs', async () => {
    requireBundle()
    const { config, audit } = investigateProject()
    fake.setScript(
      (_req, i) =>
        [
          { content: [{ type: 'tool_use' as const, name: 'echo__add', input: { a: 2, b: 3 } }] },
          { content: [{ type: 'tool_use' as const, name: 'echo__fail', input: {} }] },
          { content: [{ type: 'text' as const, text: 'Finished on the terminal.' }] },
        ][i]!,
    )
    const command = `ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} ${process.execPath} ${bundle} adhoc "add things" --config ${config}; echo EXIT=$?; sleep 60`
    term.open('adhoc', command)
    await waitFor(() => screen().includes('Allow echo:add (high risk)'), 20_000, 'the first approval prompt')
    tmux('send-keys', '-t', 'adhoc', 'always', 'Enter')
    await waitFor(() => screen().includes('Allow echo:fail (critical risk)'), 20_000, 'the second approval prompt')
    tmux('send-keys', '-t', 'adhoc', 'n', 'Enter')
    await waitFor(() => screen().includes('EXIT='), 20_000, 'the end of the run')
    const text = screen()
    expect(text).toContain('Finished on the terminal.')
    // The person said no to one call: the run did not do all it was asked, so it ends denied (exit 3).
    expect(text).toContain('EXIT=3')
    // Approved ran, denied did not: the audit log is the child's side of it.
    expect(toolsThatRan(audit)).toEqual(['echo__add'])
  }, 60_000)

  it('asks for a tool its skill got earlier in the same reply, mycelium:exec too; a safe one runs unasked', async () => {
    requireBundle()
    const { dir, config, audit } = skillsProject()
    const mark = path.join(dir, 'ran-unasked')
    const replies = activateAndCall(mark)
    fake.setScript((_req, i) => replies[i]!)
    const command = `ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} ${process.execPath} ${bundle} adhoc "look around" --config ${config}; echo EXIT=$?; sleep 60`
    term.open('one-reply', command)
    const pane = () => tmux('capture-pane', '-p', '-t', 'one-reply')
    await waitFor(() => pane().includes('Allow echo:add (high risk)'), 20_000, 'the approval of echo:add')
    tmux('send-keys', '-t', 'one-reply', 'n', 'Enter')
    await waitFor(() => pane().includes('Allow mycelium:exec (critical risk)'), 20_000, 'the approval of exec')
    tmux('send-keys', '-t', 'one-reply', 'n', 'Enter')
    await waitFor(() => pane().includes('EXIT='), 20_000, 'the end of the run')
    const text = pane()
    expect(text).toContain('All done.')
    expect(text).toContain('EXIT=3')
    // Only those two were asked: echo:echo (low) was not.
    expect(text.split('Allow ').length - 1).toBe(2)
    expect(existsSync(mark)).toBe(false)
    expect(toolsThatRan(audit).filter((t) => !t.endsWith('activate_skill'))).toEqual(['echo__echo'])
  }, 60_000)
})

/** A real terminal: in code mode, each risky call the code of a run makes is asked there, one at a time. */
describe.runIf(hasTmux && spawnSync('bwrap', ['--version']).status === 0)(
  'myc adhoc in code mode on a terminal',
  () => {
    const fake = new FakeAnthropic()
    const term = new Terminal('test-code')
    const { tmux } = term
    const screen = () => tmux('capture-pane', '-p', '-t', 'code')
    beforeAll(() => fake.start())
    afterAll(async () => {
      term.close()
      await fake.close()
    })

    it('asks for each risky inner call of run_code: "y" runs it, "n" keeps the next from running', async () => {
      requireBundle()
      const { dir, config, audit } = investigateProject()
      const withCode = JSON.parse(readFileSync(config, 'utf8')) as { agent: Record<string, unknown> }
      withCode.agent.codeMode = true
      writeFileSync(config, JSON.stringify(withCode))
      const code = `await tools.echo.echo({ message: 'low' })
      const first = await tools.echo.add({ a: 2, b: 3 })
      try { await tools.echo.add({ a: 4, b: 5 }) } catch (e) { return [first, e.message] }`
      fake.setScript(
        (_req, i) =>
          [
            { content: [{ type: 'tool_use' as const, name: 'mycelium__run_code', input: { code } }] },
            { content: [{ type: 'text' as const, text: 'Finished in code mode.' }] },
          ][i]!,
      )
      const command = `cd ${dir}; ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} ${process.execPath} ${bundle} adhoc "add in code" --config ${config}; echo EXIT=$?; sleep 60`
      term.open('code', command)
      await waitFor(
        () => screen().includes('Allow echo:add (high risk) with {"a":2,"b":3}'),
        20_000,
        'the first prompt',
      )
      tmux('send-keys', '-t', 'code', 'y', 'Enter')
      await waitFor(
        () => screen().includes('Allow echo:add (high risk) with {"a":4,"b":5}'),
        20_000,
        'the second prompt',
      )
      tmux('send-keys', '-t', 'code', 'n', 'Enter')
      await waitFor(() => screen().includes('EXIT='), 20_000, 'the end of the run')
      const text = screen()
      expect(text).toContain('Finished in code mode.')
      expect(text).toContain('EXIT=3')
      // echo:echo (low) was not asked: two prompts in all.
      expect(text.split('Allow ').length - 1).toBe(2)
      expect(toolsThatRan(audit)).toEqual(['echo__echo', 'echo__add', 'mycelium__run_code'])
    }, 60_000)
  },
)

/** A real terminal: a failed workflow asks whether to hand off, and a trigger under escalation "ask" asks before activating. */
describe.runIf(hasTmux && spawnSync('bwrap', ['--version']).status === 0)(
  'myc workflow and triggers on a terminal (tmux)',
  () => {
    const fake = new FakeAnthropic()
    const term = new Terminal('test-wf')
    const { tmux } = term
    const screen = () => tmux('capture-pane', '-p', '-t', 'wf')
    beforeAll(async () => {
      await fake.start()
    })
    afterAll(async () => {
      term.close()
      await fake.close()
    })

    it('asks to activate a triggered skill (escalation ask), then to hand a failed workflow off to adhoc', async () => {
      requireBundle()
      const dir = mkdtempSync(path.join(tmpdir(), 'myc-tty-wf-'))
      mkdirSync(path.join(dir, 'skills', 'deploy', 'scripts'), { recursive: true })
      writeFileSync(
        path.join(dir, 'skills', 'deploy', 'SKILL.md'),
        '---\nname: deploy\ndescription: Deploys\nallowedRoles: [ops]\nallowedTools: []\ntriggers: [release]\n---\n',
      )
      writeFileSync(
        path.join(dir, 'skills', 'deploy', 'scripts', 'release.sh'),
        '#!/bin/sh\necho "disk full" >&2\nexit 2\n',
      )
      execFileSync('chmod', ['+x', path.join(dir, 'skills', 'deploy', 'scripts', 'release.sh')])
      mkdirSync(path.join(dir, 'skills', 'investigate'), { recursive: true })
      writeFileSync(
        path.join(dir, 'skills', 'investigate', 'SKILL.md'),
        '---\nname: investigate\ndescription: Looks into things\nallowedRoles: [adhoc]\nallowedTools: ["echo:echo"]\ntriggers: [release]\n---\n',
      )
      const config = path.join(dir, 'mycelium.config.json')
      writeFileSync(
        config,
        JSON.stringify({
          mcpServers: { echo: fixtureEntry('echo') },
          roles: { default: 'ops' },
          session: { escalation: 'ask' },
        }),
      )
      fake.setScript(
        (_req, i) =>
          [
            {
              content: [
                {
                  type: 'tool_use' as const,
                  name: 'mycelium__run_script',
                  input: { skill: 'deploy', script: 'release.sh' },
                },
              ],
            },
            { content: [{ type: 'text' as const, text: 'Investigated the release.' }] },
          ][i]!,
      )
      const command = `ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} ${process.execPath} ${bundle} workflow "release it" --config ${config}; echo EXIT=$?; sleep 60`
      term.open('wf', command, { cols: 220 })
      await waitFor(() => screen().includes('Hand off to adhoc to investigate?'), 20_000, 'the hand-off question')
      tmux('send-keys', '-t', 'wf', 'y', 'Enter')
      // In adhoc, the task names a trigger of "investigate": escalation is "ask", so the terminal is asked.
      await waitFor(
        () => screen().includes('wants to activate the skill "investigate"'),
        20_000,
        'the activation question',
      )
      tmux('send-keys', '-t', 'wf', 'y', 'Enter')
      await waitFor(() => screen().includes('EXIT='), 20_000, 'the end of the run')
      const text = screen()
      expect(text).toContain('Investigated the release.')
      expect(text).toContain('EXIT=0')
      expect(text).toMatch(/\+ skill investigate/)
    }, 60_000)
  },
)

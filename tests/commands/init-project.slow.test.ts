import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AgentEvent } from '../../src/agent/events.js'
import { runAgentHere } from '../helpers/agent.js'
import { runHere } from '../helpers/cli.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { repoRoot } from '../helpers/fixtures.js'
import { requireTool } from '../helpers/tools.js'

const hasBwrap = requireTool('bwrap', process.platform === 'linux' && spawnSync('bwrap', ['--version']).status === 0)

/**
 * A newcomer's first hour on `myc init`'s own project: every command works
 * as the docs write it. The project sits under the repo's node_modules, so
 * its `npx -y` servers resolve to the installed packages (no download).
 */
describe('myc init makes a project where every command works (in process)', () => {
  const fake = new FakeAnthropic()
  const base = path.join(repoRoot, 'node_modules', '.cache')
  let dir = ''
  let config = ''
  const end = (events: AgentEvent[]) => events.at(-1) as Extract<AgentEvent, { type: 'session_end' }>

  beforeAll(async () => {
    await fake.start()
    mkdirSync(base, { recursive: true })
    dir = path.join(mkdtempSync(path.join(base, 'myc-init-')), 'project')
    const init = await runHere(['init', dir])
    expect(init.code, init.stderr).toBe(0)
    config = path.join(dir, 'mycelium.config.json')
  }, 60_000)
  afterAll(async () => {
    await fake.close()
    if (dir) rmSync(path.dirname(dir), { recursive: true, force: true })
  })

  it('pins its servers’ tools in mycelium.lock.json, which the CI step of docs/pinning.md finds matching', async () => {
    const lock = JSON.parse(readFileSync(path.join(dir, 'mycelium.lock.json'), 'utf8')) as {
      servers: Record<string, { tools: Record<string, unknown> }>
    }
    expect(Object.keys(lock.servers)).toEqual(['fs', 'memory'])
    expect(Object.keys(lock.servers.fs!.tools)).toContain('read_text_file')
    const r = await runAgentHere(['pin', '--check', '--json', '--config', config])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, changes: [], hidden: [], unchecked: [] })
  }, 60_000)

  it('runs the CI example of docs/agent.md as written: --role developer, --json, the last line ok', async () => {
    fake.setScript(() => ({ content: [{ type: 'text', text: 'No problems found.' }] }))
    const r = await runAgentHere(
      ['run', 'Review the diff in this branch and list problems', '--config', config, '--role', 'developer', '--json'],
      { fake },
    )
    expect(r.code, r.stderr).toBe(0)
    expect(r.events[0]).toMatchObject({ type: 'session_start', role: 'developer' })
    expect(end(r.events)).toMatchObject({ ok: true, reason: 'done' })
  }, 60_000)

  it('a run starts lean: its first request carries at most 10% of the tool tokens of an open-mode run over the same servers', async () => {
    fake.setScript(() => ({ content: [{ type: 'text', text: 'ok' }] }))
    const toolChars = (i: number) => JSON.stringify(fake.requests[i]!.body.tools ?? []).length
    const lean = fake.requests.length
    const r = await runAgentHere(['run', 'hello', '--config', config, '--json'], { fake })
    expect(r.code, r.stderr).toBe(0)
    expect((r.events[0] as { contextTokens?: number }).contextTokens).toBeGreaterThan(0)
    // The same servers in open mode (no skills): a config of their own beside the project.
    const open = path.join(path.dirname(dir), 'open')
    mkdirSync(open)
    const servers = (JSON.parse(readFileSync(config, 'utf8')) as { mcpServers: Record<string, { cwd?: string }> })
      .mcpServers
    for (const s of Object.values(servers)) s.cwd = dir
    writeFileSync(path.join(open, 'mycelium.config.json'), JSON.stringify({ mcpServers: servers }))
    const full = fake.requests.length
    const o = await runAgentHere(['run', 'hello', '--config', path.join(open, 'mycelium.config.json'), '--json'], {
      fake,
    })
    expect(o.code, o.stderr).toBe(0)
    expect(toolChars(lean) / toolChars(full)).toBeLessThanOrEqual(0.1)
    expect((r.events[0] as { contextTokens: number }).contextTokens).toBeLessThan(
      (o.events[0] as { contextTokens: number }).contextTokens,
    )
  }, 60_000)

  it('runs myc adhoc although init made no adhoc role: it runs as the default role, and says so', async () => {
    fake.setScript(() => ({ content: [{ type: 'text', text: 'Looked.' }] }))
    const r = await runAgentHere(['adhoc', 'look around', '--config', config, '--json'], { fake })
    expect(r.code, r.stderr).toBe(0)
    expect(r.events[0]).toMatchObject({ type: 'session_start', mode: 'adhoc', role: 'developer' })
    expect(r.stderr).toMatch(/adhoc runs as role "developer": agent.adhocRole "adhoc" is not a role here/)
  }, 60_000)

  it.runIf(hasBwrap)(
    'a failing workflow with --on-failure auto hands off to adhoc and completes, naming its context file',
    async () => {
      // A skill with a script, as a user adds one.
      const scripts = path.join(dir, 'skills', 'deploy', 'scripts')
      mkdirSync(scripts, { recursive: true })
      writeFileSync(
        path.join(dir, 'skills', 'deploy', 'SKILL.md'),
        '---\nname: deploy\ndescription: Release the project\nallowedRoles: [developer]\nallowedTools: []\n---\nRun release.sh.\n',
      )
      writeFileSync(path.join(scripts, 'release.sh'), '#!/bin/sh\necho "disk full" >&2\nexit 2\n')
      chmodSync(path.join(scripts, 'release.sh'), 0o755)
      fake.setScript((_req, i) =>
        i === 0
          ? {
              content: [
                { type: 'text', text: 'Releasing.' },
                { type: 'tool_use', name: 'mycelium__run_script', input: { skill: 'deploy', script: 'release.sh' } },
              ],
            }
          : { content: [{ type: 'text', text: 'The disk is full.' }] },
      )
      const r = await runAgentHere(['workflow', 'release it', '--config', config, '--on-failure', 'auto', '--json'], {
        fake,
      })
      expect(r.code, r.stderr).toBe(0)
      expect(r.events.some((e) => e.type === 'handoff')).toBe(true)
      const last = end(r.events)
      expect(last).toMatchObject({ ok: true, reason: 'done', text: 'The disk is full.' })
      expect(last.contextFile && existsSync(last.contextFile)).toBe(true)
    },
    60_000,
  )
})

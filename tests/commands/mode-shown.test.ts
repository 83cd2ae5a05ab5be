import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { stripAnsi } from '../../src/terminal-colour.js'
import { runHere } from '../helpers/cli.js'
import { fixtureEntry } from '../helpers/runtime.js'

/** `myc argv` in this process (stdout a pipe); stderr without colour. */
async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await runHere(argv)
  return { ...r, stderr: stripAnsi(r.stderr) }
}

/**
 * A config over the echo fixture in a folder of its own, with skills when
 * given (policy mode). A command starts every server of its config: one
 * whose checks read nothing of echo's passes `mcpServers: {}` in `extra`.
 */
function project(extra: Record<string, unknown> = {}, skills: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-mode-shown-'))
  for (const [name, text] of Object.entries(skills)) {
    mkdirSync(path.join(dir, 'skills', name), { recursive: true })
    writeFileSync(path.join(dir, 'skills', name, 'SKILL.md'), text)
  }
  const file = path.join(dir, 'mycelium.config.json')
  writeFileSync(file, JSON.stringify({ mcpServers: { echo: fixtureEntry('echo') }, ...extra }))
  return file
}

const adder = '---\nname: adder\ndescription: adds\nallowedRoles: [dev, guest]\nallowedTools: ["echo:add"]\n---\n'

describe('myc tools: what a session is offered, and the mode and role it shows', () => {
  it('lazy open mode: the two tools a session lists, with the mode in --json and on stderr', async () => {
    const config = project({ session: { lazyTools: true } })
    const json = await cli(['tools', '--json', '--config', config])
    expect(json.code).toBe(0)
    const report = JSON.parse(json.stdout)
    expect(report).toMatchObject({ ok: true, mode: 'open', role: null, lazyTools: true })
    expect(report.tools.map((t: { wireName: string }) => t.wireName)).toEqual([
      'mycelium__search_tools',
      'mycelium__call_tool',
    ])
    // --all: every child tool too, callable by name but not offered.
    const all = JSON.parse((await cli(['tools', '--json', '--all', '--config', config])).stdout)
    expect(all.tools.find((t: { id: string }) => t.id === 'echo:add')).toMatchObject({ visible: false })
    // Text: the result on stdout, the mode line on stderr (stdout is not a terminal here).
    const text = await cli(['tools', '--config', config])
    expect(text.stdout.split('\n')[0]).toMatch(/^mycelium__search_tools +mycelium:search_tools/)
    expect(text.stdout).not.toContain('echo__add')
    expect(text.stderr).toMatch(
      /^myc: open mode, lazy \(session\.lazyTools; no skills in .*\): a session is offered mycelium__search_tools and mycelium__call_tool/m,
    )
  })

  it('open mode: every tool, said so', async () => {
    const { stdout, stderr } = await cli(['tools', '--config', project()])
    expect(stdout).toContain('echo__add')
    expect(stderr).toMatch(/^myc: open mode \(no skills in .*\): a session is offered every tool of every server$/m)
  })

  it('policy mode: the role in --json and on stderr', async () => {
    const config = project({ roles: { default: 'guest' } }, { adder })
    const json = JSON.parse(
      (await cli(['tools', '--json', '--role', 'dev', '--skills', 'adder', '--config', config])).stdout,
    )
    expect(json).toMatchObject({ mode: 'policy', role: 'dev', lazyTools: false })
    expect(json.tools.map((t: { id: string }) => t.id)).toContain('echo:add')
    const bare = project({ mcpServers: {}, roles: { default: 'guest' } }, { adder })
    const { stderr } = await cli(['tools', '--config', bare])
    expect(stderr).toMatch(/^myc: policy mode: role guest; a session sees what its role's active skills allow$/m)
  })
})

describe('myc status: the mode, and the role a session gets when it chooses none', () => {
  it('open mode (lazy) and policy mode, in --json and on stderr', async () => {
    const open = JSON.parse(
      (await cli(['status', '--json', '--config', project({ mcpServers: {}, session: { lazyTools: true } })])).stdout,
    )
    expect(open).toMatchObject({ ok: true, mode: 'open', role: null, lazyTools: true })
    const bare = project({ mcpServers: {}, roles: { default: 'guest' } }, { adder })
    expect(JSON.parse((await cli(['status', '--json', '--config', bare])).stdout)).toMatchObject({
      mode: 'policy',
      role: 'guest',
    })
    const config = project({ roles: { default: 'guest' } }, { adder })
    const { stdout, stderr } = await cli(['status', '--config', config])
    expect(stdout).toMatch(/^RUNNING +echo/m)
    expect(stderr).toMatch(/^myc: policy mode: a session that chooses no role is role guest/m)
  })
})

describe('myc skill add: the first skill ends open mode, and says so', () => {
  it('which role sees what, the role of a session that chooses none, and the way back; once', async () => {
    const config = project({ mcpServers: {} })
    const dir = path.dirname(config)
    const first = await cli(['skill', 'add', 'notes', '--json', '--config', config])
    expect(first.code).toBe(0)
    expect(JSON.parse(first.stdout)).toMatchObject({ ok: true, mode: 'policy', modeChanged: true })
    expect(first.stderr).toContain(`myc: ${config} was in open mode (every session saw every tool of every server)`)
    expect(first.stderr).toContain(
      `  role developer: notes (no tools yet: add server:tool patterns to allowedTools in ${path.join(dir, 'skills', 'notes', 'SKILL.md')})`,
    )
    expect(first.stderr).toContain('  a session that chooses no role is role developer')
    expect(first.stderr).toContain(
      `To go back to open mode, remove the skills folder: rm -r ${path.join(dir, 'skills')}`,
    )
    // And it is so: tools shows policy mode now.
    expect(JSON.parse((await cli(['tools', '--json', '--config', config])).stdout)).toMatchObject({
      mode: 'policy',
      role: 'developer',
    })
    // The second skill changes no mode: nothing to say.
    const second = await cli(['skill', 'add', 'more', '--template', 'reader', '--json', '--config', config])
    expect(JSON.parse(second.stdout)).toMatchObject({ modeChanged: false })
    expect(second.stderr).toBe('')
  })
})

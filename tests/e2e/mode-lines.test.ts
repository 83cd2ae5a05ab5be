import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle } from '../helpers/e2e.js'
import { fixtureEntry, waitFor } from '../helpers/runtime.js'
import { Terminal } from '../helpers/terminal.js'
import { requireTool } from '../helpers/tools.js'

const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)

/** An open-mode project over the echo fixture, in a folder of its own. */
function openProject(extra: Record<string, unknown> = {}): { dir: string; config: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-mode-lines-'))
  const config = path.join(dir, 'mycelium.config.json')
  writeFileSync(config, JSON.stringify({ mcpServers: { echo: fixtureEntry('echo') }, ...extra }))
  return { dir, config }
}

/**
 * Mode changes are never silent: on a terminal `myc tools` and `myc status`
 * say above their result which mode and role they show (in a pipe the line
 * goes to stderr, tests/commands/mode-shown.test.ts), and the first skill
 * added to an open project says that open mode has ended.
 */
describe.runIf(hasTmux)('the mode and role on a terminal (tmux)', () => {
  const term = new Terminal('modes')
  afterAll(() => term.close())
  const myc = `${process.execPath} ${bundle}`

  it('myc tools and myc status: a line above the result, on stdout (stderr thrown away here)', async () => {
    requireBundle()
    const { config } = openProject({ session: { lazyTools: true } })
    const script = `${myc} tools --config ${config} 2>/dev/null; echo EXIT0=$?; ${myc} status --config ${config} 2>/dev/null; echo EXIT1=$?`
    term.open('lines', `sh -c '${script}; sleep 60'`, { cols: 250 })
    const screen = () => term.tmux('capture-pane', '-p', '-t', 'lines')
    await waitFor(() => screen().includes('EXIT1='), 30_000, 'both commands')
    const lines = screen().split('\n')
    expect(lines[0]).toMatch(
      /^open mode, lazy \(session\.lazyTools; no skills in .*\): a session is offered mycelium__search_tools and mycelium__call_tool/,
    )
    expect(lines[1]).toMatch(/^mycelium__search_tools /)
    const status = lines.findIndex((l) => l.startsWith('EXIT0=')) + 1
    expect(lines[status]).toMatch(/^open mode, lazy/)
    expect(lines[status + 1]).toBe(`config: ${config}`)
  }, 60_000)

  it('the first skill added to an open project says what changed and how to go back; tools then shows policy mode', async () => {
    requireBundle()
    const { dir, config } = openProject()
    const script = `${myc} tools --config ${config} 2>/dev/null; ${myc} skill add notes --config ${config}; echo EXIT0=$?; ${myc} tools --config ${config} 2>/dev/null; echo EXIT1=$?`
    term.open('first-skill', `sh -c '${script}; sleep 60'`, { cols: 250 })
    const screen = () => term.tmux('capture-pane', '-p', '-t', 'first-skill')
    await waitFor(() => screen().includes('EXIT1='), 30_000, 'the commands')
    const text = screen()
    expect(text).toMatch(/^open mode \(no skills in .*\): a session is offered every tool of every server$/m)
    expect(text).toContain(`myc: ${config} was in open mode`)
    expect(text).toContain('  role developer: notes (no tools yet')
    expect(text).toContain(`To go back to open mode, remove the skills folder: rm -r ${path.join(dir, 'skills')}`)
    expect(text).toMatch(/^policy mode: role developer; a session sees what its role's active skills allow$/m)
  }, 60_000)
})

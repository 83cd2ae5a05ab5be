import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle, runMyc } from '../helpers/e2e.js'
import { fixtureEntry, waitFor } from '../helpers/runtime.js'
import { Terminal } from '../helpers/terminal.js'
import { requireTool } from '../helpers/tools.js'

const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)
const hasScript = requireTool('script', spawnSync('script', ['--version']).status === 0)

/** A project whose `slow` child starts only once its gate file exists (and says it runs by writing its mark). */
function project() {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-progress-'))
  const gate = path.join(dir, 'gate')
  const mark = path.join(dir, 'mark')
  const config = path.join(dir, 'mycelium.config.json')
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {
        echo: fixtureEntry('echo'),
        slow: fixtureEntry('gated-start', { env: { START_GATE: gate, START_MARK: mark } }),
      },
    }),
  )
  return { dir, gate, mark, config }
}

/**
 * Children starting, on a terminal: a line per child on stderr, updated in
 * place while they start and gone once they are up, seen on the screen
 * before the work ends (the slow child waits for a file the test writes
 * only after seeing its line); nothing of it without a terminal or with
 * --json.
 */
describe.runIf(hasTmux)('progress while children start (tmux)', () => {
  const term = new Terminal('progress')
  const screen = (session: string) => term.tmux('capture-pane', '-p', '-t', session)
  /** The screen and what scrolled off it (a terminal may keep cleared text there). */
  const history = (session: string) => term.tmux('capture-pane', '-p', '-S', '-', '-t', session)
  const dirs: string[] = []
  afterAll(() => {
    term.close()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it('myc status shows a line per child while they start, then its report alone', async () => {
    requireBundle()
    const p = project()
    dirs.push(p.dir)
    term.open('status', `${process.execPath} ${bundle} status --config ${p.config}; echo EXIT=$?; sleep 60`)
    // The work has not ended: the slow child cannot start before the gate exists.
    await waitFor(() => /slow\s+starting/.test(screen('status')), 20_000, 'the line of the slow child')
    expect(screen('status')).toMatch(/✓ echo\s+ready: \d+ tools|[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] echo\s+starting/)
    expect(screen('status')).not.toContain('EXIT=')
    writeFileSync(p.gate, '')
    await waitFor(() => screen('status').includes('EXIT='), 20_000, 'the end of myc status')
    const text = history('status')
    expect(text).toMatch(/RUNNING\s+slow/)
    expect(text).toContain('EXIT=0')
    // The lines went away: only the report is left.
    expect(text).not.toMatch(/slow\s+starting|ready: \d+ tools/)
  }, 60_000)

  it('myc serve on a terminal shows the lines too, until its children are up', async () => {
    requireBundle()
    const p = project()
    dirs.push(p.dir)
    term.open('serve', `${process.execPath} ${bundle} serve --config ${p.config}`)
    await waitFor(() => /slow\s+starting/.test(screen('serve')), 20_000, 'the line of the slow child')
    writeFileSync(p.gate, '')
    // Every child's line goes once all are up (on a busy machine echo may still be starting after slow).
    await waitFor(() => !/\bstarting\b/.test(history('serve')), 20_000, 'the lines to go')
    expect(history('serve')).not.toMatch(/ready: \d+ tools/)
  }, 60_000)
})

describe.runIf(hasScript)('no progress lines (script, pipes)', () => {
  const dirs: string[] = []
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it('with --json on a terminal: nothing reaches the terminal while children start', async () => {
    requireBundle()
    const p = project()
    dirs.push(p.dir)
    const out = path.join(p.dir, 'out.json')
    const typescript = path.join(p.dir, 'typescript')
    // script gives myc a real terminal and records every byte written to it, erased ones too.
    const child = spawnSync(
      'sh',
      [
        '-c',
        `(while [ ! -e ${p.mark} ]; do sleep 0.05; done; touch ${p.gate}) & script -qfec "${process.execPath} ${bundle} status --json --config ${p.config} > ${out}" ${typescript}`,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    )
    expect(child.status, child.stderr).toBe(0)
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ ok: true })
    const terminal = readFileSync(typescript, 'utf8')
    expect(terminal).not.toMatch(/starting|ready:|\u001b\[\d*A/)
  })

  it('with stderr not a terminal: no lines and no cursor moves', async () => {
    requireBundle()
    const p = project()
    dirs.push(p.dir)
    writeFileSync(p.gate, '')
    const r = runMyc(['status', '--config', p.config])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/RUNNING\s+slow/)
    expect(r.stderr).not.toMatch(/starting|ready:|\u001b\[/)
    expect(existsSync(p.mark)).toBe(true)
  })
})

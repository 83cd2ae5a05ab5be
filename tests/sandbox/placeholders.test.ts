import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, realpathSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load.js'
import { stateRoots } from '../../src/config/state-roots.js'
import { hasBwrap, runInBwrap, unguardedSandbox } from '../helpers/sandbox.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * myc's own placeholders (empty stand-ins at guarded paths that do not exist
 * yet) are never reported as made by the command. Run as whoever runs the
 * suite (root here, where 0555 stops nothing); the unprivileged path is in
 * tests/e2e/sandbox-cli.test.ts.
 */
describe.runIf(hasBwrap)('placeholders (real bubblewrap)', () => {
  const sandbox = unguardedSandbox()
  const run = async (dir: string, command: string) =>
    runInBwrap(sandbox, dir, command, { hiddenPaths: stateRoots(await loadConfig({ cwd: dir, env: {} }), {}) })

  it('a folder without .mycelium: no false "created during it", and nothing is left behind', async () => {
    const bare = realpathSync(mkdtempSync(path.join(tmpdir(), 'myc-ph-bare-')))
    const project = realpathSync(mkdtempSync(path.join(tmpdir(), 'myc-ph-proj-')))
    // A project whose guarded state is nested: .mycelium/memory, .mycelium/sessions and the audit file under a missing .mycelium.
    writeFileSync(
      path.join(project, 'mycelium.config.json'),
      JSON.stringify({ audit: { file: '.mycelium/logs/audit.jsonl' }, agent: { sessionsDir: '.mycelium/s' } }),
    )
    for (const dir of [bare, project]) {
      const before = readdirSync(dir).sort()
      for (let i = 0; i < 2; i++) {
        const outcome = await run(dir, 'ls -a')
        expect(outcome.exitCode).toBe(0)
        expect(outcome.warnings, dir).toBeUndefined()
        // Inside, the missing state is held by its placeholder.
        expect(outcome.stdout.split('\n')).toContain('.mycelium')
      }
      expect(readdirSync(dir).sort()).toEqual(before)
    }
  })

  it('a placeholder that really changed during a run is still moved away and reported', async () => {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'myc-ph-race-')))
    spawnSync('mkfifo', [path.join(dir, 'go')])
    // The command waits on the fifo while another process (this test, as a second myc would) writes the placeholder.
    const running = run(dir, 'read line < go; echo "$line"')
    const envrc = path.join(dir, '.envrc')
    await waitFor(() => readdirSync(dir).includes('.envrc'), 10_000, 'the .envrc placeholder')
    writeFileSync(envrc, 'echo pwned\n')
    writeFileSync(path.join(dir, 'go'), 'went\n')
    const outcome = await running
    expect(outcome.stdout).toBe('went\n')
    expect(outcome.warnings).toEqual([
      expect.stringMatching(/\.envrc did not exist before .* moved it to .*myc-quarantine-/),
    ])
    expect(readdirSync(dir)).toEqual(['go'])
  })
})

import { spawnSync } from 'node:child_process'
import { chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundle, requireBundle } from '../helpers/e2e.js'
import { requireTool } from '../helpers/tools.js'

const hasBwrap = requireTool('bwrap', process.platform === 'linux' && spawnSync('bwrap', ['--version']).status === 0)
const NOBODY = ['--reuid=65534', '--regid=65534', '--clear-groups', '--']
const canDropToNobody = process.getuid?.() === 0 && spawnSync('setpriv', [...NOBODY, 'true']).status === 0

/** `myc sandbox exec -- LINE` as the unprivileged user nobody, in a new folder nobody owns (which it returns). */
function execAsNobody(line: string) {
  const ws = mkdtempSync(path.join(tmpdir(), 'myc-cli-nobody-'))
  chownSync(ws, 65534, 65534)
  requireBundle()
  const r = spawnSync('setpriv', [...NOBODY, process.execPath, bundle, 'sandbox', 'exec', '--', line], {
    encoding: 'utf8',
    cwd: ws,
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? '', HOME: ws },
  })
  return { ws, ...r }
}

// What needs the program as a process of its own: another user (setpriv),
// and the home folder of its own environment (the sandbox hides the
// user's state by HOME). The rest of myc sandbox and doctor is tested in
// this process (tests/commands/sandbox.test.ts).
describe('myc sandbox exec (build/myc.cjs) as its own process', () => {
  it.runIf(hasBwrap && canDropToNobody)(
    'exec as an unprivileged user in a folder without .mycelium: no false "created during it", nothing left',
    () => {
      const { ws, ...r } = execAsNobody('ls -a')
      expect(r.status, r.stderr).toBe(0)
      expect(r.stdout.split('\n')).toContain('.mycelium')
      expect(r.stderr).not.toMatch(/created during it|myc-quarantine/)
      expect(readdirSync(ws)).toEqual([])
    },
  )

  it.runIf(hasBwrap && canDropToNobody)(
    'exec as an unprivileged user: a repository hidden in a folder it made unreadable is moved away whole',
    () => {
      const line = `mkdir -p a/b && git init -q a/b && git -C a/b config core.fsmonitor 'touch ../../MARK' && chmod 000 a`
      const { ws, ...r } = execAsNobody(line)
      expect(r.status, r.stderr).toBe(0)
      expect(r.stderr).toMatch(
        /a could not be searched for repositories after the command changed it; myc moved it to /,
      )
      expect(readdirSync(ws)).toEqual([])
    },
  )

  it.runIf(hasBwrap)('exec in the home folder: the OAuth store’s key and logins stay out of reach', () => {
    const home = mkdtempSync(path.join(tmpdir(), 'myc-cli-home-'))
    mkdirSync(path.join(home, '.config', 'mycelium'), { recursive: true })
    writeFileSync(path.join(home, '.config', 'mycelium', 'oauth-token.key'), 'the-key\n')
    writeFileSync(path.join(home, '.config', 'mycelium', 'oauth-tokens.json'), '{"version":1,"entries":{}}\n')
    writeFileSync(path.join(home, 'notes.txt'), 'mine\n')
    requireBundle()
    const r = spawnSync(
      process.execPath,
      [bundle, 'sandbox', 'exec', '--', 'cat .config/mycelium/* notes.txt; echo k > .config/mycelium/oauth-token.key'],
      { encoding: 'utf8', cwd: home, timeout: 60_000, env: { PATH: process.env.PATH ?? '', HOME: home } },
    )
    expect(r.stdout).toBe('mine\n')
    expect(readFileSync(path.join(home, '.config', 'mycelium', 'oauth-token.key'), 'utf8')).toBe('the-key\n')
  })
})

import { spawnSync } from 'node:child_process'
import { chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
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

function myc(args: string[], cwd = tmpdir()) {
  requireBundle()
  const r = spawnSync(process.execPath, [bundle, ...args], { encoding: 'utf8', cwd, timeout: 60_000, input: '' })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('myc sandbox and myc doctor (build/myc.cjs)', () => {
  it('guard: one argument is a shell line, several an argv; exit 3 when blocked', () => {
    const blocked = myc(['sandbox', 'guard', '--json', '--', 'curl x | sh'])
    expect(blocked.code).toBe(3)
    expect(JSON.parse(blocked.stdout)).toMatchObject({
      ok: false,
      error: { code: 'guard_blocked', rule: 'pipe-to-shell' },
    })
    expect(myc(['sandbox', 'guard', '--', 'rm', '-rf', '/']).code).toBe(3)
    const allowed = myc(['sandbox', 'guard', '--', 'rm', '-rf', 'node_modules'])
    expect(allowed.code).toBe(0)
    expect(allowed.stdout.trim()).toBe('allowed')
    expect(myc(['sandbox', 'guard']).code).toBe(2)
  })

  it('check reports every executor with a reason for the ones that do not work', () => {
    const r = myc(['sandbox', 'check', '--json'])
    const doc = JSON.parse(r.stdout)
    expect(doc.executors.map((e: { executor: string }) => e.executor)).toEqual([
      'bubblewrap',
      'sandbox-exec',
      'docker',
      'none',
    ])
    for (const e of doc.executors) if (!e.works) expect(e.reason && e.fix).toBeTruthy()
    expect(r.code).toBe(doc.ok ? 0 : 3)
  })

  it.runIf(hasBwrap)('exec runs in the sandbox with the command’s exit code; blocked commands exit 3', () => {
    const ws = mkdtempSync(path.join(tmpdir(), 'myc-cli-ws-'))
    const ok = myc(['sandbox', 'exec', '--', 'sh', '-c', 'echo inside > f.txt && cat f.txt'], ws)
    expect(ok.code).toBe(0)
    expect(ok.stdout).toBe('inside\n')
    const fail = myc(['sandbox', 'exec', '--json', '--', 'touch /etc/x'], ws)
    expect(fail.code).toBe(1)
    expect(JSON.parse(fail.stdout)).toMatchObject({ ok: true, executor: 'bubblewrap', exitCode: 1 })
    expect(myc(['sandbox', 'exec', '--', 'rm -rf /'], ws).code).toBe(3)
    expect(myc(['sandbox', 'exec', '--trust', 'restricted', '--', 'echo hi'], ws).code).toBe(2)
    expect(myc(['sandbox', 'exec', '--trust', 'sandboxed', '--executor', 'none', '--', 'true'], ws).code).toBe(1)
  })

  it.runIf(hasBwrap)(
    'exec --trust restricted: one word without shell syntax is an argv of one (-- ls), a shell line is refused',
    () => {
      const ws = mkdtempSync(path.join(tmpdir(), 'myc-cli-ws-'))
      writeFileSync(path.join(ws, 'here.txt'), '')
      const ls = myc(['sandbox', 'exec', '--trust', 'restricted', '--', 'ls'], ws)
      expect(ls.code, ls.stderr).toBe(0)
      expect(ls.stdout).toContain('here.txt')
      const line = myc(['sandbox', 'exec', '--trust', 'restricted', '--', 'ls | wc -l'], ws)
      expect(line.code).toBe(2)
      expect(line.stderr).toMatch(/without a shell/)
    },
  )

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

  it('doctor checks node, config, servers and executors, exit 3 on failure', () => {
    const good = myc([
      'doctor',
      '--json',
      '--config',
      writeConfig({ mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } } }),
    ])
    const doc = JSON.parse(good.stdout)
    expect(doc.checks.map((c: { name: string }) => c.name)).toEqual(
      expect.arrayContaining(['node', 'config', 'server echo']),
    )
    expect(good.code).toBe(doc.ok ? 0 : 3)
    const bad = myc([
      'doctor',
      '--json',
      '--config',
      writeConfig({ mcpServers: { broken: { command: '/no/such', restart: { maxRetries: 0 } } } }),
    ])
    expect(bad.code).toBe(3)
    expect(JSON.parse(bad.stdout).checks.find((c: { name: string }) => c.name === 'server broken')).toMatchObject({
      status: 'fail',
    })
  })
})

describe('myc doctor on a missing command', () => {
  it('names what is missing and what installs it (Node.js provides npx), not a circular hint', () => {
    const r = myc([
      'doctor',
      '--json',
      '--config',
      writeConfig({
        mcpServers: { fetcher: { command: '/no/such/dir/npx', args: ['-y', 'some-mcp'], restart: { maxRetries: 0 } } },
      }),
    ])
    expect(r.code).toBe(3)
    const check = JSON.parse(r.stdout).checks.find((c: { name: string }) => c.name === 'server fetcher')
    expect(check).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/command not found: "\/no\/such\/dir\/npx"/),
    })
    expect(check.fix).toMatch(/^\/no\/such\/dir\/npx is missing .*install Node\.js .*provides npx/)
    expect(check.fix).not.toMatch(/myc status/)
  })
})

describe('flags after --', () => {
  it('belong to the command, not to myc', () => {
    const r = myc(['sandbox', 'guard', '--', 'ls', '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe('allowed')
  })
})

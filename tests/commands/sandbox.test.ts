import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runHere } from '../helpers/cli.js'
import { writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { requireTool } from '../helpers/tools.js'

const hasBwrap = requireTool('bwrap', process.platform === 'linux' && spawnSync('bwrap', ['--version']).status === 0)
const myc = (args: string[], cwd = tmpdir()) => runHere(args, '', { cwd })

describe('myc sandbox and myc doctor (in process)', () => {
  it('guard: one argument is a shell line, several an argv; exit 3 when blocked', async () => {
    const blocked = await myc(['sandbox', 'guard', '--json', '--', 'curl x | sh'])
    expect(blocked.code).toBe(3)
    expect(JSON.parse(blocked.stdout)).toMatchObject({
      ok: false,
      error: { code: 'guard_blocked', rule: 'pipe-to-shell' },
    })
    expect((await myc(['sandbox', 'guard', '--', 'rm', '-rf', '/'])).code).toBe(3)
    const allowed = await myc(['sandbox', 'guard', '--', 'rm', '-rf', 'node_modules'])
    expect(allowed.code).toBe(0)
    expect(allowed.stdout.trim()).toBe('allowed')
    expect((await myc(['sandbox', 'guard'])).code).toBe(2)
  })

  it('check reports every executor with a reason for the ones that do not work', async () => {
    const r = await myc(['sandbox', 'check', '--json'])
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

  it.runIf(hasBwrap)('exec runs in the sandbox with the command’s exit code; blocked commands exit 3', async () => {
    const ws = mkdtempSync(path.join(tmpdir(), 'myc-cli-ws-'))
    const ok = await myc(['sandbox', 'exec', '--', 'sh', '-c', 'echo inside > f.txt && cat f.txt'], ws)
    expect(ok.code).toBe(0)
    expect(ok.stdout).toBe('inside\n')
    const fail = await myc(['sandbox', 'exec', '--json', '--', 'touch /etc/x'], ws)
    expect(fail.code).toBe(1)
    expect(JSON.parse(fail.stdout)).toMatchObject({ ok: true, executor: 'bubblewrap', exitCode: 1 })
    expect((await myc(['sandbox', 'exec', '--', 'rm -rf /'], ws)).code).toBe(3)
    expect((await myc(['sandbox', 'exec', '--trust', 'restricted', '--', 'echo hi'], ws)).code).toBe(2)
    expect((await myc(['sandbox', 'exec', '--trust', 'sandboxed', '--executor', 'none', '--', 'true'], ws)).code).toBe(
      1,
    )
  })

  it.runIf(hasBwrap)(
    'exec --trust restricted: one word without shell syntax is an argv of one (-- ls), a shell line is refused',
    async () => {
      const ws = mkdtempSync(path.join(tmpdir(), 'myc-cli-ws-'))
      writeFileSync(path.join(ws, 'here.txt'), '')
      const ls = await myc(['sandbox', 'exec', '--trust', 'restricted', '--', 'ls'], ws)
      expect(ls.code, ls.stderr).toBe(0)
      expect(ls.stdout).toContain('here.txt')
      const line = await myc(['sandbox', 'exec', '--trust', 'restricted', '--', 'ls | wc -l'], ws)
      expect(line.code).toBe(2)
      expect(line.stderr).toMatch(/without a shell/)
    },
  )

  it('doctor checks node, config, servers and executors, exit 3 on failure', async () => {
    const good = await myc([
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
    const bad = await myc([
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
  it('names what is missing and what installs it (Node.js provides npx), not a circular hint', async () => {
    const r = await myc([
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
  it('belong to the command, not to myc', async () => {
    const r = await myc(['sandbox', 'guard', '--', 'ls', '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe('allowed')
  })
})

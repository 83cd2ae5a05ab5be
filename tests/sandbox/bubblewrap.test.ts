import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bubblewrapArgs } from '../../src/sandbox/bubblewrap-args.js'
import { ShellGuard } from '../../src/sandbox/guard/guard.js'
import { ExecutorProbe } from '../../src/sandbox/probe.js'
import { Sandbox } from '../../src/sandbox/sandbox.js'
import { requireTool } from '../helpers/tools.js'
import { waitFor } from '../helpers/wait-for.js'

const hasBwrap = requireTool('bwrap', process.platform === 'linux' && spawnSync('bwrap', ['--version']).status === 0)
const isRoot = process.getuid?.() === 0
const canDropToNobody =
  isRoot && spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', 'true']).status === 0

/** A host listener on loopback and a Unix socket under /tmp: neither may be reachable inside. */
let tcp: Server
let unix: Server
let port = 0
const socketPath = path.join(tmpdir(), `myc-host-${process.pid}.sock`)
const hostSecretHome = mkdtempSync(path.join(tmpdir(), 'myc-home-'))
writeFileSync(path.join(hostSecretHome, 'secret.txt'), 'host secret')

beforeAll(async () => {
  tcp = createServer((s) => s.end('hello from the host\n'))
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r))
  port = (tcp.address() as { port: number }).port
  rmSync(socketPath, { force: true })
  unix = createServer((s) => s.end('unix hello\n'))
  await new Promise<void>((r) => unix.listen(socketPath, r))
  chmodSync(socketPath, 0o777)
})
afterAll(() => {
  tcp?.close()
  unix?.close()
})

type Runner = (
  script: string,
  opts?: { trust?: 'sandboxed' | 'restricted'; timeoutMs?: number },
) => Promise<{ code: number | null; stdout: string; stderr: string; timedOut?: boolean }>

function workspace(): string {
  const ws = mkdtempSync(path.join(tmpdir(), 'myc-ws-'))
  chmodSync(ws, 0o777)
  return ws
}

/** As root, through the real Sandbox (guard, probe, builder, limits). */
function rootRunner(ws: string): Runner {
  const sandbox = new Sandbox({ guard: new ShellGuard(), probe: new ExecutorProbe() })
  return async (script, opts = {}) => {
    const trust = opts.trust ?? 'sandboxed'
    const r = await sandbox.run({
      command: ['bash', '-c', script],
      trust,
      executor: 'bubblewrap',
      workspace: ws,
      timeoutMs: opts.timeoutMs ?? 10_000,
      outputLimitBytes: 100_000,
      network: { allow: [] },
    })
    if (!r.ok) throw new Error(r.error.message)
    return {
      code: r.outcome.exitCode,
      stdout: r.outcome.stdout,
      stderr: r.outcome.stderr,
      timedOut: r.outcome.timedOut,
    }
  }
}

/** As the unprivileged user nobody: the same bwrap arguments, started through setpriv. */
function nobodyRunner(ws: string): Runner {
  return async (script, opts = {}) => {
    const args = bubblewrapArgs({
      trust: opts.trust ?? 'sandboxed',
      workspace: ws,
      home: hostSecretHome,
      masks: [],
      env: {},
      argv: ['bash', '-c', script],
    })
    const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', 'bwrap', ...args], {
      encoding: 'utf8',
      timeout: opts.timeoutMs ?? 10_000,
    })
    return { code: r.status, stdout: r.stdout, stderr: r.stderr }
  }
}

const users: Array<[string, boolean, (ws: string) => Runner]> = [
  ['root', isRoot, rootRunner],
  ['an unprivileged user (nobody)', canDropToNobody, nobodyRunner],
]

describe.runIf(hasBwrap)('real bubblewrap', () => {
  for (const [who, enabled, make] of users) {
    describe.runIf(enabled)(`as ${who}`, () => {
      const ws = workspace()
      const run = make(ws)

      it('writes inside the workspace work', async () => {
        const r = await run('echo made > inside.txt && cat inside.txt')
        expect(r.stdout).toBe('made\n')
        expect(readFileSync(path.join(ws, 'inside.txt'), 'utf8')).toBe('made\n')
      })

      it('writes elsewhere fail and leave nothing', async () => {
        const marker = `myc-escape-${process.pid}-${who.length}`
        const r = await run(
          `touch /etc/${marker}; touch /usr/${marker}; touch /var/${marker}; echo x > /tmp/${marker}; ls /tmp`,
        )
        expect(r.stderr).toMatch(/Read-only file system/)
        for (const dir of ['/etc', '/usr', '/var', tmpdir()])
          expect(existsSync(path.join(dir, marker)), dir).toBe(false)
      })

      it('cannot read the home folder, reach host Unix sockets or the network', async () => {
        const home = await run(
          `cat ${hostSecretHome}/secret.txt || echo no-home; cat ~/secret.txt 2>/dev/null || echo no-home-2`,
        )
        expect(home.stdout).not.toContain('host secret')
        const sock = await run(`test -S ${socketPath} && echo socket-visible || echo socket-hidden`)
        expect(sock.stdout.trim()).toBe('socket-hidden')
        const net = await run(
          `(echo ping > /dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo reached || echo no-network; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '`,
        )
        expect(net.stdout).toContain('no-network')
        // The same probe outside the sandbox does reach the listener (the test can fail).
        expect(
          spawnSync(
            'bash',
            ['-c', `(echo ping > /dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo reached || echo no-network`],
            { encoding: 'utf8' },
          ).stdout.trim(),
        ).toBe('reached')
        expect(net.stdout).not.toContain('hello from the host')
        expect(net.stdout.trim().split('\n').slice(1)).toEqual(['lo'])
      })

      it('cannot remount / read-write, and sees no other process', async () => {
        const r = await run(
          `mount -o remount,rw / 2>&1 || true; touch /etc/after-remount 2>&1 || true; test -e /proc/${process.pid} && echo host-visible || echo host-hidden; ls /proc | grep -cE '^[0-9]+$'`,
        )
        expect(existsSync('/etc/after-remount')).toBe(false)
        const lines = r.stdout.trim().split('\n')
        expect(lines).toContain('host-hidden')
        expect(Number(lines.at(-1))).toBeLessThan(6)
      })

      it('restricted cannot write even the workspace', async () => {
        const r = await run('echo x > nope.txt', { trust: 'restricted' })
        expect(r.code).not.toBe(0)
        expect(existsSync(path.join(ws, 'nope.txt'))).toBe(false)
      })
    })
  }

  describe.runIf(isRoot)('limits', () => {
    it('a timeout kills the whole process tree', async () => {
      const ws = workspace()
      const tag = `31.${process.pid % 1000}`
      const r = await rootRunner(ws)(`sleep ${tag} & sleep ${tag} & (sleep ${tag}) & wait`, { timeoutMs: 700 })
      expect(r.timedOut).toBe(true)
      const left = () => spawnSync('pgrep', ['-f', `sleep ${tag}`], { encoding: 'utf8' }).stdout.trim()
      await waitFor(() => left() === '', 5_000, `every "sleep ${tag}" to be gone`)
    })

    it('caps output with a marker and file sizes through prlimit', async () => {
      const ws = workspace()
      const sandbox = new Sandbox({ guard: new ShellGuard(), probe: new ExecutorProbe() })
      const r = await sandbox.run({
        command: 'head -c 100000 /dev/zero | tr "\\0" a; head -c 2000000 /dev/zero > big.bin; echo done',
        trust: 'sandboxed',
        executor: 'bubblewrap',
        workspace: ws,
        timeoutMs: 10_000,
        outputLimitBytes: 1_000,
        network: { allow: [] },
        maxFileBytes: 100_000,
      })
      expect(r.ok && r.outcome.truncated).toBe(true)
      expect(r.ok && r.outcome.stdout).toMatch(/^a{1000}\n\[… output truncated by myc …\]\n$/)
      const size = (() => {
        try {
          return readFileSync(path.join(ws, 'big.bin')).length
        } catch {
          return 0
        }
      })()
      expect(size).toBeLessThanOrEqual(100_000)
    })

    it('keeps .git and the protected config out of reach inside a writable workspace', async () => {
      const ws = workspace()
      mkdirSync(path.join(ws, '.git', 'hooks'), { recursive: true })
      writeFileSync(path.join(ws, 'mycelium.config.json'), '{}')
      const sandbox = new Sandbox({ guard: new ShellGuard(), probe: new ExecutorProbe() })
      const r = await sandbox.run({
        command: 'echo evil > .git/hooks/pre-commit; echo evil > mycelium.config.json; echo ok > fine.txt',
        trust: 'sandboxed',
        executor: 'bubblewrap',
        workspace: ws,
        timeoutMs: 10_000,
        outputLimitBytes: 10_000,
        network: { allow: [] },
        hiddenPaths: [{ path: path.join(ws, 'mycelium.config.json'), kind: 'file', access: 'hidden' }],
      })
      expect(r.ok).toBe(true)
      expect(existsSync(path.join(ws, '.git', 'hooks', 'pre-commit'))).toBe(false)
      expect(readFileSync(path.join(ws, 'mycelium.config.json'), 'utf8')).toBe('{}')
      expect(readFileSync(path.join(ws, 'fine.txt'), 'utf8')).toBe('ok\n')
    })
  })
})

describe('refusals', () => {
  const sandbox = new Sandbox({
    guard: new ShellGuard(),
    probe: { probe: async (e) => ({ executor: e, works: false, reason: `${e} is broken here`, fix: `repair ${e}` }) },
  })
  const base = {
    trust: 'sandboxed' as const,
    executor: 'auto' as const,
    workspace: tmpdir(),
    timeoutMs: 1000,
    outputLimitBytes: 1000,
    network: { allow: [] },
  }

  it('sandboxed never falls back to no sandbox, and says how to fix it', async () => {
    const r = await sandbox.run({ ...base, command: 'echo hi' })
    expect(r).toMatchObject({ ok: false, error: { code: 'sandbox_unavailable' } })
    expect(!r.ok && r.error.message).toMatch(/does not fall back to running unsandboxed.*fix: repair/)
  })

  it('refuses executor none for restricted and sandboxed', async () => {
    const r = await sandbox.run({ ...base, executor: 'none', command: ['true'] })
    expect(!r.ok && r.error.message).toMatch(/needs a sandbox, and executor "none" is none/)
  })

  it('restricted takes no shell line', async () => {
    const r = await sandbox.run({ ...base, trust: 'restricted', command: 'echo hi' })
    expect(!r.ok && r.error.message).toMatch(/without a shell/)
  })

  it('the guard judges targets against the request’s workspace: inside it may go, outside it may not', async () => {
    const ws = workspace()
    mkdirSync(path.join(ws, 'build'))
    const inside = await sandbox.run({ ...base, workspace: ws, trust: 'unrestricted', command: `rm -rf ${ws}/build` })
    expect(inside.ok && inside.outcome.exitCode).toBe(0)
    expect(existsSync(path.join(ws, 'build'))).toBe(false)
    const outside = await sandbox.run({
      ...base,
      workspace: ws,
      trust: 'unrestricted',
      // Spelled from inside the workspace, it leaves it: /usr/lib.
      command: `rm -rf ${ws}/${path.relative(ws, '/usr/lib')}`,
    })
    expect(outside).toMatchObject({ ok: false, error: { code: 'guard_blocked' } })
  })

  it('unrestricted runs with no sandbox, but the guard still applies', async () => {
    const ok = await sandbox.run({ ...base, trust: 'unrestricted', command: 'echo hi' })
    expect(ok.ok && ok.outcome).toMatchObject({ executor: 'none', stdout: 'hi\n', exitCode: 0 })
    const blocked = await sandbox.run({ ...base, trust: 'unrestricted', command: 'rm -rf /' })
    expect(blocked).toMatchObject({ ok: false, error: { code: 'guard_blocked', rule: 'rm-recursive-critical' } })
  })
})

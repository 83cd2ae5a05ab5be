import { spawnSync } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ShellGuard } from '../../src/sandbox/guard/guard.js'
import { hostAllowed } from '../../src/sandbox/network-proxy.js'
import { ExecutorProbe } from '../../src/sandbox/probe.js'
import { Sandbox } from '../../src/sandbox/sandbox.js'
import { requireTool } from '../helpers/tools.js'

const ready = requireTool(
  'bwrap, socat and curl',
  process.platform === 'linux' &&
    ['bwrap', 'socat', 'curl'].every((p) => spawnSync('sh', ['-c', `command -v ${p}`]).status === 0),
)

describe('hostAllowed', () => {
  it('matches exact names and *.domain subdomains, case-insensitively, deny by default', () => {
    expect(hostAllowed('registry.npmjs.org', ['registry.npmjs.org'])).toBe(true)
    expect(hostAllowed('REGISTRY.npmjs.org.', ['registry.npmjs.org'])).toBe(true)
    expect(hostAllowed('api.github.com', ['*.github.com'])).toBe(true)
    expect(hostAllowed('github.com', ['*.github.com'])).toBe(false)
    expect(hostAllowed('evilgithub.com', ['*.github.com'])).toBe(false)
    expect(hostAllowed('github.com.evil.io', ['github.com'])).toBe(false)
    expect(hostAllowed('anything', [])).toBe(false)
  })
})

describe.runIf(ready)('network allow-list through the filtering proxy (bubblewrap)', () => {
  let server: Server
  let port = 0
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('hello through the proxy\n'))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    port = (server.address() as { port: number }).port
  })
  afterAll(() => server?.close())

  const run = (command: string[], allow: string[]) =>
    new Sandbox({ guard: new ShellGuard(), probe: new ExecutorProbe() }).run({
      command,
      trust: 'sandboxed',
      executor: 'bubblewrap',
      workspace: mkdtempSync(path.join(tmpdir(), 'myc-net-')),
      timeoutMs: 15_000,
      outputLimitBytes: 10_000,
      network: { allow },
    })

  it('lets an allowed host through', async () => {
    const r = await run(['curl', '-sS', '-p', `http://127.0.0.1:${port}/`], ['127.0.0.1'])
    expect(r.ok && r.outcome.stdout, JSON.stringify(r)).toBe('hello through the proxy\n')
  })

  it('refuses a host that is not on the list', async () => {
    const r = await run(['curl', '-sS', '-p', `http://localhost:${port}/`], ['127.0.0.1'])
    expect(r.ok && r.outcome.exitCode).not.toBe(0)
    expect(r.ok && r.outcome.stdout).not.toContain('hello')
  })

  it('allows no direct connection, even to an allowed host', async () => {
    const r = await run(['curl', '-sS', '--noproxy', '*', `http://127.0.0.1:${port}/`], ['127.0.0.1'])
    expect(r.ok && r.outcome.exitCode).not.toBe(0)
    expect(r.ok && r.outcome.stdout).not.toContain('hello')
  })
})

describe.runIf(ready)('the filtering proxy on a loopback port (what sandbox-exec uses)', () => {
  it('tunnels allowed hosts and answers 403 to others', async () => {
    const { startConnectProxy } = await import('../../src/sandbox/network-proxy.js')
    const server = createServer((_req, res) => res.end('via loopback proxy\n'))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const port = (server.address() as { port: number }).port
    const proxy = await startConnectProxy(['127.0.0.1'], 'loopback')
    try {
      // curl runs asynchronously: the proxy lives in this process and must keep serving.
      const { execFile } = await import('node:child_process')
      const curl = (host: string) =>
        new Promise<{ code: number; stdout: string }>((resolve) => {
          execFile(
            'curl',
            ['-sS', '--max-time', '10', '-p', '-x', `http://127.0.0.1:${proxy.port}`, `http://${host}:${port}/`],
            (error, stdout) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout }),
          )
        })
      expect((await curl('127.0.0.1')).stdout).toBe('via loopback proxy\n')
      const refused = await curl('localhost')
      expect(refused.code).not.toBe(0)
      expect(proxy.refused).toContain('localhost')
    } finally {
      await proxy.close()
      server.close()
    }
  })
})

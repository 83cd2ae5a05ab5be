import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'

function myc(args: string[], input?: string, options: { cwd?: string; env?: Record<string, string> } = {}) {
  requireBundle()
  const result = spawnSync(process.execPath, [bundle, ...args], { encoding: 'utf8', input: input ?? '', timeout: 60_000, ...(options.cwd ? { cwd: options.cwd } : {}), ...(options.env ? { env: { ...process.env, ...options.env } } : {}) })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

const echoConfig = () => writeConfig({ mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } } })

describe('myc (build/myc.cjs) command line', () => {
  it('MYC_CONFIG names the config from any folder; --config wins over it', () => {
    const config = echoConfig()
    const { code, stdout } = myc(['tools', '--json'], '', { cwd: tmpdir(), env: { MYC_CONFIG: config } })
    expect(code).toBe(0)
    expect((JSON.parse(stdout) as { tools: Array<{ id: string }> }).tools.map((t) => t.id)).toContain('echo:echo')
    const flag = myc(['tools', '--json', '--config', config], '', { cwd: tmpdir(), env: { MYC_CONFIG: '/nonexistent.json' } })
    expect(flag.code).toBe(0)
  })

  it('--role on a config without skills is a usage error that explains open mode', () => {
    const { code, stderr } = myc(['tools', '--role', 'reviewer', '--config', echoConfig()])
    expect(code).toBe(2)
    expect(stderr).toMatch(/--role reviewer: .* has no skills, so myc runs in open mode/)
  })

  it('the MCP Inspector CLI runs myc over stdio with MYC_CONFIG (-e), as the README shows', () => {
    const inspector = path.join(repoRoot, 'node_modules', '@modelcontextprotocol', 'inspector', 'cli', 'build', 'cli.js')
    const r = spawnSync(process.execPath, [inspector, '--cli', '-e', `MYC_CONFIG=${echoConfig()}`, process.execPath, bundle, '--method', 'tools/list'], { encoding: 'utf8', timeout: 60_000, cwd: tmpdir() })
    expect(r.status, r.stderr).toBe(0)
    expect((JSON.parse(r.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain('echo__echo')
  })

  it('prints its version', () => {
    const { code, stdout } = myc(['--version'])
    expect(code).toBe(0)
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  })

  it('prints usage with --help, on stdout', () => {
    const { code, stdout } = myc(['--help'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/serve/)
    expect(stdout).toMatch(/status/)
  })

  it('shows the usage of a nested command', () => {
    const { code, stdout } = myc(['skills', 'lint', '--help'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/myc skills lint/)
    expect(stdout).toMatch(/exits 3 on problems/)
  })

  it('rejects an unknown command with exit 2 and the list of commands', () => {
    const { code, stderr } = myc(['frobnicate'])
    expect(code).toBe(2)
    expect(stderr).toMatch(/Unknown command "frobnicate"/)
  })

  it('myc status --json reports each server', () => {
    const { code, stdout } = myc(['status', '--json', '--config', echoConfig()])
    expect(code).toBe(0)
    const report = JSON.parse(stdout)
    expect(report.ok).toBe(true)
    expect(report.servers).toHaveLength(1)
    expect(report.servers[0]).toMatchObject({ key: 'echo', state: 'RUNNING', tools: 5, prompts: 1, resources: 1, serverInfo: { name: 'echo' } })
    expect(Date.parse(report.servers[0].startedAt)).not.toBeNaN()
  })

  it('myc status exits 3 and names the error when a server fails', () => {
    const config = writeConfig({ mcpServers: { broken: { command: '/no/such/binary', restart: { maxRetries: 0 } } } })
    const { code, stdout } = myc(['status', '--json', '--config', config])
    expect(code).toBe(3)
    const report = JSON.parse(stdout)
    expect(report.ok).toBe(false)
    expect(report.servers[0]).toMatchObject({ key: 'broken', state: 'FAILED' })
    expect(report.servers[0].error).toMatch(/command not found/)
  })

  it('myc tools --json lists canonical ids and wire names', () => {
    const { code, stdout } = myc(['tools', '--json', '--config', echoConfig()])
    expect(code).toBe(0)
    const { tools } = JSON.parse(stdout)
    expect(tools.map((t: { id: string }) => t.id)).toEqual(['echo:echo', 'echo:add', 'echo:image', 'echo:fail', 'echo:log'])
    expect(tools[0]).toMatchObject({ id: 'echo:echo', wireName: 'echo__echo', server: 'echo', description: 'Returns its message' })
  })

  it('a bad config exits 2 with a message naming the file and key, as text and as JSON', () => {
    const config = writeConfig({ mcpServers: { echo: { comand: 'node' } } })
    const text = myc(['status', '--config', config])
    expect(text.code).toBe(2)
    expect(text.stderr).toContain(config)
    expect(text.stderr).toMatch(/mcpServers\.echo/)
    const json = myc(['tools', '--json', '--config', config])
    expect(json.code).toBe(2)
    const doc = JSON.parse(json.stdout)
    expect(doc).toMatchObject({ ok: false, error: { code: 'config_invalid' } })
    expect(doc.error.message).toMatch(/command/)
  })

  it('a missing --config file exits 2', () => {
    const { code, stderr } = myc(['status', '--config', '/nowhere/mycelium.config.json'])
    expect(code).toBe(2)
    expect(stderr).toContain('/nowhere/mycelium.config.json')
  })

  it('with no subcommand and a pipe on stdin, serves MCP (what client configs run)', () => {
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } })
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} })
    const { code, stdout } = myc(['--config', echoConfig()], `${init}\n${list}\n`)
    expect(code).toBe(0)
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l))
    expect(lines[0].result.serverInfo.name).toBe('mycelium')
    expect(lines[1].result.tools.map((t: { name: string }) => t.name)).toContain('echo__echo')
    // stdout carries only the protocol.
    expect(lines.every((l: { jsonrpc: string }) => l.jsonrpc === '2.0')).toBe(true)
  })
})

describe('myc (build/myc.cjs): a strict command line', () => {
  it('an unknown flag, a flag without its value or an extra argument exits 2 naming it and the nearest valid one', () => {
    const typo = myc(['status', '--jsno'])
    expect(typo.code).toBe(2)
    expect(typo.stdout).toBe('')
    expect(typo.stderr).toContain('unknown flag --jsno for myc status (did you mean --json?)')
    const role = myc(['tools', '--rol', 'guest'])
    expect(role.code).toBe(2)
    expect(role.stderr).toContain('unknown flag --rol for myc tools (did you mean --role?)')
    const noValue = myc(['tools', '--role'])
    expect(noValue.code).toBe(2)
    expect(noValue.stderr).toContain('--role needs a value for myc tools')
    const extra = myc(['status', 'extra-arg'])
    expect(extra.code).toBe(2)
    expect(extra.stderr).toContain('unexpected argument "extra-arg" for myc status')
    const nested = myc(['sandbox', 'exec', '--trust', 'restricted', '--bogus-flag', '--', 'echo', '--bogus-flag'])
    expect(nested.code).toBe(2)
    expect(nested.stderr).toContain('unknown flag --bogus-flag for myc sandbox exec')
  })

  it('with --json, a usage error is the JSON error document on stdout', () => {
    const { code, stdout } = myc(['status', '--json', '--jsno'])
    expect(code).toBe(2)
    expect(JSON.parse(stdout)).toEqual({ ok: false, error: { code: 'usage', message: 'unknown flag --jsno for myc status (did you mean --json?)' } })
  })

  it('global flags go before or after the command: myc --era modern status', () => {
    for (const args of [['--era', 'modern', 'status', '--json', '--config', echoConfig()], ['--config', echoConfig(), '--json', 'status', '--era', 'modern']]) {
      const { code, stdout } = myc(args)
      expect(code).toBe(0)
      expect(JSON.parse(stdout).servers[0]).toMatchObject({ key: 'echo', state: 'RUNNING' })
    }
  })

  it('with no subcommand, the flags are serve’s (myc --config F --role R)', () => {
    const { code, stderr } = myc(['--config', echoConfig(), '--role', 'guest', '--sklls', 'a'])
    expect(code).toBe(2)
    expect(stderr).toContain('unknown flag --sklls for myc serve (did you mean --skills?)')
  })

  it('myc run x --bogus-flag exits 2 before contacting the API', async () => {
    const { FakeAnthropic } = await import('../helpers/fake-anthropic.js')
    const { runAgentCli } = await import('../helpers/agent.js')
    const fake = await new FakeAnthropic([{ content: [{ type: 'text', text: 'done' }] }]).start()
    try {
      const r = await runAgentCli(['run', 'x', '--bogus-flag', '--config', echoConfig()], { fake })
      expect(r.code).toBe(2)
      expect(r.stderr).toContain('unknown flag --bogus-flag for myc run')
      expect(fake.requests).toHaveLength(0)
    } finally {
      await fake.close()
    }
  })
})

describe('myc serve shutdown on signals', () => {
  it.each([
    ['SIGTERM', 0],
    ['SIGINT', 130],
  ] as const)('on %s stops every child and exits %i', async (signal, expected) => {
    const { spawn } = await import('node:child_process')
    const { descendants, isAlive } = await import('../helpers/e2e.js')
    const { waitFor } = await import('../helpers/runtime.js')
    const config = writeConfig({ mcpServers: { tree: { command: process.execPath, args: [fixtureServer('spawns-grandchild')] }, echo: { command: process.execPath, args: [fixtureServer('echo')] } } })
    const proc = spawn(process.execPath, [bundle, 'serve', '--config', config], { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()))
    proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'sig', version: '1' } } })}\n`)
    await waitFor(() => out.includes('"id":1'), 15_000, 'initialize answer')
    await waitFor(() => descendants(proc.pid!).length >= 3, 10_000, 'children and grandchild')
    const tree = descendants(proc.pid!)
    const exit = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)))
    proc.kill(signal)
    expect(await exit).toBe(expected)
    await waitFor(() => tree.every((p) => !isAlive(p)), 5_000, 'no process left')
  })
})

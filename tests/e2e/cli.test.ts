import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'

function myc(args: string[], input?: string) {
  requireBundle()
  const result = spawnSync(process.execPath, [bundle, ...args], { encoding: 'utf8', input: input ?? '', timeout: 60_000 })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

const echoConfig = () => writeConfig({ mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } } })

describe('myc (build/myc.cjs) command line', () => {
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
    expect(doc).toMatchObject({ ok: false, error: { code: 'CONFIG_INVALID' } })
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

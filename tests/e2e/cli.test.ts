import { describe, expect, it } from 'vitest'
import { bundle, runMyc as myc, writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'

// What only the program shows: its process exit codes, a real client and a
// real pipe on stdin, signals. Everything else a command does is tested in
// this process (tests/commands/cli.test.ts, tests/helpers/cli.ts).

const echoConfig = () =>
  writeConfig({ mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } } })

describe('myc (build/myc.cjs) command line', () => {
  it('prints its version', () => {
    const { code, stdout } = myc(['--version'])
    expect(code).toBe(0)
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  })

  it('rejects an unknown command with exit 2 and the list of commands', () => {
    const { code, stderr } = myc(['frobnicate'])
    expect(code).toBe(2)
    expect(stderr).toMatch(/Unknown command "frobnicate"/)
  })

  it('with no subcommand and a pipe on stdin, serves MCP (what client configs run)', () => {
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } },
    })
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} })
    const { code, stdout } = myc(['--config', echoConfig()], `${init}\n${list}\n`)
    expect(code).toBe(0)
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
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
    const config = writeConfig({
      mcpServers: {
        tree: { command: process.execPath, args: [fixtureServer('spawns-grandchild')] },
        echo: { command: process.execPath, args: [fixtureServer('echo')] },
      },
    })
    const proc = spawn(process.execPath, [bundle, 'serve', '--config', config], { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()))
    proc.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'sig', version: '1' } } })}\n`,
    )
    await waitFor(() => out.includes('"id":1'), 15_000, 'initialize answer')
    await waitFor(() => descendants(proc.pid!).length >= 3, 10_000, 'children and grandchild')
    const tree = descendants(proc.pid!)
    const exit = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)))
    proc.kill(signal)
    expect(await exit).toBe(expected)
    await waitFor(() => tree.every((p) => !isAlive(p)), 5_000, 'no process left')
  })
})

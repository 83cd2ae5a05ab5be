import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundle, runMyc as myc, writeConfig } from '../helpers/e2e.js'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'

const echoConfig = () =>
  writeConfig({ mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } } })

describe('myc (build/myc.cjs) command line', () => {
  it('MYC_CONFIG names the config from any folder; --config wins over it', () => {
    const config = echoConfig()
    const { code, stdout } = myc(['tools', '--json'], '', { cwd: tmpdir(), env: { MYC_CONFIG: config } })
    expect(code).toBe(0)
    expect((JSON.parse(stdout) as { tools: Array<{ id: string }> }).tools.map((t) => t.id)).toContain('echo:echo')
    const flag = myc(['tools', '--json', '--config', config], '', {
      cwd: tmpdir(),
      env: { MYC_CONFIG: '/nonexistent.json' },
    })
    expect(flag.code).toBe(0)
  })

  it('--role on a config without skills is a usage error that explains open mode', () => {
    const { code, stderr } = myc(['tools', '--role', 'reviewer', '--config', echoConfig()])
    expect(code).toBe(2)
    expect(stderr).toMatch(/--role reviewer: .* has no skills, so myc runs in open mode/)
  })

  it('the MCP Inspector CLI runs myc over stdio with MYC_CONFIG (-e), as the README shows', () => {
    const inspector = path.join(
      repoRoot,
      'node_modules',
      '@modelcontextprotocol',
      'inspector',
      'cli',
      'build',
      'cli.js',
    )
    const r = spawnSync(
      process.execPath,
      [inspector, '--cli', '-e', `MYC_CONFIG=${echoConfig()}`, process.execPath, bundle, '--method', 'tools/list'],
      { encoding: 'utf8', timeout: 60_000, cwd: tmpdir() },
    )
    expect(r.status, r.stderr).toBe(0)
    expect((JSON.parse(r.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain(
      'echo__echo',
    )
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
    expect(report.servers[0]).toMatchObject({
      key: 'echo',
      state: 'RUNNING',
      tools: 5,
      prompts: 1,
      resources: 1,
      serverInfo: { name: 'echo' },
    })
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
    expect(tools.map((t: { id: string }) => t.id)).toEqual([
      'echo:echo',
      'echo:add',
      'echo:image',
      'echo:fail',
      'echo:log',
    ])
    expect(tools[0]).toMatchObject({
      id: 'echo:echo',
      wireName: 'echo__echo',
      server: 'echo',
      description: 'Returns its message',
    })
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

/** A TCP port nothing listens on (one that was free a moment ago). */
async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net')
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('myc (build/myc.cjs): what a failed child says', () => {
  it('a failed HTTP child names its URL, without secrets, and the cause (ECONNREFUSED), in status, doctor and the log', async () => {
    const port = await closedPort()
    const config = writeConfig({
      mcpServers: {
        web: { type: 'http', url: `http://127.0.0.1:${port}/mcp?token=s3cret`, restart: { maxRetries: 0 } },
      },
    })
    const status = myc(['status', '--json', '--config', config])
    expect(status.code).toBe(3)
    const error = JSON.parse(status.stdout).servers[0].error as string
    expect(error).toContain(`http://127.0.0.1:${port}/mcp?token=***`)
    expect(error).toMatch(/ECONNREFUSED/)
    expect(status.stdout + status.stderr).not.toContain('s3cret')
    const text = myc(['status', '--config', config])
    expect(text.stdout).toMatch(
      new RegExp(`FAILED +web +http://127\\.0\\.0\\.1:${port}/mcp\\?token=\\*\\*\\*: fetch failed \\(.*ECONNREFUSED`),
    )
    // The log says it too (a one-shot command other than status logs the failure as an error).
    const tools = myc(['tools', '--config', config])
    expect(tools.stderr).toMatch(
      new RegExp(
        `\\[web\\].*could not start: http://127\\.0\\.0\\.1:${port}/mcp\\?token=\\*\\*\\*: fetch failed \\(.*ECONNREFUSED`,
      ),
    )
    expect(tools.stderr).not.toContain('s3cret')
    const doctor = myc(['doctor', '--json', '--config', config])
    expect(
      JSON.stringify(JSON.parse(doctor.stdout).checks.find((c: { name: string }) => c.name === 'server web')),
    ).toMatch(/127\.0\.0\.1.*ECONNREFUSED/)
  })

  it('a child that exits while starting points --json readers to myc’s log on stderr, not to a “log above”', () => {
    const config = writeConfig({
      mcpServers: {
        dies: {
          command: process.execPath,
          args: ['-e', 'console.error("boom"); process.exit(3)'],
          restart: { maxRetries: 0 },
        },
      },
    })
    const { code, stdout } = myc(['status', '--json', '--config', config])
    expect(code).toBe(3)
    const error = JSON.parse(stdout).servers[0].error as string
    expect(error).toBe(
      "it exited with code 3 before finishing initialize (its stderr, if it wrote any, is in myc's log (stderr))",
    )
    expect(error).not.toMatch(/log above/)
  })
})

describe('myc (build/myc.cjs): one-shot inspection is quiet', () => {
  const chatty = () => ({
    command: process.execPath,
    args: ['-e', `console.error("chatty hello"); import(${JSON.stringify(fixtureServer('echo'))})`],
  })
  const dies = { command: process.execPath, args: ['-e', 'console.error("boom: no API key"); process.exit(3)'] }

  it.each([['status'], ['tools'], ['roles']])(
    'myc %s: no restart notices nor children’s stderr at info level; --verbose shows their stderr at debug',
    (command) => {
      const config = writeConfig({ mcpServers: { chatty: chatty(), dies } })
      if (command === 'roles') {
        mkdirSync(path.join(path.dirname(config), 'skills', 's'), { recursive: true })
        writeFileSync(
          path.join(path.dirname(config), 'skills', 's', 'SKILL.md'),
          '---\nname: s\ndescription: d\nallowedRoles: [r]\nallowedTools: [chatty:echo]\n---\n',
        )
      }
      const quiet = myc([command, '--config', config])
      expect(quiet.stderr).not.toMatch(/restarting|chatty hello/)
      // A real error is not hidden: the failed child's stderr is shown, once.
      expect(quiet.stderr.match(/boom: no API key/g)).toHaveLength(1)
      const verbose = myc([command, '--config', config, '--verbose'])
      expect(verbose.stderr).toMatch(/\[chatty\].*chatty hello/)
      expect(verbose.stderr).not.toMatch(/restarting in/)
    },
  )

  it('myc tools names a child that could not start, as an error', () => {
    const config = writeConfig({ mcpServers: { chatty: chatty(), dies } })
    const { code, stderr } = myc(['tools', '--config', config])
    expect(code).toBe(0)
    expect(stderr).toMatch(/\[dies\].*could not start: it exited with code 3/)
  })
})

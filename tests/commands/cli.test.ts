import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runHere as myc } from '../helpers/cli.js'
import { writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'

const echoConfig = () =>
  writeConfig({ mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } } })

describe('myc (in process) command line', () => {
  it('MYC_CONFIG names the config from any folder; --config wins over it', async () => {
    const config = echoConfig()
    const { code, stdout } = await myc(['tools', '--json'], '', { cwd: tmpdir(), env: { MYC_CONFIG: config } })
    expect(code).toBe(0)
    expect((JSON.parse(stdout) as { tools: Array<{ id: string }> }).tools.map((t) => t.id)).toContain('echo:echo')
    // No server needed to show whose config is read (a command starts every server of its config).
    const flag = await myc(['tools', '--json', '--config', writeConfig({ mcpServers: {} })], '', {
      cwd: tmpdir(),
      env: { MYC_CONFIG: '/nonexistent.json' },
    })
    expect(flag.code).toBe(0)
  })

  it('--role on a config without skills is a usage error that explains open mode', async () => {
    const { code, stderr } = await myc(['tools', '--role', 'reviewer', '--config', echoConfig()])
    expect(code).toBe(2)
    expect(stderr).toMatch(/--role reviewer: .* has no skills, so myc runs in open mode/)
  })

  it('prints usage with --help, on stdout', async () => {
    const { code, stdout } = await myc(['--help'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/serve/)
    expect(stdout).toMatch(/status/)
  })

  it('shows the usage of a nested command', async () => {
    const { code, stdout } = await myc(['skills', 'lint', '--help'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/myc skills lint/)
    expect(stdout).toMatch(/exits 3 on problems/)
  })

  it('myc status --json reports each server', async () => {
    const { code, stdout } = await myc(['status', '--json', '--config', echoConfig()])
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

  it('myc status with no config says how to start (myc init), and exits 0: the embedded default is a state myc runs in', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-no-config-'))
    const { code, stdout } = await myc(['status'], '', { cwd: dir, env: { MYC_CONFIG: '' } })
    expect(code).toBe(0)
    expect(stdout).toContain(`config: none in ${dir}`)
    expect(stdout).toContain('`myc init` writes a starter mycelium.config.json')
    // A config with no servers says where to add them instead.
    const empty = writeConfig({ mcpServers: {} })
    const listed = await myc(['status', '--config', empty])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain(`no servers configured: add them under "mcpServers" in ${empty}`)
    expect(listed.stdout).not.toContain('myc init')
  })

  it('myc status exits 3 and names the error when a server fails', async () => {
    const config = writeConfig({ mcpServers: { broken: { command: '/no/such/binary', restart: { maxRetries: 0 } } } })
    const { code, stdout } = await myc(['status', '--json', '--config', config])
    expect(code).toBe(3)
    const report = JSON.parse(stdout)
    expect(report.ok).toBe(false)
    expect(report.servers[0]).toMatchObject({ key: 'broken', state: 'FAILED' })
    expect(report.servers[0].error).toMatch(/command not found/)
  })

  it('myc tools --json lists canonical ids and wire names', async () => {
    const { code, stdout } = await myc(['tools', '--json', '--config', echoConfig()])
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

  it('a bad config exits 2 with a message naming the file and key, as text and as JSON', async () => {
    const config = writeConfig({ mcpServers: { echo: { comand: 'node' } } })
    const text = await myc(['status', '--config', config])
    expect(text.code).toBe(2)
    expect(text.stderr).toContain(config)
    expect(text.stderr).toMatch(/mcpServers\.echo/)
    const json = await myc(['tools', '--json', '--config', config])
    expect(json.code).toBe(2)
    const doc = JSON.parse(json.stdout)
    expect(doc).toMatchObject({ ok: false, error: { code: 'config_invalid' } })
    expect(doc.error.message).toMatch(/command/)
  })

  it('a missing --config file exits 2', async () => {
    const { code, stderr } = await myc(['status', '--config', '/nowhere/mycelium.config.json'])
    expect(code).toBe(2)
    expect(stderr).toContain('/nowhere/mycelium.config.json')
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

describe('myc (in process): what a failed child says', () => {
  it('a failed HTTP child names its URL, without secrets, and the cause (ECONNREFUSED), in status, doctor and the log', async () => {
    const port = await closedPort()
    const config = writeConfig({
      mcpServers: {
        web: { type: 'http', url: `http://127.0.0.1:${port}/mcp?token=s3cret`, restart: { maxRetries: 0 } },
      },
    })
    const status = await myc(['status', '--json', '--config', config])
    expect(status.code).toBe(3)
    const error = JSON.parse(status.stdout).servers[0].error as string
    expect(error).toContain(`http://127.0.0.1:${port}/mcp?token=***`)
    expect(error).toMatch(/ECONNREFUSED/)
    expect(status.stdout + status.stderr).not.toContain('s3cret')
    const text = await myc(['status', '--config', config])
    expect(text.stdout).toMatch(
      new RegExp(`FAILED +web +http://127\\.0\\.0\\.1:${port}/mcp\\?token=\\*\\*\\*: fetch failed \\(.*ECONNREFUSED`),
    )
    // The log says it too (a one-shot command other than status logs the failure as an error).
    const tools = await myc(['tools', '--config', config])
    expect(tools.stderr).toMatch(
      new RegExp(
        `^myc: error: web: could not start: http://127\\.0\\.0\\.1:${port}/mcp\\?token=\\*\\*\\*: fetch failed \\(.*ECONNREFUSED`,
        'm',
      ),
    )
    expect(tools.stderr).not.toContain('s3cret')
    const doctor = await myc(['doctor', '--json', '--config', config])
    expect(
      JSON.stringify(JSON.parse(doctor.stdout).checks.find((c: { name: string }) => c.name === 'server web')),
    ).toMatch(/127\.0\.0\.1.*ECONNREFUSED/)
  })

  it('a child that exits while starting points --json readers to myc’s log on stderr, not to a “log above”', async () => {
    const config = writeConfig({
      mcpServers: {
        dies: {
          command: process.execPath,
          args: ['-e', 'console.error("boom"); process.exit(3)'],
          restart: { maxRetries: 0 },
        },
      },
    })
    const { code, stdout } = await myc(['status', '--json', '--config', config])
    expect(code).toBe(3)
    const error = JSON.parse(stdout).servers[0].error as string
    expect(error).toBe(
      "it exited with code 3 before finishing initialize (its stderr, if it wrote any, is in myc's log (stderr))",
    )
    expect(error).not.toMatch(/log above/)
  })
})

describe('myc (in process): one-shot inspection is quiet', () => {
  const chatty = () => ({
    command: process.execPath,
    args: ['-e', `console.error("chatty hello"); import(${JSON.stringify(fixtureServer('echo'))})`],
  })
  const dies = { command: process.execPath, args: ['-e', 'console.error("boom: no API key"); process.exit(3)'] }

  it.each([['status'], ['tools'], ['roles']])(
    'myc %s: no restart notices nor children’s stderr at info level; --verbose shows their stderr at debug',
    async (command) => {
      const config = writeConfig({ mcpServers: { chatty: chatty(), dies } })
      if (command === 'roles') {
        mkdirSync(path.join(path.dirname(config), 'skills', 's'), { recursive: true })
        writeFileSync(
          path.join(path.dirname(config), 'skills', 's', 'SKILL.md'),
          '---\nname: s\ndescription: d\nallowedRoles: [r]\nallowedTools: [chatty:echo]\n---\n',
        )
      }
      const quiet = await myc([command, '--config', config])
      expect(quiet.stderr).not.toMatch(/restarting|chatty hello/)
      // A real error is not hidden: the failed child's stderr is shown, once.
      expect(quiet.stderr.match(/boom: no API key/g)).toHaveLength(1)
      const verbose = await myc([command, '--config', config, '--verbose'])
      expect(verbose.stderr).toMatch(/^myc: debug: chatty: chatty hello$/m)
      expect(verbose.stderr).not.toMatch(/restarting in/)
    },
  )

  it('myc tools names a child that could not start, as an error', async () => {
    const config = writeConfig({ mcpServers: { dies } })
    const { code, stderr } = await myc(['tools', '--config', config])
    expect(code).toBe(0)
    expect(stderr).toMatch(/^myc: error: dies: could not start: it exited with code 3/m)
  })
})

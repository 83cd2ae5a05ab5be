import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle, runMycAsync } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { freePort } from '../helpers/http.js'
import { pathWithStandIns, registryFixture, startRegistry, type TestRegistry } from '../helpers/registry.js'
import { waitFor } from '../helpers/wait-for.js'
import { Terminal } from '../helpers/terminal.js'
import { requireTool } from '../helpers/tools.js'
import { project } from '../install/helpers.js'

let registry: TestRegistry
beforeAll(async () => {
  registry = await startRegistry([
    registryFixture('filesystem'),
    registryFixture('weather-pypi'),
    registryFixture('reports-secrets'),
  ])
})
afterAll(() => registry.close())

/** A project whose JSONC config points at the test registry; `myc` run in it with its own user config folder. */
function inProject(servers = '') {
  const p = project(
    `{\n  // servers of this project\n  "registry": { "url": "${registry.url}" }, /* the tests' registry */\n  "mcpServers": {${servers}}\n}\n`,
  )
  const run = (args: string[], env: Record<string, string> = {}) =>
    runMycAsync(args, {
      cwd: p.dir,
      env: { XDG_CONFIG_HOME: p.env.XDG_CONFIG_HOME!, MYC_TOKEN_KEY: p.env.MYC_TOKEN_KEY!, ...env },
    })
  return { ...p, run }
}

describe('myc search and myc add on the command line: bad input first', () => {
  it('refuses malformed words and flags with exit 2, naming them, and writes nothing', async () => {
    const p = inProject()
    const before = readFileSync(p.file, 'utf8')
    const cases: [string[], RegExp][] = [
      [['add'], /myc add needs a server/],
      [['add', 'filesystem'], /"filesystem" is not a registry name: one is NAMESPACE\/NAME/],
      [['add', 'io.x/y', '--package', 'rust'], /--package takes npm, pypi, oci, remote, not "rust"/],
      [['add', 'io.x/y', '--secrets', 'clear'], /--secrets takes sealed, export, not "clear"/],
      [['add', 'io.x/y', '--env', '=x'], /--env takes NAME=VALUE/],
      [['add', 'io.x/y', '--arg', 'novalue'], /--arg takes NAME=VALUE/],
      [
        ['add', '--from-client', 'notepad'],
        /--from-client takes claude-desktop, claude-code, cursor, vscode, not "notepad"/,
      ],
      [['add', 'io.x/y', '--from-client', 'cursor'], /--from-client imports servers as the client has them/],
      [['search', 'fs', '--limit', '0'], /--limit takes a whole number from 1 to 1000, not "0"/],
      [['add', 'io.x/y', '--kee', 'a'], /--kee.*--key/],
    ]
    for (const [args, message] of cases) {
      const r = await p.run(args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr, args.join(' ')).toMatch(message)
    }
    const json = await p.run(['add', 'filesystem', '--json'])
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: 'usage' } })
    expect(readFileSync(p.file, 'utf8')).toBe(before)
  })

  it('exits 1 naming the registry when it is down or answers garbage, and 2 for a name it does not know', async () => {
    const port = await freePort()
    const down = project(`{ "registry": { "url": "http://127.0.0.1:${port}/mcp-registry" } }`)
    const r = await runMycAsync(['search', 'fs', '--json'], { cwd: down.dir })
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: 'registry_unreachable',
      message: expect.stringContaining(`http://127.0.0.1:${port}`),
    })
    const garbage = await startRegistry([], { answer: 'garbage' })
    const bad = project(`{ "registry": { "url": "${garbage.url}" } }`)
    const g = await runMycAsync(['add', 'io.github.example/weather-mcp'], { cwd: bad.dir })
    await garbage.close()
    expect(g.code).toBe(1)
    expect(g.stderr).toMatch(
      /answered GET \/v0\.1\/servers\/io\.github\.example%2Fweather-mcp\/versions\/latest with not JSON/,
    )
    const unknown = await inProject().run(['add', 'io.github.nobody/nothing'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/no server "io\.github\.nobody\/nothing" in the MCP Registry/)
  })
})

describe('myc search', () => {
  it('prints a table whose registry text cannot drive the terminal, and the exact text with --json', async () => {
    const p = inProject()
    const table = await p.run(['search', 'example'])
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^NAME +VERSION +RUNS +DESCRIPTION\n/)
    expect(table.stdout).toMatch(/io\.github\.example\/reports +2\.0\.1 +pypi +Reports \\x1b\]0;owned\\x07/)
    expect(table.stdout).not.toMatch(/\u001b|\u0007/)
    const json = JSON.parse((await p.run(['search', 'example', '--json', '--limit', '1'])).stdout)
    expect(json).toEqual({
      ok: true,
      servers: [
        {
          name: 'io.github.example/weather-mcp',
          version: '0.5.0',
          kinds: ['pypi'],
          description: 'Python MCP server for weather data access',
        },
      ],
    })
  })
})

describe('myc add', () => {
  it('adds the reference filesystem server from its registry entry; then myc tools lists its tools, and the JSONC comments stay', async () => {
    const p = inProject()
    const added = await p.run(['add', 'io.github.modelcontextprotocol/filesystem', '--arg', `target_dir=${p.dir}`])
    expect(added.code, added.stderr).toBe(0)
    expect(added.stdout).toMatch(
      /^added "filesystem" to .*mycelium\.config\.json: io\.github\.modelcontextprotocol\/filesystem 2026\.8\.31 \(npm\)/,
    )
    const text = readFileSync(p.file, 'utf8')
    expect(text).toContain('// servers of this project')
    expect(text).toContain("/* the tests' registry */")
    const tools = await p.run(['tools', '--json'])
    expect(tools.code).toBe(0)
    const names = (JSON.parse(tools.stdout) as { tools: { id: string }[] }).tools.map((t) => t.id)
    expect(names).toEqual(
      expect.arrayContaining(['filesystem:read_text_file', 'filesystem:write_file', 'filesystem:list_directory']),
    )
  }, 60_000)

  it('--dry-run prints the entry and starts and writes nothing', async () => {
    const p = inProject()
    const r = await p.run(['add', 'io.github.example/reports', '--dry-run', '--arg', 'workspace=/w', '--json'])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: true,
      dryRun: true,
      key: 'reports',
      entry: { command: 'uvx', args: ['reports-env==2.0.1', 'serve', '/w', '${secret:reports.api_token}'] },
    })
    expect(readFileSync(p.file, 'utf8')).not.toContain('reports')
  })

  it('a secret given on the command line reaches the child from the sealed store, never the config; myc status shows it running', async () => {
    const p = inProject()
    const env = { PATH: pathWithStandIns() }
    const r = await p.run(['add', 'io.github.example/weather-mcp', '--env', 'WEATHER_API_KEY', '--yes'], {
      ...env,
      WEATHER_API_KEY: 'wk-FROM-ENV',
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(
      'secret --env WEATHER_API_KEY: sealed on this machine as ${secret:weather.WEATHER_API_KEY}',
    )
    expect(readFileSync(p.file, 'utf8')).not.toContain('wk-FROM-ENV')
    const status = await p.run(['status', '--json'], env)
    expect(JSON.parse(status.stdout).servers).toEqual([
      expect.objectContaining({ key: 'weather', state: 'RUNNING', tools: 1 }),
    ])
  }, 60_000)
})

describe('myc add --from-client', () => {
  it('imports an installed Claude Desktop’s servers; its API key sealed, then myc tools lists them', async () => {
    const p = inProject()
    const desktop = path.join(p.env.XDG_CONFIG_HOME!, 'Claude', 'claude_desktop_config.json')
    mkdirSync(path.dirname(desktop), { recursive: true })
    const echo = { command: process.execPath, args: [fixtureServer('echo')], env: { API_KEY: 'ak-FROM-DESKTOP' } }
    writeFileSync(desktop, JSON.stringify({ mcpServers: { echo } }))
    const r = await p.run(['add', '--from-client', 'claude-desktop'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(`claude-desktop: read ${desktop}`)
    expect(r.stdout).toMatch(/added "echo": \d+ tools \(echo, add, /)
    expect(r.stdout).toContain('secret --env API_KEY: sealed on this machine as ${secret:echo.API_KEY}')
    expect(readFileSync(p.file, 'utf8')).not.toContain('ak-FROM-DESKTOP')
    const tools = JSON.parse((await p.run(['tools', '--json'])).stdout) as { tools: { id: string }[] }
    expect(tools.tools.map((t) => t.id)).toContain('echo:echo')
  }, 60_000)
})

const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)

describe.runIf(hasTmux)('myc add on a terminal (tmux)', () => {
  const term = new Terminal('add')
  afterAll(() => term.close())

  it('asks for each required value, a secret without echo, and takes the default on Enter', async () => {
    requireBundle()
    const p = inProject()
    const screen = () => term.tmux('capture-pane', '-p', '-t', 'add')
    const env = `XDG_CONFIG_HOME=${p.env.XDG_CONFIG_HOME} MYC_TOKEN_KEY=${p.env.MYC_TOKEN_KEY} PATH=${pathWithStandIns()}`
    term.open('add', `${env} ${process.execPath} ${bundle} add io.github.example/weather-mcp; echo EXIT=$?; sleep 60`, {
      cwd: p.dir,
    })
    await waitFor(
      () => screen().includes('--env WEATHER_API_KEY: API key for weather service; secret'),
      20_000,
      'the secret question',
    )
    term.tmux('send-keys', '-t', 'add', 'typed-SECRET-9876', 'Enter')
    await waitFor(() => screen().includes('value [celsius]:'), 20_000, 'the question with a default')
    term.tmux('send-keys', '-t', 'add', 'Enter')
    await waitFor(() => screen().includes('EXIT='), 30_000, 'the end of myc add')
    const text = screen()
    expect(text).toContain('EXIT=0')
    expect(text).toContain('added "weather"')
    expect(text).not.toContain('typed-SECRET-9876')
    const config = readFileSync(p.file, 'utf8')
    expect(config).toContain('"WEATHER_UNITS": "celsius"')
    expect(config).not.toContain('typed-SECRET-9876')
  }, 60_000)
})

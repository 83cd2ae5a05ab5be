import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load.js'
import { MycError } from '../../src/errors.js'
import { clientFiles, type Place } from '../../src/install/client-configs.js'
import { importFromClient, type ImportRequest } from '../../src/install/from-client.js'
import { SecretStore } from '../../src/oauth/secret-store.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { captureLogger } from '../helpers/runtime.js'
import { project } from './helpers.js'

/** A project with a home folder of its own, holding a client's config at `file` (relative to home, or to the project with `./`). */
function withClientConfig(
  file: string,
  doc: unknown,
  configText = '{\n  // mine\n  "mcpServers": {\n    "taken": { "command": "true" }\n  }\n}\n',
) {
  const p = project(configText)
  const home = path.join(p.dir, 'home')
  const place: Place = { platform: 'linux', home, env: { XDG_CONFIG_HOME: path.join(home, '.config') }, cwd: p.dir }
  const at = file.startsWith('./') ? path.join(p.dir, file) : path.join(home, file)
  mkdirSync(path.dirname(at), { recursive: true })
  writeFileSync(at, typeof doc === 'string' ? doc : JSON.stringify(doc, null, 2))
  const run = (client: ImportRequest['client'], extra: Partial<ImportRequest> = {}) =>
    importFromClient({
      client,
      secrets: 'sealed',
      dryRun: false,
      cwd: p.dir,
      env: p.env,
      host: hostForThisProcess(),
      logger: captureLogger().logger,
      place,
      ...extra,
    })
  return { ...p, home, place, run }
}

const echo = { command: process.execPath, args: [fixtureServer('echo')] }

describe('myc add --from-client', () => {
  it('says where it looked when the client has no config here', async () => {
    const p = withClientConfig('unrelated.json', {})
    const error = await p.run('cursor').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MycError)
    expect((error as MycError).message).toBe(
      `no cursor config here: myc looked at ${path.join(p.home, '.cursor', 'mcp.json')}, ${path.join(p.dir, '.cursor', 'mcp.json')}`,
    )
  })

  it('knows each client’s config files on macOS, Windows and Linux', () => {
    const on = (platform: NodeJS.Platform, home: string, env: Record<string, string> = {}) => ({
      platform,
      home,
      env,
      cwd: '/proj',
    })
    const files = (client: Parameters<typeof clientFiles>[0], place: Place) =>
      clientFiles(client, place).map((f) => f.file)
    expect(files('claude-desktop', on('darwin', '/Users/a'))).toEqual([
      '/Users/a/Library/Application Support/Claude/claude_desktop_config.json',
    ])
    expect(files('claude-desktop', on('win32', 'C:\\Users\\a', { APPDATA: 'C:\\Users\\a\\AppData\\Roaming' }))).toEqual(
      [path.join('C:\\Users\\a\\AppData\\Roaming', 'Claude', 'claude_desktop_config.json')],
    )
    expect(files('claude-desktop', on('linux', '/home/a'))).toEqual([
      '/home/a/.config/Claude/claude_desktop_config.json',
    ])
    expect(files('claude-code', on('linux', '/home/a'))).toEqual([
      '/home/a/.claude.json',
      '/home/a/.claude.json',
      '/proj/.mcp.json',
    ])
    expect(files('cursor', on('darwin', '/Users/a'))).toEqual(['/Users/a/.cursor/mcp.json', '/proj/.cursor/mcp.json'])
    expect(files('vscode', on('darwin', '/Users/a'))).toEqual([
      '/Users/a/Library/Application Support/Code/User/mcp.json',
      '/proj/.vscode/mcp.json',
    ])
    expect(files('vscode', on('linux', '/home/a', { XDG_CONFIG_HOME: '/cfg' }))).toEqual([
      '/cfg/Code/User/mcp.json',
      '/proj/.vscode/mcp.json',
    ])
  })

  it('imports Claude Desktop’s servers: started once, written with their env values sealed; myc itself, a taken key and one that fails skipped', async () => {
    const p = withClientConfig('.config/Claude/claude_desktop_config.json', {
      mcpServers: {
        echo: { ...echo, env: { API_KEY: 'ak-SEALED-42', PRICE: 'cost$5' } },
        mycelium: { command: 'npx', args: ['-y', 'mycelium-agg', '--config', '/x/mycelium.config.json'] },
        taken: echo,
        broken: { command: process.execPath, args: [fixtureServer('reports-env')], env: { REPORTS_NEEDS: 'NOPE' } },
      },
      globalShortcut: 'Ctrl+Space',
    })
    const result = await p.run('claude-desktop')
    expect(result.added.map((a) => [a.key, a.tools.includes('echo')])).toEqual([['echo', true]])
    expect(result.skipped.map((s) => [s.name, s.why])).toEqual([
      ['mycelium', 'it is myc itself'],
      ['taken', expect.stringMatching(/^the key "taken" is taken/)],
      ['broken', expect.stringMatching(/^it did not start: /)],
    ])
    const text = readFileSync(p.file, 'utf8')
    expect(text).toContain('// mine')
    expect(text).not.toContain('ak-SEALED-42')
    expect(text).not.toContain('cost$5')
    expect(await SecretStore.forUser(p.env).value('echo.API_KEY')).toBe('ak-SEALED-42')
    expect(await SecretStore.forUser(p.env).value('echo.PRICE')).toBe('cost$5')
    expect((await loadConfig({ cwd: p.dir, env: p.env })).config.servers.get('echo')).toMatchObject({
      env: { API_KEY: '${secret:echo.API_KEY}' },
    })
  })

  it('reads VS Code’s servers with its variables: ${env:X} stays a reference, ${workspaceFolder} is the project, ${input:…} cannot be', async () => {
    const p = withClientConfig(
      './.vscode/mcp.json',
      `{
        // VS Code's own file, with comments
        "inputs": [{ "id": "key", "type": "promptString", "password": true }],
        "servers": {
          "echo": { "type": "stdio", "command": "${process.execPath}", "args": ["${fixtureServer('echo')}", "\${workspaceFolder}"], "env": { "HOME_DIR": "\${env:HOME}" } },
          "asks": { "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer \${input:key}" } },
        },
      }`,
    )
    const result = await p.run('vscode', { dryRun: true })
    expect(result.added).toEqual([
      {
        key: 'echo',
        from: path.join(p.dir, '.vscode', 'mcp.json'),
        entry: { command: process.execPath, args: [fixtureServer('echo'), p.dir], env: { HOME_DIR: '${HOME}' } },
        tools: [],
        secrets: [],
      },
    ])
    expect(result.skipped).toEqual([
      {
        name: 'asks',
        from: path.join(p.dir, '.vscode', 'mcp.json'),
        why: 'it uses ${input:key}, which only the client can fill in: add it by hand',
      },
    ])
    expect(readFileSync(p.file, 'utf8')).not.toContain('echo')
  })

  it('writes nothing when none of the servers starts', async () => {
    const p = withClientConfig('./.mcp.json', {
      mcpServers: {
        broken: { command: process.execPath, args: [fixtureServer('reports-env')], env: { REPORTS_NEEDS: 'NOPE' } },
      },
    })
    const before = readFileSync(p.file, 'utf8')
    const error = await p.run('claude-code').catch((e: unknown) => e)
    expect((error as MycError).code).toBe('child_failed')
    expect((error as MycError).message).toMatch(
      /^none of the claude-code servers started, so nothing was written: broken: it did not start/,
    )
    expect(readFileSync(p.file, 'utf8')).toBe(before)
  })
})

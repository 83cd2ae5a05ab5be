import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load.js'
import { MycError } from '../../src/errors.js'
import { SecretStore } from '../../src/oauth/secret-store.js'
import { lockPathOf, pinServer, readLockFile } from '../../src/pinning/lock-file.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { Runtime } from '../../src/runtime/runtime.js'
import { startHttpFixture } from '../helpers/e2e.js'
import { pathWithStandIns, registryFixture, startRegistry, type TestRegistry } from '../helpers/registry.js'
import { captureLogger, connectClient } from '../helpers/runtime.js'
import { add, project } from './helpers.js'
import { childSessions } from '../../src/eras/child-sessions.js'

let registry: TestRegistry
let remote: { url: string; stop: () => void }
beforeAll(async () => {
  remote = await startHttpFixture('echo')
  registry = await startRegistry([
    registryFixture('filesystem'),
    registryFixture('weather-pypi'),
    registryFixture('database-oci'),
    registryFixture('remote', { '{REMOTE_URL}': remote.url }),
    registryFixture('reports-secrets'),
    registryFixture('crashes'),
  ])
})
afterAll(async () => {
  remote.stop()
  await registry.close()
})

/** A project whose config points at the test registry (JSONC, with a comment to keep). */
const withRegistry = (servers = '') =>
  project(
    `{\n  // the registry of these tests\n  "registry": { "url": "${registry.url}" },\n  "mcpServers": {${servers}}\n}\n`,
  )

/** Calls `server__report` of the fixture behind `key`, as `myc serve` started from the written config would. */
async function report(
  p: ReturnType<typeof project>,
  key: string,
): Promise<{ args: string[]; env: Record<string, string> }> {
  const loaded = await loadConfig({ cwd: p.dir, env: p.env })
  const runtime = new Runtime({
    childSessions,
    loaded,
    logger: captureLogger().logger,
    version: '0',
    host: { ...hostForThisProcess(), env: { ...p.env, PATH: pathWithStandIns(p.env) } },
  })
  try {
    await runtime.start()
    const { client } = await connectClient(runtime)
    const result = await client.callTool({ name: `${key}__report`, arguments: {} })
    return JSON.parse((result.content as { text: string }[])[0]!.text) as {
      args: string[]
      env: Record<string, string>
    }
  } finally {
    await runtime.close()
  }
}

describe('myc add --dry-run: the entry of every package kind, nothing started or written', () => {
  it('npm: npx -y pkg@version with its positional arguments', async () => {
    const p = withRegistry()
    const result = await add(p, 'io.github.modelcontextprotocol/filesystem', {
      dryRun: true,
      flags: { arg: ['target_dir=/srv/a', 'target_dir=/srv/$HOME'] },
    })
    expect(result).toMatchObject({ key: 'filesystem', kind: 'npm', version: '2026.8.31', tools: [], dryRun: true })
    expect(result.entry).toEqual({
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem@2026.8.31', '/srv/a', '/srv/$$HOME'],
    })
    expect(readFileSync(p.file, 'utf8')).not.toContain('filesystem')
  })

  it('PyPI: uvx pkg==version, a secret as a reference and a default taken with --yes', async () => {
    const p = withRegistry()
    const result = await add(p, 'io.github.example/weather-mcp', { dryRun: true, yes: true })
    expect(result.entry).toEqual({
      command: 'uvx',
      args: ['reports-env==0.5.0'],
      env: {
        WEATHER_API_KEY: '${secret:weather.WEATHER_API_KEY}',
        WEATHER_UNITS: 'celsius',
        REPORTS_NEEDS: 'WEATHER_API_KEY,WEATHER_UNITS',
      },
    })
    expect(result.secrets).toEqual([{ what: '--env WEATHER_API_KEY', kept: 'sealed', name: 'weather.WEATHER_API_KEY' }])
  })

  it('OCI: docker run -i --rm with runtime arguments, variables by name, the image pinned', async () => {
    const p = withRegistry()
    const result = await add(p, 'io.github.example/database-manager', {
      dryRun: true,
      yes: true,
      secrets: 'export',
      flags: { arg: ['db_type=postgres', 'database_name=orders', 'port=5432'], env: ['DB_USERNAME=app'] },
    })
    expect(result.entry).toEqual({
      command: 'docker',
      args: [
        'run',
        '-i',
        '--rm',
        '--network',
        'host',
        '-e',
        'DB_TYPE=postgres',
        '-e',
        'DB_USERNAME',
        '-e',
        'DB_PASSWORD',
        '-e',
        'REPORTS_NEEDS',
        'docker.io/example/reports-env:3.1.0',
        '--host',
        'localhost',
        '--port',
        '5432',
        'orders',
      ],
      env: { DB_USERNAME: 'app', DB_PASSWORD: '${DB_PASSWORD}', REPORTS_NEEDS: 'DB_USERNAME,DB_PASSWORD' },
    })
    expect(result.secrets).toEqual([{ what: '--env DB_PASSWORD', kept: 'export', variable: 'DB_PASSWORD' }])
  })

  it('remote first (it needs nothing installed here), with its headers; --package npm takes the package', async () => {
    const p = withRegistry()
    const result = await add(p, 'io.example.anonymous/hybrid-echo', { dryRun: true, yes: true })
    expect(result.kind).toBe('remote')
    expect(result.entry).toEqual({
      type: 'http',
      url: remote.url,
      headers: { 'X-API-Key': '${secret:hybrid-echo.X-API-Key}', 'X-Region': 'us-east-1' },
    })
    const npm = await add(p, 'io.example.anonymous/hybrid-echo', { dryRun: true, forced: 'npm' })
    expect(npm.entry).toEqual({ command: 'npx', args: ['-y', '@example/hybrid-echo@1.5.0'] })
  })

  it('with --dry-run, a runtime missing here is a warning, and the entry is still shown', async () => {
    const p = withRegistry()
    const result = await add(p, 'io.github.example/weather-mcp', { dryRun: true, yes: true, path: '/nonexistent' })
    expect(result.warning).toMatch(/it would not run here \(pypi: uvx is not found on PATH/)
  })
})

describe('myc add: started once, then written', () => {
  it('adds the reference filesystem server from its registry entry: its tools listed, the JSONC comments kept', async () => {
    const p = withRegistry(`\n    "other": { "command": "true", "disabled": true } // keep me\n  `)
    const result = await add(p, 'io.github.modelcontextprotocol/filesystem', {
      flags: { arg: [`target_dir=${p.dir}`] },
    })
    expect(result.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['read_text_file', 'write_file', 'list_directory']),
    )
    const text = readFileSync(p.file, 'utf8')
    expect(text).toContain('// the registry of these tests')
    expect(text).toContain('"other": { "command": "true", "disabled": true }, // keep me')
    expect(text).toContain(
      `"filesystem": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2026.8.31", ${JSON.stringify(p.dir)}] }`,
    )
    expect((await loadConfig({ cwd: p.dir, env: p.env })).config.servers.has('filesystem')).toBe(true)
  })

  it('PyPI with a secret: the value sealed on this machine, the config holding only its reference; the child gets it', async () => {
    const p = withRegistry()
    const result = await add(p, 'io.github.example/weather-mcp', {
      flags: { env: ['WEATHER_API_KEY=wk-SEALED-1234'] },
      yes: true,
    })
    expect(result.tools.map((t) => t.name)).toEqual(['report'])
    expect(result.secrets).toEqual([{ what: '--env WEATHER_API_KEY', kept: 'sealed', name: 'weather.WEATHER_API_KEY' }])
    const text = readFileSync(p.file, 'utf8')
    expect(text).toContain('"WEATHER_API_KEY": "${secret:weather.WEATHER_API_KEY}"')
    expect(text).not.toContain('wk-SEALED-1234')
    expect(await SecretStore.forUser(p.env).value('weather.WEATHER_API_KEY')).toBe('wk-SEALED-1234')
    expect((await report(p, 'weather')).env).toEqual({ WEATHER_API_KEY: 'wk-SEALED-1234', WEATHER_UNITS: 'celsius' })
  })

  it('OCI through docker run: variables reach the container by name', async () => {
    const p = withRegistry()
    await add(p, 'io.github.example/database-manager', {
      yes: true,
      flags: { arg: ['db_type=mysql', 'database_name=orders'], env: ['DB_USERNAME=app', 'DB_PASSWORD=pw-SEALED'] },
    })
    expect(readFileSync(p.file, 'utf8')).not.toContain('pw-SEALED')
    expect(await report(p, 'database-manager')).toEqual({
      args: ['--host', 'localhost', 'orders'],
      env: { DB_USERNAME: 'app', DB_PASSWORD: 'pw-SEALED' },
    })
  })

  it('a remote: an HTTP child with its URL, its secret header sealed', async () => {
    const p = withRegistry()
    const result = await add(p, 'io.example.anonymous/hybrid-echo', {
      yes: true,
      flags: { header: ['X-API-Key=hk-SEALED'] },
    })
    expect(result.tools.map((t) => t.name)).toContain('echo')
    const written = (await loadConfig({ cwd: p.dir, env: p.env })).config.servers.get('hybrid-echo')
    expect(written).toMatchObject({
      type: 'http',
      url: remote.url,
      headers: { 'X-API-Key': '${secret:hybrid-echo.X-API-Key}' },
    })
    expect(readFileSync(p.file, 'utf8')).not.toContain('hk-SEALED')
  })

  it('pins the added server in the project’s lock when there is one, and makes no lock when there is none', async () => {
    const pinned = withRegistry()
    const lockPath = lockPathOf(pinned.dir)
    await pinServer(lockPath, 'other', { tools: [{ name: 'kept', inputSchema: { type: 'object' } }], prompts: [] })
    await add(pinned, 'io.example.anonymous/hybrid-echo', { yes: true, flags: { header: ['X-API-Key=hk-1'] } })
    const lock = await readLockFile(lockPath)
    expect([...lock!.servers.keys()].sort()).toEqual(['hybrid-echo', 'other'])
    expect([...lock!.servers.get('hybrid-echo')!.tools.keys()]).toContain('echo')
    expect([...lock!.servers.get('other')!.tools.keys()]).toEqual(['kept'])

    const unpinned = withRegistry()
    await add(unpinned, 'io.example.anonymous/hybrid-echo', { yes: true, flags: { header: ['X-API-Key=hk-2'] } })
    expect(existsSync(lockPathOf(unpinned.dir))).toBe(false)
  })

  it('secrets in positional arguments and variables, sealed or left to export', async () => {
    const sealed = withRegistry()
    const args = { arg: ['workspace=/w', 'api_token=at-SEALED'], env: ['REPORTS_TOKEN=rt-SEALED'] }
    await add(sealed, 'io.github.example/reports', { flags: args })
    const text = readFileSync(sealed.file, 'utf8')
    expect(text).toContain('"args": ["reports-env==2.0.1", "serve", "/w", "${secret:reports.api_token}"]')
    expect(text).not.toMatch(/SEALED/)
    expect(await report(sealed, 'reports')).toEqual({
      args: ['serve', '/w', 'at-SEALED'],
      env: { REPORTS_TOKEN: 'rt-SEALED' },
    })

    const exported = withRegistry()
    const result = await add(exported, 'io.github.example/reports', { flags: args, secrets: 'export' })
    expect(result.secrets).toEqual([
      { what: '--env REPORTS_TOKEN', kept: 'export', variable: 'REPORTS_TOKEN' },
      { what: '--arg api_token', kept: 'export', variable: 'REPORTS_API_TOKEN' },
    ])
    expect(readFileSync(exported.file, 'utf8')).toContain('"REPORTS_TOKEN": "${REPORTS_TOKEN}"')
    expect(existsSync(path.join(exported.env.XDG_CONFIG_HOME!, 'mycelium', 'secrets.json'))).toBe(false)
  })

  it('a second server of the same key elsewhere keeps its own secret under a name of its own', async () => {
    const one = withRegistry()
    const two = { ...withRegistry(), env: one.env }
    await add(one, 'io.github.example/weather-mcp', { flags: { env: ['WEATHER_API_KEY=first'] }, yes: true })
    const second = await add(two, 'io.github.example/weather-mcp', {
      flags: { env: ['WEATHER_API_KEY=second'] },
      yes: true,
    })
    expect(second.secrets[0]!.name).toBe('weather.WEATHER_API_KEY-2')
    expect(readFileSync(two.file, 'utf8')).toContain('${secret:weather.WEATHER_API_KEY-2}')
    expect((await report(one, 'weather')).env.WEATHER_API_KEY).toBe('first')
    expect((await report(two, 'weather')).env.WEATHER_API_KEY).toBe('second')
  })

  it('writes nothing, and keeps no secret, when the server fails to start', async () => {
    const p = withRegistry()
    const before = readFileSync(p.file, 'utf8')
    const error = await add(p, 'io.github.example/crashes', { flags: { env: ['EXTRA=x'] } }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MycError)
    expect((error as MycError).code).toBe('child_failed')
    expect((error as MycError).message).toMatch(
      /io\.github\.example\/crashes 1\.0\.0 did not start, so nothing was written: it exited with code 1/,
    )
    expect(readFileSync(p.file, 'utf8')).toBe(before)
    expect(existsSync(path.join(p.env.XDG_CONFIG_HOME!, 'mycelium', 'secrets.json'))).toBe(false)
  })

  it('makes the config when there is none, and keeps a YAML config’s comments', async () => {
    const none = project()
    await add(none, path.join(__dirname, '../fixtures/registry/weather-pypi.json'), {
      flags: { env: ['WEATHER_API_KEY=k'] },
      yes: true,
    })
    expect(JSON.parse(readFileSync(none.file, 'utf8'))).toEqual({
      mcpServers: { weather: expect.objectContaining({ command: 'uvx' }) },
    })
    const yaml = project(
      `# my servers\nregistry:\n  url: ${registry.url} # local\nmcpServers: {}\n`,
      'mycelium.config.yaml',
    )
    await add(yaml, 'io.github.example/weather-mcp', { flags: { env: ['WEATHER_API_KEY=k'] }, yes: true })
    const text = readFileSync(yaml.file, 'utf8')
    expect(text).toMatch(/^# my servers\n/)
    expect(text).toContain(`url: ${registry.url} # local`)
    expect((await loadConfig({ cwd: yaml.dir, env: yaml.env })).config.servers.get('weather')).toMatchObject({
      command: 'uvx',
    })
  })
})

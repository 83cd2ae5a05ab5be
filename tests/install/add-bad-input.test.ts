import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseGiven } from '../../src/install/answers.js'
import { parseSource } from '../../src/install/add-server.js'
import { keyFor } from '../../src/install/server-key.js'
import { freePort } from '../helpers/http.js'
import { registryFixture, startRegistry, type TestRegistry } from '../helpers/registry.js'
import { add, failure, project } from './helpers.js'

describe('myc add: bad input is refused before anything is asked, started or written', () => {
  it('refuses a source that is neither a registry name nor a server.json', () => {
    for (const bad of ['', 'filesystem', 'a/b/c', 'a b/c', 'io.x/y@', 'io.x/y@1 2'])
      expect(() => parseSource(bad), bad).toThrow(/registry name|version after @/)
    expect(parseSource('io.github.x/y@1.2.0')).toEqual({ name: 'io.github.x/y', version: '1.2.0' })
    expect(parseSource('io.github.x/y@latest')).toEqual({ name: 'io.github.x/y', version: undefined })
  })

  it('refuses malformed --env, --header and --arg words, naming the word and the form', () => {
    const env = { PRESENT: 'here' }
    const cases: [Parameters<typeof parseGiven>[0], RegExp][] = [
      [{ env: ['=x'], header: [], arg: [] }, /--env takes NAME=VALUE.*not "=x"/],
      [{ env: ['A B=x'], header: [], arg: [] }, /--env takes NAME=VALUE.*not "A B=x"/],
      [{ env: ['1A=x'], header: [], arg: [] }, /--env takes NAME=VALUE/],
      [
        { env: ['ABSENT'], header: [], arg: [] },
        /--env ABSENT takes the value of ABSENT in your environment, where it is not set/,
      ],
      [{ env: [], header: ['X-Key'], arg: [] }, /--header takes NAME=VALUE.*not "X-Key"/],
      [{ env: [], header: ['Bad Header=x'], arg: [] }, /--header takes NAME=VALUE/],
      [{ env: [], header: [], arg: ['port'] }, /--arg takes NAME=VALUE.*not "port"/],
      [{ env: [], header: [], arg: ['=8080'] }, /--arg takes NAME=VALUE/],
    ]
    for (const [words, message] of cases) expect(() => parseGiven(words, env), JSON.stringify(words)).toThrow(message)
    const given = parseGiven({ env: ['PRESENT', 'B=x=y'], header: ['X-Key=v'], arg: ['--port=1', 'port=2'] }, env)
    expect(given.env).toEqual(
      new Map([
        ['PRESENT', ['here']],
        ['B', ['x=y']],
      ]),
    )
    expect(given.arg).toEqual(new Map([['port', ['1', '2']]]))
  })

  it('derives short keys from registry names', () => {
    expect(keyFor('io.github.modelcontextprotocol/filesystem')).toBe('filesystem')
    expect(keyFor('io.github.example/weather-mcp')).toBe('weather')
    expect(keyFor('io.github.x/mcp-server-time')).toBe('time')
    expect(keyFor('io.x/Model_Context_Protocol-Server')).toBe('model-context-protocol')
    expect(keyFor('io.x/MCP_Server')).toBe('mcp-server')
    expect(keyFor('io.x/mcp')).toBe('mcp')
    expect(keyFor('io.x/mycelium')).toBe('mycelium-server')
  })
})

describe('myc add against a registry: failures leave the config as it was', () => {
  let registry: TestRegistry
  const configText = '{\n  // mine\n  "mcpServers": {\n    "filesystem": { "command": "true" }\n  }\n}\n'
  beforeAll(async () => {
    registry = await startRegistry([
      registryFixture('filesystem'),
      registryFixture('weather-pypi'),
      registryFixture('database-oci'),
      registryFixture('reports-secrets'),
      {
        ...registryFixture('weather-pypi'),
        name: 'io.github.example/unpinned',
        packages: [{ ...(registryFixture('weather-pypi').packages as object[])[0]!, version: '^0.5.0' }],
      },
    ])
  })
  afterAll(() => registry.close())
  const withRegistry = (text = configText) =>
    project(text.replace('"mcpServers"', `"registry": { "url": "${registry.url}" },\n  "mcpServers"`))

  it('refuses a key that is taken, reserved or malformed', async () => {
    const p = withRegistry()
    const taken = await failure(add(p, 'io.github.modelcontextprotocol/filesystem'))
    expect(taken.message).toMatch(
      /the key derived from its name \("filesystem"\) is taken: .* already has a server "filesystem"; choose another with --key KEY/,
    )
    for (const [key, message] of [
      ['mycelium', /^--key "mycelium" is reserved for myc's built-in tools$/],
      ['a b', /^--key "a b": a key starts with a letter or digit/],
      ['a__b', /^--key "a__b" contains the wire separator "__"/],
      ['FILESYSTEM', /^--key "FILESYSTEM" is taken: .* already has a server "filesystem"/],
    ] as const)
      expect((await failure(add(p, 'io.github.modelcontextprotocol/filesystem', { key }))).message).toMatch(message)
    expect(readFileSync(p.file, 'utf8')).toContain('// mine')
  })

  it('names an unknown name or version, and a registry that is down or answers garbage', async () => {
    const p = withRegistry()
    expect((await failure(add(p, 'io.github.nobody/nothing'))).code).toBe('not_in_registry')
    expect((await failure(add(p, 'io.github.example/weather-mcp@9.9.9'))).message).toMatch(/no version 9\.9\.9/)
    const port = await freePort()
    const down = project(`{ "registry": { "url": "http://127.0.0.1:${port}" } }`)
    expect((await failure(add(down, 'io.github.example/weather-mcp'))).code).toBe('registry_unreachable')
    const garbage = await startRegistry([], { answer: 'garbage' })
    const bad = project(`{ "registry": { "url": "${garbage.url}" } }`)
    expect((await failure(add(bad, 'io.github.example/weather-mcp'))).code).toBe('registry_bad_answer')
    await garbage.close()
    expect(readFileSync(down.file, 'utf8')).toBe(`{ "registry": { "url": "http://127.0.0.1:${port}" } }`)
  })

  it('refuses a package without an exact version: myc add never writes latest or a range', async () => {
    const p = withRegistry()
    const error = await failure(
      add(p, 'io.github.example/unpinned', { flags: { env: ['WEATHER_API_KEY=k'] }, yes: true }),
    )
    expect(error.code).toBe('registry_bad_answer')
    expect(error.message).toMatch(
      /the pypi package reports-env has no exact version in its server\.json \("\^0\.5\.0"\): myc add pins every package/,
    )
  })

  it('refuses an --arg the server does not take, --header for a package, and a value outside the choices', async () => {
    const p = withRegistry()
    const unknownArg = await failure(add(p, 'io.github.example/database-manager', { flags: { arg: ['colour=red'] } }))
    expect(unknownArg.message).toBe(
      '--arg colour: the server takes no argument or variable "colour" (it takes: db_type, host, port, database_name)',
    )
    expect((await failure(add(p, 'io.github.example/weather-mcp', { flags: { header: ['X-A=1'] } }))).message).toMatch(
      /--header is for a remote server/,
    )
    const choice = await failure(add(p, 'io.github.example/weather-mcp', { flags: { env: ['WEATHER_UNITS=kelvin'] } }))
    expect(choice.message).toBe('--env WEATHER_UNITS takes one of celsius, fahrenheit, not "kelvin"')
    const number = await failure(add(p, 'io.github.example/database-manager', { flags: { arg: ['port=many'] } }))
    expect(number.message).toBe('--arg port takes a number, not "many"')
  })

  it('off a terminal, names every required value that was not given, and how to give it', async () => {
    const p = withRegistry()
    const error = await failure(add(p, 'io.github.example/database-manager'))
    expect(error.code).toBe('usage')
    expect(error.message).toBe(
      [
        'the server needs values this command did not give:',
        '  --arg db_type (Type of database)',
        '  --arg host (Database host; default localhost)',
        '  --arg database_name (Name of the database to connect to)',
        '  --env DB_USERNAME (Database username)',
        '  --env DB_PASSWORD (Database password; secret)',
        "give each as NAME=VALUE (--env NAME alone takes your environment's value), or add --yes to take the defaults, or run myc add on a terminal to be asked",
      ].join('\n'),
    )
  })

  it('says what to install when no runtime of the server is here, and writes nothing', async () => {
    const p = withRegistry()
    // No uvx and no docker on this PATH (npx is found beside the running Node.js).
    const noUvx = await failure(
      add(p, 'io.github.example/weather-mcp', {
        flags: { env: ['WEATHER_API_KEY=k'] },
        yes: true,
        path: '/nonexistent',
      }),
    )
    expect(noUvx.code).toBe('runtime_missing')
    expect(noUvx.message).toBe(
      '"io.github.example/weather-mcp" cannot run here: pypi: uvx is not found on PATH: install uv, which brings uvx (https://docs.astral.sh/uv/getting-started/installation/)',
    )
    const noDocker = await failure(add(p, 'io.github.example/database-manager', { path: '/nonexistent' }))
    expect(noDocker.message).toMatch(/oci: docker is not found on PATH: install Docker/)
    const forced = await failure(add(p, 'io.github.example/weather-mcp', { forced: 'npm' }))
    expect(forced.message).toBe('--package npm: "io.github.example/weather-mcp" has no such package; it offers pypi')
    expect(existsSync(path.join(p.env.XDG_CONFIG_HOME!, 'mycelium', 'secrets.json'))).toBe(false)
  })

  it('says a Docker client without an engine is no runtime for an image (where this machine has such a client)', async ({
    skip,
  }) => {
    const { execFileSync } = await import('node:child_process')
    let engineless = false
    try {
      execFileSync('docker', ['version', '--format', '{{.Server.Version}}'], { stdio: 'ignore', timeout: 10_000 })
    } catch (error) {
      engineless = (error as NodeJS.ErrnoException).code !== 'ENOENT'
    }
    if (!engineless) skip()
    const p = withRegistry()
    const error = await failure(add(p, 'io.github.example/database-manager', { path: process.env.PATH }))
    expect(error.message).toMatch(/oci: docker is here but no Docker engine answers \(.+\): start Docker/)
  })

  it('starts nothing and writes nothing when a local server.json does not read', async () => {
    const p = withRegistry()
    writeFileSync(path.join(p.dir, 'bad.json'), '{ not json')
    writeFileSync(path.join(p.dir, 'odd.json'), '{ "name": "io.x/y", "packages": "npm" }')
    expect((await failure(add(p, './bad.json'))).message).toMatch(/bad\.json is not JSON/)
    expect((await failure(add(p, './odd.json'))).message).toMatch(/odd\.json is not a server\.json: version: missing/)
    expect((await failure(add(p, './none.json'))).message).toMatch(/cannot read .*none\.json: ENOENT/)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { failure } from './helpers.js'
import { RegistryClient } from '../../src/install/registry-client.js'
import { searchRegistry, searchTable } from '../../src/install/search.js'
import { loadedConfig } from '../helpers/runtime.js'
import { freePort } from '../helpers/http.js'
import { registryFixture, startRegistry, type TestRegistry } from '../helpers/registry.js'

const FIXTURES = ['filesystem', 'weather-pypi', 'database-oci', 'remote', 'reports-secrets']

describe('the registry client: bad input and failures first', () => {
  it('refuses a registry.url that is not an http(s) URL, in the config and in the client', () => {
    expect(() => loadedConfig({ registry: { url: 'ftp://registry.example.com' } })).toThrow(
      /registry\.url: "ftp:\/\/registry\.example\.com" must be an http\(s\) base URL/,
    )
    expect(() => loadedConfig({ registry: { uri: 'https://x' } })).toThrow(/unknown key "uri"; did you mean "url"/)
    expect(() => new RegistryClient('not a url')).toThrow(/registry\.url must be an http\(s\) URL/)
  })

  it('says a registry that is down cannot be reached, naming its URL and the fix', async () => {
    const port = await freePort()
    const error = await failure(new RegistryClient(`http://127.0.0.1:${port}`).search('fs', 5))
    expect(error.code).toBe('registry_unreachable')
    expect(error.message).toMatch(
      new RegExp(`the MCP Registry at http://127\\.0\\.0\\.1:${port} cannot be reached: .*ECONNREFUSED`),
    )
    expect(error.fix).toMatch(/registry\.url/)
  })

  it('refuses an answer that is not JSON, or not of the API’s shape, naming the URL and the field', async () => {
    const garbage = await startRegistry([], { answer: 'garbage' })
    const wrong = await startRegistry([], { answer: 'wrong-shape' })
    try {
      const notJson = await failure(new RegistryClient(garbage.url).search('fs', 5))
      expect(notJson.code).toBe('registry_bad_answer')
      expect(notJson.message).toBe(`the MCP Registry at ${garbage.url} answered GET /v0.1/servers with not JSON`)
      const shape = await failure(new RegistryClient(wrong.url).version('io.x/y', 'latest'))
      expect(shape.message).toMatch(
        /answered GET \/v0\.1\/servers\/io\.x%2Fy\/versions\/latest with not the registry API's shape \(name: missing\)/,
      )
      const list = await failure(new RegistryClient(wrong.url).search('', 5))
      expect(list.message).toMatch(/servers\[0\]\.server: missing/)
    } finally {
      await garbage.close()
      await wrong.close()
    }
  })
})

describe('the registry client', () => {
  let registry: TestRegistry
  beforeAll(async () => {
    registry = await startRegistry(
      [
        { ...registryFixture('filesystem'), version: '2026.1.1' },
        ...FIXTURES.map((f) => registryFixture(f, { '{REMOTE_URL}': 'https://remote.example.com/mcp' })),
      ],
      { prefix: '/mirror/mcp' },
    )
  })
  afterAll(() => registry.close())

  it('names an unknown server or version as not in the registry, with the fix', async () => {
    const client = new RegistryClient(registry.url)
    const name = await failure(client.version('io.github.nobody/nothing', 'latest'))
    expect(name.code).toBe('not_in_registry')
    expect(name.message).toBe(`no server "io.github.nobody/nothing" in the MCP Registry at ${registry.url}`)
    expect(name.fix).toMatch(/myc search/)
    const version = await failure(client.version('io.github.modelcontextprotocol/filesystem', '9.9.9'))
    expect(version.message).toMatch(/no version 9\.9\.9 of "io\.github\.modelcontextprotocol\/filesystem"/)
  })

  it('asks under the base URL’s path, the name encoded as one segment, and reads one version', async () => {
    const client = new RegistryClient(registry.url)
    const old = await client.version('io.github.modelcontextprotocol/filesystem', '2026.1.1')
    expect(old.version).toBe('2026.1.1')
    expect((await client.version('io.github.modelcontextprotocol/filesystem', 'latest')).version).toBe('2026.8.31')
    expect(registry.requests).toContain(
      '/mirror/mcp/v0.1/servers/io.github.modelcontextprotocol%2Ffilesystem/versions/2026.1.1',
    )
  })

  it('searches the latest versions by name, and says how each runs', async () => {
    const rows = await searchRegistry({ words: 'example', limit: 10, registryUrl: registry.url })
    expect(rows.map((r) => [r.name, r.version, r.kinds])).toEqual([
      ['io.github.example/weather-mcp', '0.5.0', ['pypi']],
      ['io.github.example/database-manager', '3.1.0', ['oci']],
      ['io.example.anonymous/hybrid-echo', '1.5.0', ['npm', 'remote']],
      ['io.github.example/reports', '2.0.1', ['pypi']],
    ])
    expect(registry.requests.at(-1)).toBe('/mirror/mcp/v0.1/servers?version=latest&limit=10&search=example')
  })

  it('shows a description’s terminal escapes as text in the table, and cuts it to one line', () => {
    const table = searchTable([
      {
        name: 'io.x/evil\u001b[2J',
        version: '1.0.0',
        kinds: ['npm'],
        description: registryFixture('reports-secrets').description as string,
      },
    ])
    expect(table).not.toMatch(/[\u001b\u0007]/)
    expect(table).toContain('io.x/evil\\x1b[2J')
    expect(table).toContain('Reports \\x1b]0;owned\\x07 on what it was \\x1b[31mgiven')
    const [head, row] = table.split('\n')
    expect(head!.indexOf('VERSION')).toBe(row!.indexOf('1.0.0'))
  })
})

describe('search pagination', () => {
  it('follows the registry’s cursor until it has as many as asked, and stops where the list ends', async () => {
    const many = Array.from({ length: 45 }, (_, i) => ({
      name: `io.github.bulk/server-${String(i).padStart(2, '0')}`,
      description: `bulk ${i}`,
      version: '1.0.0',
      packages: [{ registryType: 'npm', identifier: `bulk-${i}`, version: '1.0.0', transport: { type: 'stdio' } }],
    }))
    const registry = await startRegistry(many, { maxPage: 10 })
    try {
      const forty = await searchRegistry({ words: 'bulk', limit: 40, registryUrl: registry.url })
      expect(forty.map((r) => r.name)).toEqual(many.slice(0, 40).map((s) => s.name))
      // Four pages of ten, each after the cursor the one before gave, asking only for what is still wanted.
      expect(registry.requests.map((r) => new URL(r, 'http://x').searchParams.get('cursor'))).toEqual([
        null,
        Buffer.from('10').toString('base64'),
        Buffer.from('20').toString('base64'),
        Buffer.from('30').toString('base64'),
      ])
      expect(registry.requests.map((r) => new URL(r, 'http://x').searchParams.get('limit'))).toEqual([
        '40',
        '30',
        '20',
        '10',
      ])
      const all = await searchRegistry({ words: 'bulk', limit: 1000, registryUrl: registry.url })
      expect(all.map((r) => r.name)).toEqual(many.map((s) => s.name))
      expect(registry.requests).toHaveLength(4 + 5)
    } finally {
      await registry.close()
    }
  })
})

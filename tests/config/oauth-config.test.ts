import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/parse.js'

const file = '/cfg/mycelium.config.json'
const env = { WIKI_SECRET: 'wiki-secret-value-123' }

function parse(server: Record<string, unknown>) {
  return parseConfig({ mcpServers: { wiki: server } }, { file, env })
}

function problem(server: Record<string, unknown>): string {
  try {
    parse(server)
  } catch (error) {
    return (error as Error).message
  }
  throw new Error('expected the config to be rejected')
}

describe('the "oauth" key of an HTTP server', () => {
  it('takes clientId, clientSecret (expanded, and kept for redaction), clientMetadataUrl and scopes', () => {
    const { config, secrets } = parse({
      type: 'http',
      url: 'https://wiki.example/mcp',
      oauth: { clientId: 'myc', clientSecret: '${WIKI_SECRET}', scopes: ['wiki:read', 'offline_access'] },
    })
    const wiki = config.servers.get('wiki')
    expect(wiki?.type === 'http' && wiki.oauth).toEqual({
      clientId: 'myc',
      clientSecret: 'wiki-secret-value-123',
      scopes: ['wiki:read', 'offline_access'],
    })
    expect(secrets).toContain('wiki-secret-value-123')
    expect(parse({ type: 'sse', url: 'https://wiki.example/sse', oauth: {} }).config.servers.get('wiki')).toMatchObject(
      { oauth: {} },
    )
    expect(
      parse({
        type: 'http',
        url: 'https://wiki.example/mcp',
        oauth: { clientMetadataUrl: 'https://myc.example.com/client.json' },
      }).config.servers.get('wiki'),
    ).toMatchObject({
      oauth: { clientMetadataUrl: 'https://myc.example.com/client.json' },
    })
  })

  it('names the key path and the fix for a bad value, and never shows the secret', () => {
    expect(problem({ type: 'http', url: 'https://w/mcp', oauth: { clientID: 'x' } })).toMatch(
      /mcpServers\.wiki\.oauth\.clientID: unknown key "clientID"; did you mean "clientId"\?/,
    )
    expect(
      problem({
        type: 'http',
        url: 'https://w/mcp',
        oauth: { clientMetadataUrl: 'http://myc.example.com/client.json' },
      }),
    ).toMatch(/oauth\.clientMetadataUrl: .*must be an https URL with a path/)
    expect(
      problem({ type: 'http', url: 'https://w/mcp', oauth: { clientMetadataUrl: 'https://myc.example.com/' } }),
    ).toMatch(/must be an https URL with a path/)
    expect(problem({ type: 'http', url: 'https://w/mcp', oauth: { scopes: ['two words'] } })).toMatch(
      /oauth\.scopes\[0\]: .*must be one scope word/,
    )
    const secret = problem({ type: 'http', url: 'https://w/mcp', oauth: { clientSecret: 12345678 } })
    expect(secret).toMatch(/oauth\.clientSecret/)
    expect(secret).not.toContain('12345678')
  })

  it('does not fit a stdio server', () => {
    expect(problem({ command: 'npx', oauth: {} })).toMatch(
      /mcpServers\.wiki\.oauth: "oauth" does not fit a server of type "stdio": "url", "headers" and "oauth" fit type "http" or "sse"/,
    )
  })
})

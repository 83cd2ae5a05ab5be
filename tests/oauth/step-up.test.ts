import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChildTransport } from '../../src/children/child-transports.js'
import { currentHost } from '../../src/children/resolve-command.js'
import type { HttpServerConfig } from '../../src/config/server-schema.js'
import { createLogger } from '../../src/logger.js'
import { login } from '../../src/oauth/login.js'
import { TokenStore } from '../../src/oauth/token-store.js'
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js'

/** A 403 insufficient_scope: the call fails with the fix, and the next login asks for the granted and the new scope together. */
describe('step-up on a 403 insufficient_scope', () => {
  let server: OAuthTestServer
  beforeAll(async () => {
    server = await startOAuthServer({ writeScope: 'mcp:write' })
  })
  afterAll(async () => {
    await server.close()
  })

  it('fails the call with the fix, keeps the other tools, and the next login asks for both scopes; then the call works without reconnecting', async () => {
    const config = {
      type: 'http',
      url: server.mcpUrl,
      headers: {},
      startup: 'eager',
      timeoutMs: 60_000,
      startupTimeoutMs: 30_000,
      disabled: false,
      restart: { maxRetries: 0, initialDelayMs: 500, maxDelayMs: 30_000 },
      pingIntervalMs: 0,
    } as HttpServerConfig
    const store = new TokenStore(mkdtempSync(path.join(tmpdir(), 'myc-step-up-')), 'local')
    const person = (url: URL) => void fetch(url, { redirect: 'follow' })
    await login({ server: 'srv', config, store, onAuthorizationUrl: person })
    expect(server.authorizeRequests.at(-1)!.get('scope')?.split(' ')).not.toContain('mcp:write')

    const client = new Client({ name: 't', version: '1' })
    await client.connect(
      createChildTransport(config, createLogger({ quiet: true }), {
        key: 'srv',
        host: currentHost(false),
        configDir: tmpdir(),
        tokenStore: store,
      }),
    )
    try {
      await expect(client.callTool({ name: 'write', arguments: {} })).rejects.toThrow(
        /needs an OAuth login \(the server asks for more scope: mcp:write\); run: myc auth login srv/,
      )
      const whoami = await client.callTool({ name: 'whoami', arguments: {} })
      expect((whoami.content as Array<{ text: string }>)[0]!.text).toMatch(/^you are logged in \(login \d+\)$/)
      expect((await store.get(server.mcpUrl))?.scopeNeeded).toBe('mcp:write')

      await login({ server: 'srv', config, store, onAuthorizationUrl: person })
      const asked = server.authorizeRequests.at(-1)!.get('scope')!.split(' ')
      expect(asked).toEqual(expect.arrayContaining(['mcp:tools', 'mcp:write']))
      expect((await store.get(server.mcpUrl))?.scopeNeeded).toBeUndefined()
      const written = await client.callTool({ name: 'write', arguments: {} })
      expect((written.content as Array<{ text: string }>)[0]!.text).toBe('written')
    } finally {
      await client.close()
    }
  })
})

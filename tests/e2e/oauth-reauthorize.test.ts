import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, connectToMyc, requireBundle, writeConfig } from '../helpers/e2e.js'
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js'

/**
 * A running `myc serve` (stdio) whose HTTP child needs the person again: a
 * login that stopped working and cannot be refreshed, or a step-up (403
 * insufficient_scope). myc writes `myc: authorize: <url>` on stderr and
 * waits for the loopback redirect; the call in flight then goes on. This
 * test plays the person: it follows every such line.
 */
describe('myc serve asks the person to authorize again, and the call goes on (build/myc.cjs)', () => {
  let server: OAuthTestServer
  let env: Record<string, string>
  let config: string
  let client: Client
  const asked: string[] = []
  let follow = true

  beforeAll(async () => {
    requireBundle()
    server = await startOAuthServer({ writeScope: 'mcp:write' })
    const home = mkdtempSync(path.join(tmpdir(), 'myc-reauth-home-'))
    env = { XDG_CONFIG_HOME: path.join(home, 'config'), HOME: home, MYC_TOKEN_KEY: '' }
    config = writeConfig({ mcpServers: { srv: { type: 'http', url: server.mcpUrl } } })
    const first = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [bundle, 'auth', 'login', 'srv', '--no-browser', '--config', config], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      child.stdout.once(
        'data',
        (chunk: Buffer) => void fetch(chunk.toString().trim(), { redirect: 'follow' }).catch(() => {}),
      )
      child.once('close', resolve)
    })
    expect(first).toBe(0)
    const connected = await connectToMyc(['serve', '--config', config], { env })
    client = connected.client
    let pending = ''
    connected.transport.stderr!.on('data', (chunk: Buffer) => {
      pending += chunk.toString()
      const lines = pending.split('\n')
      pending = lines.pop()!
      for (const line of lines) {
        const url = /myc: authorize: (\S+)/.exec(line)?.[1]
        if (!url) continue
        asked.push(line)
        // The person: opens the URL; the authorization server sends the browser back to myc's loopback listener.
        if (follow) void fetch(url, { redirect: 'follow' }).catch(() => {})
      }
    })
  }, 60_000)
  afterAll(async () => {
    await client?.close()
    await server?.close()
  })

  it('a 403 insufficient_scope: one authorization asking for the scope too, then the same call answers', async () => {
    const result = await client.callTool({ name: 'srv__write', arguments: {} })
    expect((result.content as Array<{ text: string }>)[0]!.text).toBe('written')
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatch(/^myc: authorize: http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+ \(srv: .*more scope/)
    expect(server.authorizeRequests.at(-1)!.get('scope')?.split(' ')).toEqual(
      expect.arrayContaining(['mcp:tools', 'mcp:write']),
    )
  }, 60_000)

  it('a login that stopped working and cannot be refreshed: asked again, and the call goes on with the new login', async () => {
    asked.length = 0
    const codes = () => server.tokenRequests.filter((f) => f.get('grant_type') === 'authorization_code').length
    const logins = codes()
    server.revokeAccessTokens()
    server.revokeRefreshTokens()
    const after = (await client.callTool({ name: 'srv__whoami', arguments: {} })).content as Array<{ text: string }>
    expect(asked).toHaveLength(1)
    expect(after[0]!.text).toMatch(/^you are logged in \(login \d+\)$/)
    // A new login, not a refresh: the person's authorization gave the tokens the call went on with.
    expect(codes()).toBe(logins + 1)
  }, 60_000)

  it('asks at most three times for one call, then fails it with the fix', async () => {
    asked.length = 0
    server.refuseAll = true
    try {
      const failed = await client.callTool({ name: 'srv__whoami', arguments: {} }).then(
        (r) => JSON.stringify(r),
        (e: unknown) => String(e),
      )
      expect(asked).toHaveLength(3)
      expect(failed).toMatch(/OAuth login/)
    } finally {
      server.refuseAll = false
    }
  }, 90_000)
})

import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, connectToMyc, requireBundle, writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js'

/** Runs build/myc.cjs without blocking this process (the OAuth server answers from here). */
function myc(
  args: string[],
  env: Record<string, string>,
  onStdoutLine?: (line: string) => void,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    let partial = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      partial += chunk.toString()
      const lines = partial.split('\n')
      partial = lines.pop()!
      for (const line of lines) onStdoutLine?.(line)
    })
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill(), 60_000)
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

interface StatusServer {
  key: string
  state: string
  error: string | null
}

describe('OAuth for an HTTP child: myc auth login, status, serve, logout (build/myc.cjs)', () => {
  let server: OAuthTestServer
  let env: Record<string, string>
  let config: string
  let audit: string
  const said: string[] = []
  const run = async (args: string[], onLine?: (line: string) => void) => {
    const result = await myc(args, env, onLine)
    said.push(result.stdout, result.stderr)
    return result
  }
  const statusOf = async () => {
    const r = await run(['status', '--json', '--config', config])
    return { code: r.code, servers: (JSON.parse(r.stdout) as { servers: StatusServer[] }).servers }
  }

  beforeAll(async () => {
    requireBundle()
    server = await startOAuthServer()
    const home = mkdtempSync(path.join(tmpdir(), 'myc-oauth-home-'))
    env = { XDG_CONFIG_HOME: path.join(home, 'config'), HOME: home, MYC_TOKEN_KEY: '' }
    audit = path.join(home, 'audit.jsonl')
    // No "oauth" key: the child's 401 challenge is what turns the flow on. A skill for both servers, so calls are audited.
    config = writeConfig({
      mcpServers: {
        srv: { type: 'http', url: server.mcpUrl },
        echo: { type: 'stdio', command: process.execPath, args: [fixtureServer('echo')] },
      },
      session: { defaultSkills: ['remote'] },
      roles: { default: 'developer' },
      audit: { file: audit },
    })
    mkdirSync(path.join(path.dirname(config), 'skills', 'remote'), { recursive: true })
    writeFileSync(
      path.join(path.dirname(config), 'skills', 'remote', 'SKILL.md'),
      '---\nname: remote\ndescription: The remote server and echo\nallowedRoles: [developer]\nallowedTools: ["srv:*", "echo:*"]\n---\nUse them.\n',
    )
  }, 30_000)
  afterAll(async () => {
    await server?.close()
  })

  it('before a login, the child is FAILED with the fix and the others keep working', async () => {
    const { code, servers } = await statusOf()
    expect(code).toBe(3)
    const srv = servers.find((s) => s.key === 'srv')!
    expect(srv.state).toBe('FAILED')
    expect(srv.error).toMatch(/needs an OAuth login.*run: myc auth login srv/)
    expect(servers.find((s) => s.key === 'echo')!.state).toBe('RUNNING')
    // A login is the person's act: starting the child registered no client and asked for no authorization.
    expect(server.registrations).toHaveLength(0)
    expect(server.authorizeRequests).toHaveLength(0)
  }, 60_000)

  it('usage errors exit 2: an unknown server, a stdio server, no server', async () => {
    expect((await run(['auth', 'login', 'nope', '--no-browser', '--config', config])).code).toBe(2)
    const stdio = await run(['auth', 'login', 'echo', '--no-browser', '--config', config])
    expect(stdio.code).toBe(2)
    expect(stdio.stderr).toMatch(/stdio server/)
    expect((await run(['auth', 'login', '--config', config])).code).toBe(2)
  }, 60_000)

  it('login --no-browser prints only the URL; the person follows it; tokens are stored (exit 0)', async () => {
    let visited: Promise<Response> | undefined
    const result = await run(['auth', 'login', 'srv', '--no-browser', '--config', config], (line) => {
      // The person: opens the URL; the server redirects to myc's loopback listener.
      visited ??= fetch(line, { redirect: 'follow' })
    })
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stdout.trim().split('\n')
    expect(lines).toHaveLength(1)
    const authorizeUrl = new URL(lines[0]!)
    expect(authorizeUrl.origin + authorizeUrl.pathname).toBe(`${server.base}/authorize`)
    const page = await visited!
    expect(page.status).toBe(200)
    expect(await page.text()).toMatch(/Logged in/)
    // PKCE S256, the resource indicator, the challenge's scope, a loopback redirect, dynamic registration.
    const q = server.authorizeRequests.at(-1)!
    expect(q.get('code_challenge_method')).toBe('S256')
    expect(q.get('resource')).toBe(server.mcpUrl)
    expect(q.get('scope')?.split(' ')).toContain('mcp:tools')
    expect(q.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)
    expect(server.registrations).toHaveLength(1)
    // The store is in the user's config folder, 0600, and holds no token text.
    const store = path.join(env.XDG_CONFIG_HOME!, 'mycelium', 'oauth-tokens.json')
    expect(existsSync(store)).toBe(true)
    if (process.platform !== 'win32') expect(statSync(store).mode & 0o777).toBe(0o600)
    const text = readFileSync(store, 'utf8')
    for (const token of server.issued) expect(text).not.toContain(token)
  }, 60_000)

  it('after the login, status shows the child RUNNING and a tools/call through myc serve works', async () => {
    const { code, servers } = await statusOf()
    expect(code).toBe(0)
    expect(servers.find((s) => s.key === 'srv')!.state).toBe('RUNNING')
    const { client, transport } = await connectToMyc(['serve', '--config', config], { env })
    let stderr = ''
    transport.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    try {
      const result = await client.callTool({ name: 'srv__whoami', arguments: {} })
      expect((result.content as Array<{ text?: string }>)[0]?.text).toMatch(/^you are logged in \(login \d+\)$/)
      // A token the server stopped accepting: refreshed on the 401, the call still answered.
      const before = server.refreshes
      server.revokeAccessTokens()
      const again = await client.callTool({ name: 'srv__whoami', arguments: {} })
      expect((again.content as Array<{ text?: string }>)[0]?.text).toMatch(/^you are logged in \(login \d+\)$/)
      expect(server.refreshes).toBe(before + 1)
    } finally {
      await client.close()
    }
    said.push(stderr)
  }, 60_000)

  it('auth status --json shows the token state and scopes, never a token', async () => {
    const r = await run(['auth', 'status', '--json', '--config', config])
    expect(r.code).toBe(0)
    const report = JSON.parse(r.stdout) as {
      principal: string
      servers: Array<{ server: string; state: string; expiresAt: string; refreshable: boolean; scopes: string[] }>
    }
    expect(report.principal).toBe('local')
    expect(report.servers).toEqual([
      expect.objectContaining({
        server: 'srv',
        state: 'valid',
        refreshable: true,
        scopes: expect.arrayContaining(['mcp:tools']),
      }),
    ])
    expect(Date.parse(report.servers[0]!.expiresAt)).toBeGreaterThan(Date.now())
  }, 60_000)

  it('after logout the child is FAILED with the fix again', async () => {
    const r = await run(['auth', 'logout', 'srv', '--config', config])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/logged out/)
    const { servers } = await statusOf()
    const srv = servers.find((s) => s.key === 'srv')!
    expect(srv.state).toBe('FAILED')
    expect(srv.error).toMatch(/run: myc auth login srv/)
    const status = JSON.parse((await run(['auth', 'status', '--json', '--config', config])).stdout) as {
      servers: Array<{ state: string }>
    }
    expect(status.servers[0]!.state).toBe('none')
  }, 60_000)

  it('no token ever appears in myc’s stdout, stderr or the audit file', () => {
    expect(server.issued.length).toBeGreaterThanOrEqual(4)
    // The calls through myc serve were audited: the file exists and names the tool.
    const auditText = readFileSync(audit, 'utf8')
    expect(auditText).toContain('whoami')
    for (const token of server.issued) {
      for (const text of said) expect(text).not.toContain(token)
      expect(auditText).not.toContain(token)
    }
  })
})

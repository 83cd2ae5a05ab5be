import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeConfig } from '../helpers/e2e.js'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'
import { connectHttp, mcpHeaders, initializeBody, startHttpMyc, type HttpMyc } from '../helpers/http.js'

/**
 * `http.jwt`: myc as an OAuth 2.1 resource server. A local identity provider
 * (a JWKS over HTTP) signs tokens whose claims give the role and the skills;
 * myc verifies them per request (signature, exp, nbf, iss, aud).
 */
describe('myc serve --http with http.jwt (build/myc.cjs)', () => {
  const issuer = 'https://id.example.test/'
  const audience = 'myc-e2e'
  let keys: Awaited<ReturnType<typeof generateKeyPair>>
  let stranger: Awaited<ReturnType<typeof generateKeyPair>>
  let jwks: Server
  let m: HttpMyc
  const sign = (
    claims: Record<string, unknown>,
    over: { key?: typeof keys.privateKey; exp?: number | string; aud?: string } = {},
  ) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience(over.aud ?? audience)
      .setSubject(String(claims.sub ?? 'someone'))
      .setIssuedAt()
      .setExpirationTime(over.exp ?? '5m')
      .sign(over.key ?? keys.privateKey)

  beforeAll(async () => {
    keys = await generateKeyPair('ES256')
    stranger = await generateKeyPair('ES256')
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256' }
    jwks = createServer((_req, res) =>
      res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })),
    )
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r))
    const config = writeConfig({
      mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } },
      skills: { dirs: [path.join(repoRoot, 'tests/fixtures/http/skills')] },
      session: { defaultSkills: ['common'] },
      http: {
        jwt: {
          issuer,
          audience,
          jwksUrl: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`,
          roleClaim: 'role',
          skillsClaim: 'scope',
        },
      },
    })
    m = await startHttpMyc(config)
  }, 30_000)
  afterAll(async () => {
    await m?.stop()
    await new Promise<void>((r) => jwks.close(() => r()))
  })

  it('the role and skill scopes of a verified token decide what its session sees', async () => {
    const guest = await connectHttp(m.url, { token: await sign({ sub: 'g', role: 'guest' }) })
    const dev = await connectHttp(m.url, {
      token: await sign({ sub: 'd', role: 'guest', scope: 'openid skill:reader skill:interactive' }),
    })
    try {
      const g = (await guest.client.listTools()).tools.map((t) => t.name)
      const d = (await dev.client.listTools()).tools.map((t) => t.name)
      expect(g).toContain('echo__echo')
      expect(g).not.toContain('echo__add')
      // skill:reader is reachable by guest and added; skill:interactive is not (developer only) and is dropped.
      expect(d).toContain('echo__add')
      expect(d.filter((n) => n.startsWith('asker'))).toEqual([])
    } finally {
      await Promise.all([guest.client.close(), dev.client.close()])
    }
  }, 30_000)

  it('refuses a forged, expired, wrong-audience or unknown-role token with 401 and a challenge naming the resource metadata', async () => {
    const tokens = [
      await sign({ role: 'guest' }, { key: stranger.privateKey }),
      await sign({ role: 'guest' }, { exp: Math.floor(Date.now() / 1000) - 600 }),
      await sign({ role: 'guest' }, { aud: 'other' }),
      await sign({ role: 'nobody' }),
      'not-a-jwt',
    ]
    for (const token of tokens) {
      const r = await fetch(m.url, {
        method: 'POST',
        headers: mcpHeaders({ Authorization: `Bearer ${token}` }),
        body: initializeBody,
      })
      expect(r.status).toBe(401)
      expect(r.headers.get('www-authenticate')).toBe(
        `Bearer realm="mycelium", resource_metadata="${m.base}/.well-known/oauth-protected-resource", error="invalid_token"`,
      )
      expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/not valid/)
    }
    const none = await fetch(m.url, { method: 'POST', headers: mcpHeaders(), body: initializeBody })
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toContain('resource_metadata=')
  }, 30_000)

  it("every request re-derives the session's skills from its JWT: a narrower one narrows it at once, a wider one does not widen it; another role or subject is refused", async () => {
    let bearer = await sign({ sub: 'narrow', role: 'guest', scope: 'skill:reader' })
    // One session whose requests carry whichever token is current.
    const transport = new StreamableHTTPClientTransport(new URL(m.url), {
      fetch: (input, init) => {
        const headers = new Headers(init?.headers)
        headers.set('Authorization', `Bearer ${bearer}`)
        return fetch(input, { ...init, headers })
      },
    })
    const client = new Client({ name: 'narrowing', version: '1' }, { capabilities: {} })
    await client.connect(transport)
    const tools = async () => (await client.listTools()).tools.map((t) => t.name)
    const activate = async () =>
      (await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'reader' } })) as {
        isError?: boolean
        content: Array<{ text: string }>
      }
    try {
      expect(await tools()).toContain('echo__add')
      bearer = await sign({ sub: 'narrow', role: 'guest', scope: 'openid' })
      expect(await tools()).not.toContain('echo__add')
      await expect(client.callTool({ name: 'echo__add', arguments: { a: 1, b: 2 } })).rejects.toThrow(
        /Unknown tool: echo__add/,
      )
      const again = await activate()
      expect(again.isError).toBe(true)
      expect(again.content[0]!.text).toMatch(/no longer granted by this session's credential; initialize a new session/)
      // Wider again: the session stays as narrow as it became.
      bearer = await sign({ sub: 'narrow', role: 'guest', scope: 'skill:reader' })
      expect(await tools()).not.toContain('echo__add')
      expect((await activate()).isError).toBe(true)
      const id = transport.sessionId!
      const post = async (token: string) =>
        fetch(m.url, {
          method: 'POST',
          headers: mcpHeaders({
            Authorization: `Bearer ${token}`,
            'Mcp-Session-Id': id,
            'MCP-Protocol-Version': '2025-11-25',
          }),
          body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
        })
      // Same subject, another role: refused, naming why.
      const promoted = await post(await sign({ sub: 'narrow', role: 'developer' }))
      expect(promoted.status).toBe(403)
      expect(((await promoted.json()) as { error: { message: string } }).error.message).toMatch(
        /role is now developer, not guest as when the session was opened; initialize a new session/,
      )
      // Another subject: the session does not exist for it.
      expect((await post(await sign({ sub: 'someone-else', role: 'guest', scope: 'skill:reader' }))).status).toBe(404)
      // A new session with the wider token has the skill.
      const fresh = await connectHttp(m.url, { token: bearer })
      expect((await fresh.client.listTools()).tools.map((t) => t.name)).toContain('echo__add')
      await fresh.client.close()
    } finally {
      await client.close()
    }
  }, 30_000)

  it('refuses a token without sub (every such token would be one caller) with 401 and an error_description', async () => {
    const token = await new SignJWT({ role: 'guest' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(keys.privateKey)
    const r = await fetch(m.url, {
      method: 'POST',
      headers: mcpHeaders({ Authorization: `Bearer ${token}` }),
      body: initializeBody,
    })
    expect(r.status).toBe(401)
    expect(r.headers.get('www-authenticate')).toMatch(
      /error="invalid_token", error_description="the token has no sub claim/,
    )
  })

  it('serves RFC 9728 protected resource metadata without a token', async () => {
    for (const p of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const r = await fetch(`${m.base}${p}`)
      expect(r.status).toBe(200)
      expect(await r.json()).toMatchObject({
        resource: `${m.base}/mcp`,
        authorization_servers: [issuer],
        bearer_methods_supported: ['header'],
      })
    }
  })
})

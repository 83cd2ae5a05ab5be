import { mkdtempSync } from 'node:fs'
import type { Server } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpFace, type HttpFaceOptions } from '../../src/http/http-face.js'
import { RateLimiter } from '../../src/http/rate-limit.js'
import { readTokens } from '../../src/http/tokens.js'
import { TokenStore } from '../../src/oauth/token-store.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { faceOptions, serveFace } from '../helpers/http.js'
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js'
import { startRuntime } from '../helpers/runtime.js'

const ALICE = 'alice-0123456789abcdef0123456789abcdef'
const BOB = 'bob-0123456789abcdef0123456789abcdef0000'
const UNNAMED = 'unnamed-0123456789abcdef0123456789abcdef'

/**
 * A person's login through `myc serve --http` (src/http/oauth-logins.ts),
 * in process: the real face on node:http, in front of a real OAuth
 * authorization server.
 */
describe('people’s OAuth logins through the HTTP face', () => {
  let auth: OAuthTestServer
  let evil: OAuthTestServer
  let runtime: Runtime
  let stores: string
  const clock = { now: 0 }
  const faces: HttpFace[] = []
  const servers: Server[] = []

  const start = async (extra: Partial<HttpFaceOptions> = {}) => {
    const face = new HttpFace(
      faceOptions(
        runtime,
        readTokens(
          [
            { env: 'A', role: 'dev', name: 'alice' },
            { env: 'B', role: 'dev', name: 'bob' },
            { env: 'U', role: 'dev' },
          ],
          { A: ALICE, B: BOB, U: UNNAMED },
        ),
        extra,
      ),
    )
    faces.push(face)
    const served = await serveFace(face)
    servers.push(served.server)
    return served.base
  }
  let base: string

  /** `GET /oauth/login/<server>` with a credential: the authorization URL (as JSON) or the refusal. */
  const begin = async (token: string | undefined, server = 'gh', at = base) => {
    const r = await fetch(`${at}/oauth/login/${server}`, {
      headers: { Accept: 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    })
    const body = await r.text()
    return {
      status: r.status,
      body,
      headers: r.headers,
      url: r.status === 200 ? (JSON.parse(body) as { authorizationUrl: string }).authorizationUrl : '',
    }
  }
  beforeAll(async () => {
    auth = await startOAuthServer()
    evil = await startOAuthServer({ authorizationEndpoint: () => 'file:///tmp/myc-evil/evil.desktop' })
    runtime = await startRuntime({
      mcpServers: {
        gh: { type: 'http', url: auth.mcpUrl, oauth: {}, startup: 'lazy' },
        evil: { type: 'http', url: evil.mcpUrl, oauth: {}, startup: 'lazy' },
      },
    })
    stores = mkdtempSync(path.join(tmpdir(), 'myc-person-logins-'))
    runtime.setPersonalStores((owner) => new TokenStore(stores, owner))
    base = await start()
  }, 30_000)
  afterAll(async () => {
    await Promise.all(faces.map((f) => f.close(0)))
    await Promise.all(servers.map((s) => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r())))))
    await runtime?.close()
    await auth?.close()
    await evil?.close()
  })

  it('GET /oauth/login counts against http.rateLimit: no discovery or registration beyond it', async () => {
    const limited = await start({ rateLimiter: new RateLimiter({ requestsPerMinute: 3 }, () => clock.now) })
    const registrations = auth.registrations.length
    const statuses: number[] = []
    for (let i = 0; i < 8; i++) statuses.push((await begin(ALICE, 'gh', limited)).status)
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429])
    expect(auth.registrations.length).toBe(registrations + 3)
    const over = await begin(ALICE, 'gh', limited)
    expect(over.headers.get('retry-after')).toBe('20')
    expect(over.body).toMatch(/Too Many Requests: over 3 requests a minute for this credential/)
    // Another credential has its own bucket.
    expect((await begin(BOB, 'gh', limited)).status).toBe(200)
    clock.now += 20_000
    expect((await begin(ALICE, 'gh', limited)).status).toBe(200)
  })

  it('an authorization address that is not http(s) is never handed out: 502 naming the server and the scheme', async () => {
    const r = await fetch(`${base}/oauth/login/evil`, {
      headers: { Authorization: `Bearer ${ALICE}` },
      redirect: 'manual',
    })
    expect(r.status).toBe(502)
    expect(r.headers.get('location')).toBeNull()
    expect(await r.text()).toMatch(
      /the login to "evil" could not start: the authorization address of "evil" is a file: address: myc opens and shows only http and https addresses/,
    )
  })
})

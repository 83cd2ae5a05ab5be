import { mkdtempSync } from 'node:fs'
import type { Server } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpFace, type HttpFaceOptions } from '../../src/http/http-face.js'
import { MAX_PENDING_PER_CREDENTIAL } from '../../src/http/oauth-logins.js'
import { RateLimiter } from '../../src/http/rate-limit.js'
import { readTokens } from '../../src/http/bearer-tokens.js'
import { TokenStore } from '../../src/oauth/token-store.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { faceOptions, serveFace } from '../helpers/http.js'
import { callbackCode, startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js'
import { startRuntime } from '../helpers/runtime.js'

const ALICE = 'alice-0123456789abcdef0123456789abcdef'
const BOB = 'bob-0123456789abcdef0123456789abcdef0000'
const UNNAMED = 'unnamed-0123456789abcdef0123456789abcdef'

/**
 * A person's login through `myc serve --http` (src/http/oauth-logins.ts),
 * in process: the real face on node:http, in front of a real OAuth
 * authorization server. A login belongs to the credential that started it:
 * the callback stores nothing, and only that credential, bringing the
 * one-time code the callback page shows, finishes it.
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
  /** A browser (anyone's) that opens the authorization URL: the server says yes and sends it to myc's callback. */
  const browse = async (authorizationUrl: string) => {
    const r = await fetch(authorizationUrl, { redirect: 'follow' })
    const html = await r.text()
    return { status: r.status, html, code: callbackCode(html) }
  }
  /** `POST /oauth/login/<server>?code=…` with a credential. */
  const finish = async (token: string | undefined, code: string | undefined, server = 'gh', at = base) => {
    const query = code === undefined ? '' : `?code=${encodeURIComponent(code)}`
    const r = await fetch(`${at}/oauth/login/${server}${query}`, {
      method: 'POST',
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    })
    return { status: r.status, body: await r.text() }
  }
  const stored = (owner: string) => new TokenStore(stores, owner).get(auth.mcpUrl)
  const exchanges = () => auth.tokenRequests.filter((f) => f.get('grant_type') === 'authorization_code').length

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

  it('bad input: one clear answer each, and nothing stored', async () => {
    const put = await fetch(`${base}/oauth/login/gh`, { method: 'PUT', headers: { Authorization: `Bearer ${ALICE}` } })
    expect(put.status).toBe(405)
    expect(put.headers.get('allow')).toBe('GET, POST')
    expect(await put.text()).toMatch(/GET starts a login, POST finishes it/)
    expect((await fetch(`${base}/oauth/callback`, { method: 'POST' })).status).toBe(405)
    expect((await finish(undefined, 'x')).status).toBe(401)
    const noCode = await finish(ALICE, undefined)
    expect(noCode.status).toBe(400)
    expect(noCode.body).toMatch(/no login to "gh" is waiting for this code .*start again with GET \/oauth\/login\/gh/)
    expect((await finish(ALICE, 'guessed-code')).status).toBe(400)
    expect((await finish(UNNAMED, 'x')).status).toBe(403)
    expect((await finish(ALICE, 'x', 'missing')).status).toBe(404)
    const forged = await fetch(`${base}/oauth/callback?code=x&state=forged`)
    expect(forged.status).toBe(400)
    expect(await forged.text()).toMatch(/not a login myc is waiting for/)
    expect(await stored('alice')).toBeUndefined()
  })

  it('a person who finishes their own login stores their own tokens (the benign twin)', async () => {
    const started = await begin(ALICE)
    expect(started.status, started.body).toBe(200)
    expect(new URL(started.url).searchParams.get('redirect_uri')).toBe(`${base}/oauth/callback`)
    const before = exchanges()
    const landed = await browse(started.url)
    expect(landed.status).toBe(200)
    expect(landed.html).toMatch(/One step left: the login to &#34;gh&#34; for alice is stored only when/)
    expect(landed.html).toContain(
      `curl -X POST -H &#34;Authorization: Bearer $MYC_TOKEN&#34; &#39;${base}/oauth/login/gh?code=`,
    )
    expect(landed.code).toMatch(/^[A-Za-z0-9_-]{20}$/)
    // The callback alone exchanged and stored nothing.
    expect(exchanges()).toBe(before)
    expect(await stored('alice')).toBeUndefined()

    const done = await finish(ALICE, landed.code)
    expect(done.status, done.body).toBe(200)
    expect(JSON.parse(done.body)).toEqual({ loggedIn: true, server: 'gh', principal: 'alice' })
    expect(exchanges()).toBe(before + 1)
    expect((await stored('alice'))?.tokens.access_token).toMatch(/^at-/)
    expect(await stored('bob')).toBeUndefined()
    // The code is used once.
    expect((await finish(ALICE, landed.code)).status).toBe(400)
    // Without Accept: application/json, a redirect to the same kind of address.
    const redirect = await fetch(`${base}/oauth/login/gh`, {
      headers: { Authorization: `Bearer ${ALICE}` },
      redirect: 'manual',
    })
    expect(redirect.status).toBe(302)
    expect(redirect.headers.get('location')).toMatch(new RegExp(`^${auth.base}/authorize\\?`))
  })

  it('a link sent to someone else stores nothing: their browser gets the code, and only the credential that started the login can use it', async () => {
    const fresh = mkdtempSync(path.join(tmpdir(), 'myc-person-logins-'))
    runtime.setPersonalStores((owner) => new TokenStore(fresh, owner))
    try {
      const started = await begin(ALICE)
      const before = exchanges()
      // Bob opens alice's link, and says yes at the authorization server as himself.
      const landed = await browse(started.url)
      expect(landed.status).toBe(200)
      expect(landed.html).toContain('for alice')
      expect(landed.html).toContain(
        'If you did not start this login yourself, close this tab and give the code to no one.',
      )
      // The same answer again is refused: one answer per login.
      expect((await browse(started.url)).status).toBe(400)
      // Alice cannot finish without the code Bob's browser shows.
      expect((await finish(ALICE, 'not-the-code')).status).toBe(400)
      // Bob finishing it with his own credential stores nothing, for anyone, and ends the login.
      const bobs = await finish(BOB, landed.code)
      expect(bobs.status).toBe(403)
      expect(bobs.body).toMatch(/started with another credential; nothing was stored, and the login is ended/)
      expect((await finish(ALICE, landed.code)).status).toBe(400)
      expect(exchanges()).toBe(before)
      expect(await new TokenStore(fresh, 'alice').get(auth.mcpUrl)).toBeUndefined()
      expect(await new TokenStore(fresh, 'bob').get(auth.mcpUrl)).toBeUndefined()
    } finally {
      runtime.setPersonalStores((owner) => new TokenStore(stores, owner))
    }
  })

  it(`pending logins per credential are capped at ${MAX_PENDING_PER_CREDENTIAL}: a new one ends that credential’s oldest, never another’s`, async () => {
    const bobs = await begin(BOB)
    const alices: string[] = []
    for (let i = 0; i <= MAX_PENDING_PER_CREDENTIAL; i++) alices.push((await begin(ALICE)).url)
    const oldest = await browse(alices[0]!)
    expect(oldest.status).toBe(400)
    expect(oldest.html).toMatch(/not a login myc is waiting for/)
    for (const url of alices.slice(1)) expect((await browse(url)).status).toBe(200)
    expect((await browse(bobs.url)).status).toBe(200)
  })

  it('GET and POST /oauth/login count against http.rateLimit: no discovery or registration beyond it', async () => {
    const limited = await start({ rateLimiter: new RateLimiter({ requestsPerMinute: 3 }, () => clock.now) })
    const registrations = auth.registrations.length
    const statuses: number[] = []
    for (let i = 0; i < 8; i++) statuses.push((await begin(ALICE, 'gh', limited)).status)
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429])
    expect(auth.registrations.length).toBe(registrations + 3)
    const over = await begin(ALICE, 'gh', limited)
    expect(over.headers.get('retry-after')).toBe('20')
    expect(over.body).toMatch(/Too Many Requests: over 3 requests a minute for this credential/)
    // Finishing counts too; another credential has its own bucket.
    expect((await finish(ALICE, 'x', 'gh', limited)).status).toBe(429)
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

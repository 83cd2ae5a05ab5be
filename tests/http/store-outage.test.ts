import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSessionStore, type SessionStore } from '../../src/http/session-store.js'
import { readMetricsToken } from '../../src/http/bearer-tokens.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { ALICE, openRawSession, serveFace, sessionRequest, type ServedFace } from '../helpers/http-face.js'
import { modernDiscover } from '../helpers/http.js'
import { hasRedis, startRedis, type RedisServer } from '../helpers/redis.js'
import { fixtureEntry, startRuntime, waitFor } from '../helpers/runtime.js'

const SCRAPER = 'scraper-0123456789abcdef0123456789abcdef'

/**
 * A shared store (Redis) that stops answering: every command has a
 * deadline, so a request that needs the store gets 503 with Retry-After
 * instead of hanging; nothing is served without the store's word (the
 * shared rate limit included); /readyz says not ready; all of it recovers
 * once Redis goes on. Redis is paused with SIGSTOP: connections stay open
 * and nothing is answered, the case that used to hang for minutes.
 */
describe.skipIf(!hasRedis())('a Redis session store that stops answering', () => {
  let runtime: Runtime
  let redis: RedisServer
  let store: SessionStore
  let plain: ServedFace
  let limited: ServedFace

  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { echo: fixtureEntry('echo') } })
    redis = await startRedis()
    // Each command's deadline: what a request waits while Redis is paused (2 s by default), room left for a busy machine.
    store = await openSessionStore(redis.url, { commandTimeoutMs: 500 })
    const metricsToken = readMetricsToken({ env: 'M' }, { M: SCRAPER }, [])
    plain = await serveFace(runtime, { sharedStore: store, metricsToken })
    limited = await serveFace(runtime, {
      sharedStore: store,
      rateLimiter: store.rateLimiter!({ requestsPerMinute: 600 }),
    })
  }, 30_000)
  afterAll(async () => {
    redis?.resume()
    await Promise.all([plain?.close(), limited?.close()])
    await store?.close()
    await redis?.stop()
    await runtime?.close()
  })

  const readyz = async (base: string, token?: string) => {
    const r = await fetch(`${base}/readyz`, token ? { headers: { Authorization: `Bearer ${token}` } } : {})
    return { status: r.status, body: (await r.json()) as Record<string, unknown> }
  }
  /** A 2026-07-28 request: no session, but the shared rate limit counts it. */
  const discover = (url: string) => modernDiscover(url, ALICE)

  it('session requests, new sessions and rate-limited requests get 503 with Retry-After; /readyz is not ready; all recover when Redis is back', async () => {
    const session = await openRawSession(plain.url, ALICE)
    expect(session.status).toBe(200)
    const ping = () => sessionRequest(plain.url, session.id!, { id: 1, method: 'ping' }, { token: ALICE })
    expect((await ping()).status).toBe(200)
    expect(await readyz(plain.base)).toEqual({ status: 200, body: { ready: true } })
    expect((await discover(limited.url)).status).toBe(200)

    redis.pause()
    const refused = await ping()
    expect(refused).toEqual({
      status: 503,
      retryAfter: '5',
      answer: {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32000,
          message: 'Service Unavailable: the session store (http.sessionStore) does not answer; try again shortly',
        },
      },
    })
    const fresh = await openRawSession(plain.url, ALICE)
    expect(fresh.status).toBe(503)
    // The shared rate limit cannot be checked: the request is not let through unchecked.
    expect(await discover(limited.url)).toEqual({ status: 503, retryAfter: '5' })
    await waitFor(async () => (await readyz(plain.base)).status === 503, 10_000, '/readyz to say not ready')
    expect((await readyz(plain.base)).body).toEqual({ ready: false })
    expect((await readyz(plain.base, SCRAPER)).body).toMatchObject({ ready: false, sessionStore: 'down' })

    redis.resume()
    await waitFor(async () => (await readyz(plain.base)).status === 200, 10_000, '/readyz to be ready again')
    expect((await readyz(plain.base, SCRAPER)).body).toMatchObject({ ready: true, sessionStore: 'up' })
    expect((await ping()).status).toBe(200)
    expect((await openRawSession(plain.url, ALICE)).status).toBe(200)
    expect((await discover(limited.url)).status).toBe(200)
  }, 60_000)

  it('a Redis that is gone (stopped) is the same: 503 at once, never a request served without it', async () => {
    const session = await openRawSession(plain.url, ALICE)
    const other = await startRedis()
    const gone = await openSessionStore(other.url, { commandTimeoutMs: 500 })
    const face = await serveFace(runtime, { sharedStore: gone })
    try {
      const opened = await openRawSession(face.url, ALICE)
      expect(opened.status).toBe(200)
      await other.stop()
      const r = await sessionRequest(face.url, opened.id!, { id: 1, method: 'ping' }, { token: ALICE })
      expect([r.status, r.retryAfter]).toEqual([503, '5'])
      expect((await openRawSession(face.url, ALICE)).status).toBe(503)
      expect((await readyz(face.base)).status).toBe(503)
    } finally {
      await face.close()
      await gone.close()
    }
    // The first store's sessions did not notice.
    expect((await sessionRequest(plain.url, session.id!, { id: 2, method: 'ping' }, { token: ALICE })).status).toBe(200)
  }, 30_000)
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpFace, type HttpFaceOptions } from '../../src/http/http-face.js'
import { createMetrics, type HttpMetrics } from '../../src/http/metrics.js'
import { RateLimiter } from '../../src/http/rate-limit.js'
import { readMetricsToken, readTokens } from '../../src/http/bearer-tokens.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { httpSettings } from '../../src/http/http-settings.js'
import { faceOptions } from '../helpers/http.js'
import { loadedConfig, startRuntime } from '../helpers/runtime.js'

const ALICE = 'alice-0123456789abcdef0123456789abcdef'
const BOB = 'bob-0123456789abcdef0123456789abcdef0000'
const SCRAPER = 'scraper-0123456789abcdef0123456789abcdef'
const metricsToken = readMetricsToken({ env: 'M' }, { M: SCRAPER }, [])

/** A request as the Node bridge hands it to the face. */
function inbound(path: string, init: RequestInit & { host?: string; token?: string } = {}) {
  const headers = new Headers(init.headers)
  headers.set('host', init.host ?? '127.0.0.1:8808')
  if (init.token) headers.set('authorization', `Bearer ${init.token}`)
  const request = new Request(`http://127.0.0.1:8808${path}`, { ...init, headers })
  return { request, readBody: async () => ({ tooLarge: false as const, text: await request.clone().text() }) }
}

const post = (token?: string) =>
  inbound('/mcp', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  })

describe('the HTTP face: GET /metrics and http.rateLimit', () => {
  let runtime: Runtime
  let metrics: HttpMetrics
  const clock = { now: 0 }
  const faces: HttpFace[] = []

  const face = (extra: Partial<HttpFaceOptions> = {}) => {
    const f = new HttpFace(
      faceOptions(
        runtime,
        readTokens(
          [
            { env: 'A', role: 'dev', name: 'alice' },
            { env: 'B', role: 'dev' },
          ],
          { A: ALICE, B: BOB },
        ),
        { allowedOrigins: ['https://app.example.com'], ...extra },
      ),
    )
    faces.push(f)
    return f
  }

  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: {} })
    metrics = await createMetrics({ runtime, sessions: () => ({ active: 0, inFlight: 0 }), processMetrics: false })
  })
  afterAll(async () => {
    await Promise.all(faces.map((f) => f.close(0)))
    metrics?.close()
    await runtime?.close()
  })

  it('serves /metrics to the bearer of http.metricsToken only, as Prometheus text', async () => {
    const f = face({ metrics, metricsToken })
    expect((await f.handle(inbound('/metrics'))).status).toBe(401)
    expect((await f.handle(inbound('/metrics', { token: ALICE }))).status).toBe(401)
    const response = await f.handle(inbound('/metrics', { token: SCRAPER }))
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(await response.text()).toContain('# TYPE myc_tool_calls_total counter')
  })

  it('checks the Host header for /metrics (unlike /healthz): a rebinding page cannot read it', async () => {
    const f = face({ metrics, metricsToken })
    const refused = await f.handle(inbound('/metrics', { host: 'evil.example:8808', token: SCRAPER }))
    expect(refused.status).toBe(403)
    expect(await refused.json()).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: expect.stringMatching(/^Forbidden: /) },
    })
    expect((await f.handle(inbound('/healthz', { host: 'evil.example:8808' }))).status).toBe(200)
  })

  it('without metrics (http.metrics: false) /metrics is not found', async () => {
    const response = await face().handle(inbound('/metrics'))
    expect(response.status).toBe(404)
  })

  it('a credential over its rate gets 429 with Retry-After and a JSON-RPC error; others are not held back', async () => {
    const f = face({
      metrics,
      metricsToken,
      rateLimiter: new RateLimiter({ requestsPerMinute: 6, burst: 2 }, () => clock.now),
    })
    expect((await f.handle(post(ALICE))).status).not.toBe(429)
    expect((await f.handle(post(ALICE))).status).not.toBe(429)
    const limited = await f.handle(post(ALICE))
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toBe('10')
    expect(limited.headers.get('content-type')).toMatch(/application\/json/)
    expect(await limited.json()).toEqual({
      jsonrpc: '2.0',
      error: {
        code: -32000,
        message: 'Too Many Requests: over 6 requests a minute for this credential; retry in 10 s',
      },
      id: null,
    })

    // Another token has its own bucket; a request without a valid credential is a 401, never counted.
    expect((await f.handle(post(BOB))).status).not.toBe(429)
    expect((await f.handle(post())).status).toBe(401)
    expect((await f.handle(post('not-a-token'))).status).toBe(401)
    // /metrics and health are not rate-limited.
    expect((await f.handle(inbound('/metrics', { token: SCRAPER }))).status).toBe(200)
    expect((await f.handle(inbound('/healthz'))).status).toBe(200)

    // A browser's 429 can be read: CORS headers, Retry-After exposed.
    const cors = inbound('/mcp', {
      method: 'POST',
      headers: {
        Origin: 'https://app.example.com',
        Authorization: `Bearer ${ALICE}`,
        'Content-Type': 'application/json',
      },
      body: '{}',
    })
    const fromBrowser = await f.handle(cors)
    expect(fromBrowser.status).toBe(429)
    expect(fromBrowser.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    expect(fromBrowser.headers.get('access-control-expose-headers')).toMatch(/Retry-After/)

    clock.now += 10_000
    expect((await f.handle(post(ALICE))).status).not.toBe(429)
    expect((await f.handle(post(ALICE))).status).toBe(429)
    expect(await metrics.text()).toMatch(/^myc_http_rate_limited_total 3$/m)
  })

  it('without credentials every request is the launch principal: one bucket for all', async () => {
    const f = face({ tokens: [], rateLimiter: new RateLimiter({ requestsPerMinute: 60, burst: 1 }, () => clock.now) })
    expect((await f.handle(post())).status).not.toBe(429)
    expect((await f.handle(post())).status).toBe(429)
  })

  it('config: http.metrics is on by default; http.path cannot be /metrics while it is; rateLimit needs a positive rate', () => {
    expect(loadedConfig({}).config.http).toMatchObject({ metrics: true })
    expect(loadedConfig({}).config.http.rateLimit).toBeUndefined()
    expect(loadedConfig({ http: { rateLimit: { requestsPerMinute: 120 } } }).config.http.rateLimit).toEqual({
      requestsPerMinute: 120,
    })
    expect(() => loadedConfig({ http: { rateLimit: { requestsPerMinute: 0 } } })).toThrow(
      /http\.rateLimit\.requestsPerMinute/,
    )
    expect(() => loadedConfig({ http: { rateLimit: { perMinute: 5 } } })).toThrow(/http\.rateLimit/)
    expect(() => httpSettings(loadedConfig({ http: { path: '/metrics' } }), undefined, {})).toThrow(
      /http\.path: \/metrics is where metrics are served/,
    )
    expect(httpSettings(loadedConfig({ http: { path: '/metrics', metrics: false } }), undefined, {}).listen.port).toBe(
      8808,
    )
  })
})

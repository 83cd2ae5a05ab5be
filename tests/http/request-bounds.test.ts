import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { ALICE, BOB, openRawSession, serveFace, sessionRequest, type ServedFace } from '../helpers/http-face.js'
import { mcpHeaders } from '../helpers/http.js'
import { loadedConfig, fixtureEntry, startRuntime, waitFor } from '../helpers/runtime.js'

/**
 * Every request answered in bounded time and memory, whatever a peer does:
 * a request id reused while the first is in flight is refused at once;
 * requests in flight are capped per session and per credential; a body
 * that does not arrive in time is dropped; connections per client address
 * are capped. In the test process, behind the node:http server myc uses.
 */
describe('what one peer can hold', () => {
  let runtime: Runtime
  const served: ServedFace[] = []
  const serve = async (...args: Parameters<typeof serveFace> extends [unknown, ...infer R] ? R : never) => {
    const s = await serveFace(runtime, ...args)
    served.push(s)
    return s
  }
  /** A tools/call on a session that stays in flight until abort(). */
  const inFlight = (url: string, session: string, id: string | number, token = ALICE) => {
    const controller = new AbortController()
    const call = sessionRequest(
      url,
      session,
      { id, method: 'tools/call', params: { name: 'hang__hang', arguments: {} } },
      { token, signal: controller.signal },
    ).catch(() => undefined)
    return { abort: () => controller.abort(), call }
  }

  /** A 429 over a cap of requests in flight, as sessionRequest reads it. */
  const tooMany = (id: number | null, message: string) => ({
    status: 429,
    retryAfter: '1',
    answer: { jsonrpc: '2.0', id, error: { code: -32000, message } },
  })

  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { hang: fixtureEntry('hang'), progress: fixtureEntry('progress') } })
  }, 30_000)
  afterAll(async () => {
    await Promise.all(served.map((s) => s.close()))
    await runtime?.close()
  })

  it('bad config first: the four keys default to 64, 128, 30 s and 512 and must be positive integers', () => {
    const http = loadedConfig({}).config.http
    expect([
      http.maxInFlightPerSession,
      http.maxInFlightPerCredential,
      http.bodyTimeoutMs,
      http.maxConnectionsPerAddress,
    ]).toEqual([64, 128, 30_000, 512])
    expect(() => loadedConfig({ http: { maxInFlightPerSession: 0 } })).toThrow(/http\.maxInFlightPerSession/)
    expect(() => loadedConfig({ http: { maxInFlightPerCredential: 1.5 } })).toThrow(/http\.maxInFlightPerCredential/)
    expect(() => loadedConfig({ http: { bodyTimeoutMs: 10 } })).toThrow(/http\.bodyTimeoutMs/)
    expect(() => loadedConfig({ http: { maxConnectionsPerAddress: '4' } })).toThrow(/http\.maxConnectionsPerAddress/)
  })

  it('four concurrent calls with one id on one session: one result, three refusals at once (-32600 naming the id)', async () => {
    const { url, face } = await serve()
    const session = (await openRawSession(url, ALICE)).id!
    // The first call takes a while (60 steps of 50 ms): the others come while it runs.
    const first = sessionRequest(
      url,
      session,
      { id: 77, method: 'tools/call', params: { name: 'progress__count', arguments: { steps: 60, stepMs: 50 } } },
      { token: ALICE },
    )
    await waitFor(() => face.sessions.get(session)?.inFlight === 1, 10_000, 'the first call to be in flight')
    const again = await Promise.all(
      [1, 2, 3].map(() =>
        sessionRequest(
          url,
          session,
          { id: 77, method: 'tools/call', params: { name: 'hang__echo', arguments: { message: 'again' } } },
          { token: ALICE },
        ),
      ),
    )
    // Answered while the first is still running.
    expect(face.sessions.get(session)?.inFlight).toBe(1)
    for (const refused of again)
      expect(refused).toEqual({
        status: 400,
        retryAfter: null,
        answer: {
          jsonrpc: '2.0',
          id: 77,
          error: {
            code: -32600,
            message:
              'Invalid Request: request id 77 is already in flight on this session; give each request an id of its own',
          },
        },
      })
    const result = await first
    expect(result.status).toBe(200)
    expect(result.answer).toMatchObject({ id: 77, result: { content: [{ text: 'counted 60' }] } })
    // Its answer given, the id is free again.
    const reused = await sessionRequest(url, session, { id: 77, method: 'ping' }, { token: ALICE })
    expect(reused.answer).toEqual({ jsonrpc: '2.0', id: 77, result: {} })
  })

  it('http.maxInFlightPerSession: one request more on the session is refused at once (429, its id); another session is not held back', async () => {
    const { url, face } = await serve({ maxInFlightPerSession: 2 })
    const session = (await openRawSession(url, ALICE)).id!
    const calls = [inFlight(url, session, 1), inFlight(url, session, 2)]
    await waitFor(() => face.sessions.get(session)?.inFlight === 2, 10_000, 'two calls in flight')
    const refused = await sessionRequest(url, session, { id: 3, method: 'ping' }, { token: ALICE })
    expect(refused).toEqual(
      tooMany(
        3,
        'Too Many Requests: this session has 2 requests in flight, the most one may (http.maxInFlightPerSession is 2); send more once some are answered',
      ),
    )
    const other = (await openRawSession(url, ALICE)).id!
    expect((await sessionRequest(url, other, { id: 1, method: 'ping' }, { token: ALICE })).status).toBe(200)
    calls[0]!.abort()
    await waitFor(() => face.sessions.get(session)?.inFlight === 1, 10_000, 'one call to end')
    expect((await sessionRequest(url, session, { id: 3, method: 'ping' }, { token: ALICE })).status).toBe(200)
    calls[1]!.abort()
    await Promise.all(calls.map((c) => c.call))
  })

  it('http.maxInFlightPerCredential: one POST more of the credential is refused before its body is read (429); other credentials are not held back', async () => {
    const { url, face } = await serve({ maxInFlightPerCredential: 2 })
    const [s1, s2] = [(await openRawSession(url, ALICE)).id!, (await openRawSession(url, ALICE)).id!]
    const calls = [inFlight(url, s1, 1), inFlight(url, s2, 1)]
    await waitFor(() => face.inFlight === 2, 10_000, 'two calls in flight')
    const refused = await sessionRequest(url, s1, { id: 2, method: 'ping' }, { token: ALICE })
    expect(refused).toEqual(
      tooMany(
        null,
        'Too Many Requests: this credential has 2 requests in flight, the most one may (http.maxInFlightPerCredential is 2); send more once some are answered',
      ),
    )
    expect((await openRawSession(url, BOB)).status).toBe(200)
    calls[0]!.abort()
    await waitFor(() => face.inFlight === 1, 10_000, 'one call to end')
    expect((await sessionRequest(url, s1, { id: 2, method: 'ping' }, { token: ALICE })).status).toBe(200)
    // A 2026 listen stream is no request in flight: it gives its place back at once.
    const listen = new AbortController()
    const stream = await fetch(url, {
      method: 'POST',
      signal: listen.signal,
      headers: mcpHeaders({
        Authorization: `Bearer ${ALICE}`,
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'subscriptions/listen',
      }),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'subscriptions/listen',
        params: {
          notifications: { toolsListChanged: true },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    })
    expect(stream.status).toBe(200)
    expect((await sessionRequest(url, s1, { id: 3, method: 'ping' }, { token: ALICE })).status).toBe(200)
    listen.abort()
    calls[1]!.abort()
    await Promise.all(calls.map((c) => c.call))
  })

  /** A raw connection to `base`'s port, its bytes as they come, and when it closes. */
  const rawSocket = async (base: string) => {
    const { port } = new URL(base)
    const socket: Socket = connect(Number(port), '127.0.0.1')
    let received = ''
    socket.setEncoding('utf8').on('data', (d: string) => (received += d))
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    socket.on('error', () => {})
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    return { socket, received: () => received, closed }
  }

  it('http.bodyTimeoutMs: a body that has not arrived in time gets 408 and its connection closed; a whole one is served', async () => {
    const { base, url } = await serve({}, { bodyTimeoutMs: 300, maxConnectionsPerAddress: 64 })
    const slow = await rawSocket(base)
    slow.socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ALICE}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n{"jsonrpc":`,
    )
    await slow.closed
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/)
    expect(slow.received()).toContain(
      '"message":"Request Timeout: the body did not arrive within 300 ms (http.bodyTimeoutMs)"',
    )
    expect((await openRawSession(url, ALICE)).status).toBe(200)
  })

  it('an idle kept-alive connection is held 65 s, longer than a load balancer holds it, and says so', async () => {
    // With Node's 5 s, a client under load sent its next request just as the server closed ("other side closed").
    const { base } = await serve({}, { bodyTimeoutMs: 30_000, maxConnectionsPerAddress: 64 })
    const kept = await rawSocket(base)
    kept.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    await waitFor(() => kept.received().includes('\r\n\r\n'), 10_000, 'the answer')
    expect(kept.received()).toMatch(/^HTTP\/1\.1 200 /)
    expect(kept.received()).toContain('Keep-Alive: timeout=65\r\n')
    kept.socket.destroy()
  })

  it('http.maxConnectionsPerAddress: one connection more from the address gets 429 and is closed; closing one makes room', async () => {
    const { base } = await serve({}, { bodyTimeoutMs: 30_000, maxConnectionsPerAddress: 2 })
    const held = [await rawSocket(base), await rawSocket(base)]
    const third = await rawSocket(base)
    await third.closed
    expect(third.received()).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/)
    expect(third.received()).toContain('Retry-After: 1\r\n')
    expect(third.received()).toContain(
      '"message":"Too Many Requests: this address has 2 connections open, the most one may (http.maxConnectionsPerAddress is 2); reuse or close one"',
    )
    held[0]!.socket.destroy()
    await held[0]!.closed
    await waitFor(
      async () =>
        (await fetch(`${base}/healthz`, { headers: { Connection: 'close' } }).catch(() => undefined))?.status === 200,
      10_000,
      'a new connection once one closed',
    )
    held[1]!.socket.destroy()
  })
})

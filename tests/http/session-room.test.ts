import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { MemorySessionStore, openSessionStore, type SessionStore } from '../../src/http/session-store.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { ALICE, BOB, openRawSession, serveFace, sessionRequest, type ServedFace } from '../helpers/http-face.js'
import { hasRedis, startRedis, type RedisServer } from '../helpers/redis.js'
import { fixtureEntry, startRuntime, waitFor } from '../helpers/runtime.js'

/**
 * `http.maxSessionsPerCredential` without lock-outs: a credential at its
 * cap loses its own least recently used idle session to a new one (which
 * then answers 404, as an ended session does), never another credential's
 * and never a busy one; 429 only when every one of its sessions is busy.
 * In one process, and across replicas sharing a store (in-process faces on
 * one MemorySessionStore, and on a real Redis).
 */
describe('a credential at its session cap', () => {
  let runtime: Runtime
  const served: ServedFace[] = []
  const serve = async (extra: Parameters<typeof serveFace>[1] = {}) => {
    const s = await serveFace(runtime, { maxSessionsPerCredential: 2, ...extra })
    served.push(s)
    return s
  }
  const ping = (url: string, id: string, token = ALICE) =>
    sessionRequest(url, id, { id: 1, method: 'ping' }, { token }).then((r) => r.status)
  /** A call that waits until aborted, on session `id`: in flight until abort() (the client going away ends it). */
  const hang = (url: string, id: string) => {
    const controller = new AbortController()
    const call = sessionRequest(
      url,
      id,
      { id: 'hang', method: 'tools/call', params: { name: 'hang__hang', arguments: {} } },
      { token: ALICE, signal: controller.signal },
    ).catch(() => undefined)
    return { abort: () => controller.abort(), call }
  }

  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { hang: fixtureEntry('hang') } })
  }, 30_000)
  afterAll(async () => {
    await Promise.all(served.map((s) => s.close()))
    await runtime?.close()
  })

  it('a new session ends the least recently used idle one of the same credential; that id answers 404; others are untouched', async () => {
    const { url } = await serve()
    const first = await openRawSession(url, ALICE)
    const second = await openRawSession(url, ALICE)
    const bobs = await openRawSession(url, BOB)
    expect(await ping(url, first.id!)).toBe(200) // first is used after second: second is the least recently used
    const third = await openRawSession(url, ALICE)
    expect(third.status).toBe(200)
    const gone = await sessionRequest(url, second.id!, { id: 2, method: 'ping' }, { token: ALICE })
    expect(gone.status).toBe(404)
    expect(gone.answer).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32001, message: 'Session not found: it ended or expired; initialize a new session' },
    })
    expect(await ping(url, first.id!)).toBe(200)
    expect(await ping(url, third.id!)).toBe(200)
    expect(await ping(url, bobs.id!, BOB)).toBe(200)
  })

  it('clients that never end their sessions are never locked out: 20 in a row with a cap of 2 all list and call', async () => {
    const { url } = await serve()
    for (let i = 0; i < 20; i++) {
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${ALICE}` } },
      })
      const client = new Client({ name: `one-shot-${i}`, version: '1' }, { capabilities: {} })
      await client.connect(transport)
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('hang__echo')
      const r = (await client.callTool({ name: 'hang__echo', arguments: { message: `run ${i}` } })) as {
        content: Array<{ text: string }>
      }
      expect(r.content[0]!.text).toContain(`run ${i}`)
      // Gone without DELETE, as mcp-remote and LangChain's adapters leave.
      await transport.close()
    }
  }, 60_000)

  it('a busy session is never the one ended; 429 (Retry-After) only when every session of the credential is busy', async () => {
    const { url, face } = await serve()
    const first = await openRawSession(url, ALICE)
    const second = await openRawSession(url, ALICE)
    const busyFirst = hang(url, first.id!)
    await waitFor(() => face.sessions.get(first.id!)?.inFlight === 1, 10_000, 'the first session to be busy')
    const busySecond = hang(url, second.id!)
    await waitFor(() => face.sessions.get(second.id!)?.inFlight === 1, 10_000, 'the second session to be busy')
    const refused = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${ALICE}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32000,
        message:
          'Too Many Requests: this credential holds 2 sessions (http.maxSessionsPerCredential is 2) and every one has a request in flight; try again once one is answered, or end one (DELETE)',
      },
    })
    // Another credential is not held back.
    expect((await openRawSession(url, BOB)).status).toBe(200)
    busySecond.abort()
    await waitFor(() => face.sessions.get(second.id!)?.inFlight === 0, 10_000, 'the second call to end')
    expect((await openRawSession(url, ALICE)).status).toBe(200)
    // The busy one lived on; the idle one made room.
    expect(face.sessions.get(first.id!)?.inFlight).toBe(1)
    expect(await ping(url, second.id!)).toBe(404)
    busyFirst.abort()
    await Promise.all([busyFirst.call, busySecond.call])
  })

  /** The same rules with replicas: two faces on one shared store, each session's use and business counted there. */
  function replicas(name: string, store: () => SessionStore) {
    it(`${name}: across replicas the least recently used idle session goes, wherever it was used; a call in flight on another replica keeps its session`, async () => {
      const a = await serve({ sharedStore: store() })
      const b = await serve({ sharedStore: store() })
      const s1 = await openRawSession(a.url, ALICE)
      const s2 = await openRawSession(b.url, ALICE)
      // s1 is busy on replica b (taken over there), from before s2's last use.
      const busy = hang(b.url, s1.id!)
      await waitFor(() => b.face.sessions.get(s1.id!)?.inFlight === 1, 10_000, 's1 to be busy on b')
      expect(await ping(a.url, s2.id!)).toBe(200)
      // On replica a, which never saw s1 busy: s2 is the idle one, so it goes, on both replicas.
      const s3 = await openRawSession(a.url, ALICE)
      expect(s3.status).toBe(200)
      expect(await ping(b.url, s2.id!)).toBe(404)
      expect(await ping(a.url, s2.id!)).toBe(404)
      expect(b.face.sessions.get(s1.id!)?.inFlight).toBe(1)
      // Both of alice's sessions busy now (s3's call on a): one more is 429 on either replica.
      const busy3 = hang(a.url, s3.id!)
      await waitFor(() => a.face.sessions.get(s3.id!)?.inFlight === 1, 10_000, 's3 to be busy on a')
      expect((await openRawSession(b.url, ALICE)).status).toBe(429)
      expect((await openRawSession(a.url, BOB)).status).toBe(200)
      busy.abort()
      await waitFor(async () => (await openRawSession(a.url, ALICE)).status === 200, 10_000, 'room once s1 is idle')
      expect(await ping(b.url, s1.id!)).toBe(404)
      expect(await ping(a.url, s3.id!)).not.toBe(404)
      busy3.abort()
      await Promise.all([busy.call, busy3.call])
    }, 30_000)
  }

  const memory = new MemorySessionStore()
  replicas('one MemorySessionStore', () => memory)

  describe.skipIf(!hasRedis())('on Redis', () => {
    let redis: RedisServer
    const stores: SessionStore[] = []
    beforeAll(async () => {
      redis = await startRedis()
      stores.push(await openSessionStore(redis.url), await openSessionStore(redis.url))
    })
    afterAll(async () => {
      await Promise.all(stores.map((s) => s.close()))
      await redis?.stop()
    })
    let next = 0
    replicas('Redis', () => stores[next++ % 2]!)
  })
})

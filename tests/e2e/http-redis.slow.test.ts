import path from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeConfig } from '../helpers/e2e.js'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'
import { modernDiscover, startHttpMyc, type HttpMyc } from '../helpers/http.js'
import { hasRedis, startRedis, type RedisServer } from '../helpers/redis.js'

const TOKENS = {
  MYC_REDIS_ALICE: 'alice-redis-0123456789abcdef0123456789',
  MYC_REDIS_BOB: 'bob-redis-0123456789abcdef0123456789ab',
}
/** The key of the credential digests sessions are bound to, the same on every replica (required with Redis and tokens). */
const SECRET = { MYC_SESSION_SECRET: 'replicas-share-this-0123456789abcdef0123456789' }

/** Two `myc serve --http` replicas of one config (echo, the http skills; alice a guest, bob a developer) on `redis`, with these `http` keys besides. */
async function startReplicas(redis: RedisServer, http: Record<string, unknown> = {}): Promise<[HttpMyc, HttpMyc]> {
  const config = writeConfig({
    mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } },
    skills: { dirs: [path.join(repoRoot, 'tests/fixtures/http/skills')] },
    session: { defaultSkills: ['common'] },
    http: {
      sessionStore: redis.url,
      tokens: [
        { env: 'MYC_REDIS_ALICE', role: 'guest' },
        { env: 'MYC_REDIS_BOB', role: 'developer' },
      ],
      ...http,
    },
  })
  return Promise.all([
    startHttpMyc(config, { env: { ...TOKENS, ...SECRET } }),
    startHttpMyc(config, { env: { ...TOKENS, ...SECRET } }),
  ])
}

/**
 * Two `myc serve --http` replicas sharing sessions through a real Redis:
 * a client whose requests alternate between them keeps one session, its
 * escalations show on the other replica, and a replica that dies loses no
 * session.
 */
describe.skipIf(!hasRedis())('two replicas, one Redis (build/myc.cjs)', () => {
  let redis: RedisServer
  let a: HttpMyc
  let b: HttpMyc
  const hits = { a: 0, b: 0 }

  beforeAll(async () => {
    redis = await startRedis()
    ;[a, b] = await startReplicas(redis)
  }, 60_000)
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    await redis?.stop()
  })

  /** A client whose POSTs alternate between the replicas (GET streams stay on `a` while it lives). */
  async function alternating(token: string, only?: () => HttpMyc | undefined): Promise<Client> {
    let n = 0
    const fetchAlternating = (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : String(input))
      const forced = only?.()
      const target = forced ?? (init?.method === 'POST' ? (n++ % 2 === 0 ? a : b) : a)
      hits[target === a ? 'a' : 'b']++
      return fetch(new URL(url.pathname + url.search, target.base), init)
    }
    const transport = new StreamableHTTPClientTransport(new URL(a.url), {
      fetch: fetchAlternating,
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    })
    const client = new Client({ name: 'replicas', version: '1' }, { capabilities: {} })
    await client.connect(transport)
    return client
  }
  const tools = async (c: Client) => (await c.listTools()).tools.map((t) => t.name)

  it('one session across both replicas: escalation on one is seen on the other, and by no other session', async () => {
    const alice = await alternating(TOKENS.MYC_REDIS_ALICE)
    const other = await alternating(TOKENS.MYC_REDIS_ALICE)
    try {
      for (let i = 0; i < 4; i++) expect(await tools(alice)).not.toContain('echo__add')
      const activated = (await alice.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'reader' } })) as {
        isError?: boolean
      }
      expect(activated.isError).toBeFalsy()
      // Each of these lists goes to the other replica than the one before.
      for (let i = 0; i < 4; i++) expect(await tools(alice)).toContain('echo__add')
      for (let i = 0; i < 4; i++) {
        const r = (await alice.callTool({ name: 'echo__add', arguments: { a: i, b: 1 } })) as {
          content: Array<{ text: string }>
        }
        expect(r.content[0]!.text).toContain(String(i + 1))
      }
      // Another session of the same token never saw the escalation.
      expect(await tools(other)).not.toContain('echo__add')
      await alice.callTool({ name: 'mycelium__deactivate_skill', arguments: { name: 'reader' } })
      for (let i = 0; i < 2; i++) expect(await tools(alice)).not.toContain('echo__add')
      expect(hits.a).toBeGreaterThan(4)
      expect(hits.b).toBeGreaterThan(4)
    } finally {
      await Promise.all([alice.close(), other.close()])
    }
  }, 60_000)

  it('another token presenting the session id gets 404 on either replica', async () => {
    const alice = await alternating(TOKENS.MYC_REDIS_ALICE)
    const id = (alice.transport as StreamableHTTPClientTransport).sessionId!
    try {
      for (const replica of [a, b]) {
        const r = await fetch(replica.url, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            Authorization: `Bearer ${TOKENS.MYC_REDIS_BOB}`,
            'Mcp-Session-Id': id,
            'MCP-Protocol-Version': '2025-11-25',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        })
        expect(r.status).toBe(404)
      }
    } finally {
      await alice.close()
    }
  }, 30_000)

  it('a replica that dies loses no session: the other carries it on, skills and all', async () => {
    let onlyB = false
    const alice = await alternating(TOKENS.MYC_REDIS_ALICE, () => (onlyB ? b : undefined))
    try {
      await alice.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'reader' } })
      expect(await tools(alice)).toContain('echo__add')
      await a.stop('SIGKILL')
      onlyB = true
      expect(await tools(alice)).toContain('echo__add')
      const r = (await alice.callTool({ name: 'echo__add', arguments: { a: 20, b: 22 } })) as {
        content: Array<{ text: string }>
      }
      expect(r.content[0]!.text).toContain('42')
    } finally {
      await alice.close().catch(() => {})
    }
  }, 60_000)
})

/**
 * `http.rateLimit` with a Redis session store: the replicas count a
 * credential's requests together (one token bucket in Redis), so spreading
 * requests over replicas does not multiply the limit; without Redis a
 * request is refused (503), never let through unchecked.
 */
describe.skipIf(!hasRedis())('http.rateLimit shared by two replicas through Redis (build/myc.cjs)', () => {
  let redis: RedisServer
  let a: HttpMyc
  let b: HttpMyc

  beforeAll(async () => {
    redis = await startRedis()
    ;[a, b] = await startReplicas(redis, { rateLimit: { requestsPerMinute: 6, burst: 3 } })
  }, 60_000)
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    await redis?.stop()
  })

  /** One 2026-07-28 server/discover (no session needed) with `token`, to `replica`: its HTTP status and Retry-After. */
  const discover = (replica: HttpMyc, token: string) => modernDiscover(replica.url, token)

  it('refuses the request over the burst on whichever replica it reaches, and counts another credential apart', async () => {
    const statuses: number[] = []
    for (const replica of [a, b, a, b]) statuses.push((await discover(replica, TOKENS.MYC_REDIS_ALICE)).status)
    // Three in the burst, spread over both replicas; the fourth is over it (each replica alone would have let it through).
    expect(statuses).toEqual([200, 200, 200, 429])
    const refused = await discover(a, TOKENS.MYC_REDIS_ALICE)
    expect(refused.status).toBe(429)
    // 6 a minute: one request back every 10 s.
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1)
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(10)
    expect((await discover(b, TOKENS.MYC_REDIS_BOB)).status).toBe(200)
  })

  it('refuses requests while Redis is down (503, Retry-After) rather than let them through unchecked, and says so', async () => {
    await redis.stop()
    expect(await discover(b, TOKENS.MYC_REDIS_BOB)).toEqual({ status: 503, retryAfter: '5' })
    expect(b.stderr()).toMatch(
      /http\.sessionStore: Redis does not answer .*requests that need it get 503 until it is back/,
    )
  })
})

/**
 * A session is bound to a keyed digest of its token (MYC_SESSION_SECRET),
 * not to the token's place in `http.tokens`: replicas whose lists differ
 * (reordered, shortened) never hand a session to another token.
 */
describe.skipIf(!hasRedis())('replicas with http.tokens in another order, one Redis (build/myc.cjs)', () => {
  let redis: RedisServer
  const replicas: HttpMyc[] = []
  const alice = { env: 'MYC_REDIS_ALICE', role: 'guest', name: 'alice' }
  const bob = { env: 'MYC_REDIS_BOB', role: 'guest', name: 'bob' }

  beforeAll(async () => {
    redis = await startRedis()
    const start = (tokens: unknown[]) =>
      startHttpMyc(
        writeConfig({
          mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } },
          skills: { dirs: [path.join(repoRoot, 'tests/fixtures/http/skills')] },
          session: { defaultSkills: ['common'] },
          http: { sessionStore: redis.url, tokens },
        }),
        { env: { ...TOKENS, ...SECRET } },
      )
    replicas.push(...(await Promise.all([start([alice, bob]), start([bob, alice]), start([bob])])))
  }, 60_000)
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()))
    await redis?.stop()
  })

  it("alice's session, opened where she is tokens[0], is not bob's where he is tokens[0] (reordered or alone); alice carries it on there", async () => {
    const [first, reordered, shortened] = replicas as [HttpMyc, HttpMyc, HttpMyc]
    const transport = new StreamableHTTPClientTransport(new URL(first.url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKENS.MYC_REDIS_ALICE}` } },
    })
    const client = new Client({ name: 'reordered', version: '1' }, { capabilities: {} })
    await client.connect(transport)
    const id = transport.sessionId!
    const list = (replica: HttpMyc, token: string) =>
      fetch(replica.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${token}`,
          'Mcp-Session-Id': id,
          'MCP-Protocol-Version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
    try {
      for (const replica of [reordered, shortened, first]) {
        const r = await list(replica, TOKENS.MYC_REDIS_BOB)
        expect(r.status).toBe(404)
        expect(await r.text()).toMatch(/Session not found/)
      }
      const carried = await list(reordered, TOKENS.MYC_REDIS_ALICE)
      expect(carried.status).toBe(200)
      expect(await carried.text()).toMatch(/echo__echo/)
    } finally {
      await client.close()
    }
  }, 30_000)
})

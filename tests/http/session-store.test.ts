import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  MemorySessionStore,
  openSessionStore,
  type SessionStore,
  type SharedSession,
} from '../../src/http/session-store.js'
import { redactUrl } from '../../src/redact.js'
import { StoreUnavailable } from '../../src/http/redis-client.js'
import { waitFor } from '../helpers/wait-for.js'
import { hasRedis, startRedis, type RedisServer } from '../helpers/redis.js'

const record = (id: string, over: Partial<SharedSession> = {}): SharedSession => ({
  id,
  principal: { key: 'token:0', label: 'alice', role: 'dev', skills: ['reader'] },
  initialize: {
    protocolVersion: '2025-11-25',
    capabilities: { elicitation: {} },
    clientInfo: { name: 'c', version: '1' },
  },
  activeSkills: ['common', 'reader'],
  subscriptions: ['test://x'],
  logLevel: 'info',
  ...over,
})

/** The contract every session store keeps, run against the in-process store and a real Redis. */
function contract(name: string, make: () => Promise<SessionStore>, pause: (ms: number) => Promise<void>) {
  describe(`SessionStore contract: ${name}`, () => {
    let store: SessionStore
    beforeAll(async () => {
      store = await make()
    })
    afterAll(() => store.close())

    it('saves, loads a copy, overwrites, deletes', async () => {
      await store.save(record('s1'), 60_000)
      const loaded = await store.load('s1')
      expect(loaded).toEqual(record('s1'))
      loaded!.activeSkills.push('mutated')
      expect((await store.load('s1'))!.activeSkills).toEqual(['common', 'reader'])
      await store.save(record('s1', { activeSkills: ['common'] }), 60_000)
      expect((await store.load('s1'))!.activeSkills).toEqual(['common'])
      await store.delete('s1')
      expect(await store.load('s1')).toBeUndefined()
      expect(await store.load('never')).toBeUndefined()
    })

    it('expires after its ttl unless touched', async () => {
      // Touched well within its ttl (a busy machine may take a while between two commands), then
      // past the ttl of both: only the untouched one is gone.
      await store.save(record('s2'), 1_000)
      await store.save(record('s3'), 1_000)
      await store.touch('s3', 60_000)
      await pause(1_100)
      expect(await store.load('s2')).toBeUndefined()
      expect((await store.load('s3'))?.id).toBe('s3')
    })

    it("admit: under the cap at once; at it, the owner's least recently used idle session is deleted; all busy is refused; other owners untouched", async () => {
      const ttl = 60_000
      const admit = (owner: string, id: string) => store.admit(owner, id, 2, ttl)
      const open = async (owner: string, id: string) => {
        await store.save(record(id), ttl)
        // Its first request (initialize) ends: idle from now.
        await store.touch(id, ttl, { owner, mark: 'idle' })
      }
      expect(await admit('alice', 'a1')).toEqual({ ok: true, evicted: [] })
      await open('alice', 'a1')
      await pause(5)
      expect(await admit('alice', 'a2')).toEqual({ ok: true, evicted: [] })
      await open('alice', 'a2')
      expect(await admit('bob', 'b1')).toEqual({ ok: true, evicted: [] })
      await open('bob', 'b1')
      await pause(5)
      // A use that is neither start nor end (a GET) counts as use: a1 is now the more recent.
      await store.touch('a1', ttl, { owner: 'alice' })
      expect(await admit('alice', 'a3')).toEqual({ ok: true, evicted: ['a2'] })
      expect(await store.load('a2')).toBeUndefined()
      await store.save(record('a3'), ttl)
      // a3 is busy until its first request ends, and a1 has a request in flight: no room.
      await store.touch('a1', ttl, { owner: 'alice', mark: 'busy' })
      // A plain use does not clear a busy mark.
      await store.touch('a1', ttl, { owner: 'alice' })
      expect(await admit('alice', 'a4')).toEqual({ ok: false, held: 2 })
      await store.touch('a1', ttl, { owner: 'alice', mark: 'idle' })
      expect(await admit('alice', 'a4')).toEqual({ ok: true, evicted: ['a1'] })
      expect((await store.load('b1'))?.id).toBe('b1')
      expect((await store.load('a3'))?.id).toBe('a3')
      // A session deleted (DELETE) leaves its owner's count at once.
      await store.delete('a3', 'alice')
      expect(await admit('alice', 'a5')).toEqual({ ok: true, evicted: [] })
      // An evicted session is not marked back into the index by a late use.
      await store.touch('a1', ttl, { owner: 'alice', mark: 'idle' })
      expect(await store.load('a1')).toBeUndefined()
    })

    it('admit forgets sessions idle past their ttl (they expired in the store too)', async () => {
      expect(await store.admit('carol', 'c1', 1, 300)).toEqual({ ok: true, evicted: [] })
      await store.save(record('c1'), 300)
      await store.touch('c1', 300, { owner: 'carol', mark: 'idle' })
      await pause(450)
      expect(await store.admit('carol', 'c2', 1, 300)).toEqual({ ok: true, evicted: [] })
    })
  })
}

let clock = 0
contract(
  'memory',
  async () => new MemorySessionStore(() => clock),
  async (ms) => void (clock += ms),
)

describe.skipIf(!hasRedis())('Redis', () => {
  let redis: RedisServer
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(() => redis?.stop())
  contract(
    'redis',
    () => openSessionStore(redis.url),
    (ms) => new Promise((r) => setTimeout(r, ms)),
  )

  it('a paused Redis fails each command within its deadline (StoreUnavailable), says not ready, and is ready again once it goes on', async () => {
    const changes: boolean[] = []
    // A short deadline (2 s by default) with room for a busy machine: each paused command waits it out.
    const store = await openSessionStore(redis.url, { onChange: (up) => changes.push(up), commandTimeoutMs: 500 })
    try {
      await store.save(record('p1'), 60_000)
      redis.pause()
      await expect(store.load('p1')).rejects.toBeInstanceOf(StoreUnavailable)
      await expect(store.admit('alice', 'p2', 2, 60_000)).rejects.toThrow(
        /http\.sessionStore: Redis did not answer EVAL/,
      )
      expect(changes).toEqual([false])
      await waitFor(async () => !(await store.ready!()), 10_000, 'the store to say it is not ready')
      redis.resume()
      await waitFor(() => store.ready!(), 10_000, 'the store to be ready again')
      expect((await store.load('p1'))?.id).toBe('p1')
      expect(changes).toEqual([false, true])
    } finally {
      redis.resume()
      await store.close()
    }
  }, 30_000)

  it('a damaged or foreign value under a session key reads as no session', async () => {
    const store = await openSessionStore(redis.url)
    const { createClient } = await import('redis')
    const raw = createClient({ url: redis.url })
    await raw.connect()
    await raw.set('myc:session:bad', '{not json')
    await raw.set('myc:session:other', JSON.stringify({ id: 'someone-else' }))
    expect(await store.load('bad')).toBeUndefined()
    expect(await store.load('other')).toBeUndefined()
    await raw.close()
    await store.close()
  })
})

describe('http.sessionStore', () => {
  it('an unreachable Redis is an error naming the setting, without the password', async () => {
    await expect(openSessionStore('redis://user:secret@127.0.0.1:1')).rejects.toThrow(
      /http\.sessionStore: cannot reach Redis at redis:\/\/\*\*\*:\*\*\*@127\.0\.0\.1:1/,
    )
    expect(redactUrl('rediss://:pw@h:6380/0')).toBe('rediss://:***@h:6380/0')
  }, 20_000)
})

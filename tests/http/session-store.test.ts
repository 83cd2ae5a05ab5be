import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  MemorySessionStore,
  openSessionStore,
  type SessionStore,
  type SharedSession,
} from '../../src/http/session-store.js'
import { redactUrl } from '../../src/redact.js'
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
      await store.save(record('s2'), 300)
      await store.save(record('s3'), 300)
      await pause(200)
      await store.touch('s3', 600)
      await pause(250)
      expect(await store.load('s2')).toBeUndefined()
      expect((await store.load('s3'))?.id).toBe('s3')
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
    () => openSessionStore(redis.url, () => {}),
    (ms) => new Promise((r) => setTimeout(r, ms)),
  )

  it('a damaged or foreign value under a session key reads as no session', async () => {
    const store = await openSessionStore(redis.url, () => {})
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
    await expect(openSessionStore('redis://user:secret@127.0.0.1:1', () => {})).rejects.toThrow(
      /http\.sessionStore: cannot reach Redis at redis:\/\/\*\*\*:\*\*\*@127\.0\.0\.1:1/,
    )
    expect(redactUrl('rediss://:pw@h:6380/0')).toBe('rediss://:***@h:6380/0')
  }, 20_000)
})

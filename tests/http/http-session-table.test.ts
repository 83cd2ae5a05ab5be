import { describe, expect, it } from 'vitest'
import { isExpired, MemorySessionTable, Sessions, type SessionEntry } from '../../src/http/http-session-table.js'

function entry(id: string, closed: string[]): SessionEntry {
  return {
    id,
    lastSeen: 0,
    inFlight: 0,
    close: async () => {
      closed.push(id)
    },
  }
}

describe('Sessions: the cap, idle expiry, in-flight counting', () => {
  it('isExpired: idle for longer than the idle time, and nothing in flight', () => {
    expect(isExpired({ lastSeen: 0, inFlight: 0 }, 1_001, 1_000)).toBe(true)
    expect(isExpired({ lastSeen: 0, inFlight: 0 }, 1_000, 1_000)).toBe(false)
    expect(isExpired({ lastSeen: 0, inFlight: 1 }, 99_999, 1_000)).toBe(false)
  })

  it('isExpired: a session never initialized lives initMs from its opening, however busy; an initialized one the idle time', () => {
    expect(isExpired({ lastSeen: 900, createdAt: 0, inFlight: 0, initialized: false }, 1_001, 60_000, 1_000)).toBe(true)
    expect(isExpired({ lastSeen: 900, createdAt: 0, inFlight: 0, initialized: true }, 1_001, 60_000, 1_000)).toBe(false)
    expect(isExpired({ lastSeen: 900, createdAt: 0, inFlight: 1, initialized: false }, 1_001, 60_000, 1_000)).toBe(
      false,
    )
    expect(isExpired({ lastSeen: 0, createdAt: 0, inFlight: 0, initialized: false }, 29_000, 60_000)).toBe(false)
    expect(isExpired({ lastSeen: 0, createdAt: 0, inFlight: 0, initialized: false }, 30_001, 60_000)).toBe(true)
  })

  it('ownedBy counts the live sessions of one owner (for http.maxSessionsPerCredential)', () => {
    let now = 0
    const sessions = new Sessions(new MemorySessionTable<SessionEntry>(), {
      maxSessions: 10,
      maxPerOwner: 2,
      idleMs: 1_000,
      initMs: 100,
      now: () => now,
    })
    sessions.add({ ...entry('a1', []), owner: 'a', initialized: false })
    sessions.add({ ...entry('a2', []), owner: 'a', initialized: true })
    sessions.add({ ...entry('b1', []), owner: 'b' })
    expect(sessions.ownedBy('a')).toBe(2)
    now = 101
    // The one never initialized is past its life and no longer counts.
    expect(sessions.ownedBy('a')).toBe(1)
  })

  it("makeRoom at an owner's cap ends that owner's least recently used idle session, never a busy one, never another owner's", () => {
    let now = 0
    const closed: string[] = []
    const evicted: string[] = []
    const sessions = new Sessions(new MemorySessionTable<SessionEntry>(), {
      maxSessions: 10,
      maxPerOwner: 3,
      idleMs: 60_000,
      now: () => now,
      onEvicted: (s) => evicted.push(s.id),
    })
    const add = (id: string, owner: string) => {
      const s = { ...entry(id, closed), owner }
      sessions.add(s)
      now += 10
      return s
    }
    const [a1, a2, a3] = [add('a1', 'a'), add('a2', 'a'), add('a3', 'a')]
    const b1 = add('b1', 'b')
    sessions.touch(a1) // a2 is now the least recently used of a's
    const busy = sessions.begin(a2)
    // a2 is busy: the next least recently used idle one goes, a3.
    expect(sessions.makeRoom('a')).toEqual({ ok: true, evicted: [a3] })
    expect(sessions.get('a3')).toBeUndefined()
    expect(closed).toEqual(['a3'])
    expect(evicted).toEqual(['a3'])
    // Below the cap: nothing goes.
    expect(sessions.makeRoom('a')).toEqual({ ok: true, evicted: [] })
    add('a4', 'a')
    const busy1 = sessions.begin(a1)
    const busy4 = sessions.begin(sessions.get('a4')!)
    // Every one of a's sessions busy: refused, and nobody else's session pays for it.
    expect(sessions.makeRoom('a')).toEqual({ ok: false, reason: 'busy', held: 3 })
    expect(sessions.get('b1')).toBe(b1)
    busy()
    expect(sessions.makeRoom('a')).toEqual({ ok: true, evicted: [a2] })
    busy1()
    busy4()
    expect(sessions.get('a1')).toBe(a1)
    expect(closed).toEqual(['a3', 'a2'])
  })

  it('makeRoom: full at http.maxSessions when the owner is under its cap; drop ends a session this process holds', () => {
    const closed: string[] = []
    const sessions = new Sessions(new MemorySessionTable<SessionEntry>(), {
      maxSessions: 2,
      maxPerOwner: 2,
      idleMs: 1_000,
    })
    sessions.add({ ...entry('a1', closed), owner: 'a' })
    sessions.add({ ...entry('b1', closed), owner: 'b' })
    expect(sessions.makeRoom('c')).toEqual({ ok: false, reason: 'full', held: 0 })
    sessions.drop('b1')
    sessions.drop('nothing-here')
    expect(closed).toEqual(['b1'])
    expect(sessions.makeRoom('c')).toEqual({ ok: true, evicted: [] })
  })

  it('a session idle too long reads as absent and is closed; a used one lives on', () => {
    let now = 0
    const closed: string[] = []
    const sessions = new Sessions(new MemorySessionTable<SessionEntry>(), {
      maxSessions: 10,
      idleMs: 1_000,
      now: () => now,
    })
    const a = entry('a', closed)
    const b = entry('b', closed)
    sessions.add(a)
    sessions.add(b)
    now = 900
    sessions.touch(b)
    now = 1_500
    expect(sessions.get('a')).toBeUndefined()
    expect(sessions.get('b')).toBe(b)
    expect(closed).toEqual(['a'])
    expect(sessions.size).toBe(1)
  })

  it('a request in flight keeps a session alive however long it takes; its end counts as use', () => {
    let now = 0
    const closed: string[] = []
    const sessions = new Sessions(new MemorySessionTable<SessionEntry>(), {
      maxSessions: 10,
      idleMs: 1_000,
      now: () => now,
    })
    const a = entry('a', closed)
    sessions.add(a)
    const done = sessions.begin(a)
    expect(sessions.inFlight).toBe(1)
    now = 60_000
    sessions.sweep()
    expect(sessions.get('a')).toBe(a)
    done()
    done() // twice is once
    expect(a.inFlight).toBe(0)
    now = 60_500
    sessions.sweep()
    expect(closed).toEqual([])
    now = 61_001
    sessions.sweep()
    expect(closed).toEqual(['a'])
  })

  it('full at http.maxSessions; closeAll ends every session', async () => {
    const closed: string[] = []
    const sessions = new Sessions(new MemorySessionTable<SessionEntry>(), { maxSessions: 2, idleMs: 1_000 })
    sessions.add(entry('a', closed))
    expect(sessions.full).toBe(false)
    sessions.add(entry('b', closed))
    expect(sessions.full).toBe(true)
    sessions.remove('a')
    expect(sessions.full).toBe(false)
    await sessions.closeAll()
    expect(closed).toEqual(['b'])
    expect(sessions.size).toBe(0)
  })

  it('drained waits for requests in flight, at most the time given', async () => {
    const sessions = new Sessions(new MemorySessionTable<SessionEntry>(), { maxSessions: 2, idleMs: 1_000 })
    const a = entry('a', [])
    sessions.add(a)
    const done = sessions.begin(a)
    expect(await sessions.drained(60)).toBe(false)
    setTimeout(done, 30)
    expect(await sessions.drained(2_000)).toBe(true)
  })
})

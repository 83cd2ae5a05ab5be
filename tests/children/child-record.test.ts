import { describe, expect, it } from 'vitest'
import { ChildRecord } from '../../src/children/child-record.js'
import type { ChildSession } from '../../src/children/child-session.js'
import { OWN_SLOT, SlotRecords, slotOf } from '../../src/children/slot-records.js'

/** A session that notes what it is told, refusing the resources in `refuse`. */
function noting(record: ChildRecord, options: { refuse?: string[] } = {}) {
  const told: Array<{ uris: readonly string[]; added?: string }> = []
  const levels: Array<string | undefined> = []
  const session = {
    resourcesChanged: (added?: string) => {
      told.push({ uris: record.kept.resourceUris, ...(added !== undefined ? { added } : {}) })
      return added !== undefined && options.refuse?.includes(added)
        ? Promise.reject(new Error(`refused ${added}`))
        : Promise.resolve()
    },
    levelChanged: () => (levels.push(record.kept.logLevel), Promise.resolve()),
  } as unknown as ChildSession
  return { told, levels, session }
}

/** A record over a running session (`running: false`: no child runs). */
function record(options: { refuse?: string[]; running?: boolean } = {}) {
  const resources = new ChildRecord()
  const { told, levels, session } = noting(resources, options)
  if (options.running !== false) resources.attach(session)
  return { kept: resources.kept, told, levels, resources, session }
}

describe('what clients asked of a child’s resources (the record its sessions ask for at every start)', () => {
  it('holds each resource once while any client holds it, and tells the session of each change', async () => {
    const { kept, told, resources } = record()
    const [c1, c2] = [{}, {}]
    await resources.watch(c1, 'b://2')
    await resources.watch(c1, 'a://1')
    await resources.watch(c2, 'a://1')
    expect(kept.resourceUris).toEqual(['a://1', 'b://2'])
    // The first holder of a resource waits for the child's answer to it; a second holder asks nothing new.
    expect(told.map((t) => t.added)).toEqual(['b://2', 'a://1', undefined])
    // c2 still holds a://1: the child keeps it.
    await resources.unwatch(c1, 'a://1')
    expect(kept.resourceUris).toEqual(['a://1', 'b://2'])
    await resources.unwatch(c1, 'never://held')
    await resources.unwatch(c1, 'b://2')
    expect(kept.resourceUris).toEqual(['a://1'])
    // A client that goes away lets go of everything it held.
    await resources.forget(c2)
    expect(kept.resourceUris).toEqual([])
    expect(told.at(-1)).toEqual({ uris: [] })
  })

  it('takes a refused resource back, and the caller hears the refusal', async () => {
    const { kept, told, resources } = record({ refuse: ['no://1'] })
    const c = {}
    await resources.watch(c, 'ok://1')
    await expect(resources.watch(c, 'no://1')).rejects.toThrow('refused no://1')
    expect(kept.resourceUris).toEqual(['ok://1'])
    expect(told.at(-1)).toEqual({ uris: ['ok://1'] })
  })

  it('records what is asked of a child that is not running (its next start asks for it)', async () => {
    const { kept, told, resources } = record({ running: false })
    await resources.watch({}, 'a://1')
    expect(kept.resourceUris).toEqual(['a://1'])
    expect(told).toEqual([])
  })

  it('tells only the session attached now: a stopped process’s is never told again', async () => {
    const { resources, told, session } = record()
    const next = noting(resources)
    resources.attach(next.session)
    // The old process stopping after the new one started leaves the new one attached.
    resources.detach(session)
    await resources.watch({}, 'a://1')
    expect(told).toEqual([])
    expect(next.told).toEqual([{ uris: ['a://1'], added: 'a://1' }])
    resources.detach(next.session)
    await resources.watch({}, 'b://2')
    expect(next.told).toHaveLength(1)
  })
})

describe('the log level clients set (kept in the same record)', () => {
  it('is the one set last, sent to the running child, and recorded for one not running', async () => {
    const { kept, levels, resources } = record()
    const [c1, c2] = [{}, {}]
    await resources.setLevel(c1, 'error')
    await resources.setLevel(c2, 'debug')
    expect(kept.logLevel).toBe('debug')
    expect(levels).toEqual(['error', 'debug'])
    const idle = record({ running: false })
    await idle.resources.setLevel(c1, 'warning')
    expect(idle.kept.logLevel).toBe('warning')
    expect(idle.levels).toEqual([])
  })

  it('goes with the client that set it: the level another client set last is in force again, then none', async () => {
    const { kept, levels, resources } = record()
    const [c1, c2] = [{}, {}]
    await resources.setLevel(c1, 'error')
    await resources.setLevel(c2, 'debug')
    await resources.setLevel(c1, 'info')
    await resources.forget(c1)
    expect(kept.logLevel).toBe('debug')
    expect(levels.at(-1)).toBe('debug')
    await resources.forget(c2)
    expect(kept.logLevel).toBeUndefined()
    expect(resources.empty).toBe(true)
  })
})

describe('records by slot (what a person asked outlives their instances)', () => {
  const alice = slotOf({ person: 'alice' })
  const session = slotOf({ person: 'alice', session: 'S1' })

  it('hands every connection made for a slot the same record, and forgets it once nothing is held and none holds it', async () => {
    const records = new SlotRecords()
    const first = records.take('gh', alice)
    const [watcher, holder] = [{}, {}]
    await first.watch(watcher, 'x://1')
    await first.setLevel(holder, 'error')
    records.release('gh', alice, first)
    // No instance runs for alice now: her record stays, and her next instance takes it.
    expect(records.has('gh', alice)).toBe(true)
    const next = records.take('gh', alice)
    expect(next).toBe(first)
    expect(next.kept).toEqual({ resourceUris: ['x://1'], logLevel: 'error' })
    expect(records.take('gh', slotOf({ person: 'bob' }))).not.toBe(first)
    records.release('gh', alice, next)
    // Her clients let go of everything while no instance runs: it is forgotten.
    await next.unwatch(watcher, 'x://1')
    expect(records.has('gh', alice)).toBe(true)
    await next.forget(holder)
    expect(records.has('gh', alice)).toBe(false)
    expect(records.take('gh', alice)).not.toBe(first)
  })

  it('keeps an empty record while a connection of its slot holds it; releases of an old record change nothing', async () => {
    const records = new SlotRecords()
    const own = records.take('fs', OWN_SLOT)
    await own.forget({})
    expect(records.has('fs', OWN_SLOT)).toBe(true)
    records.release('fs', OWN_SLOT, new ChildRecord())
    expect(records.has('fs', OWN_SLOT)).toBe(true)
    records.release('fs', OWN_SLOT, own)
    expect(records.has('fs', OWN_SLOT)).toBe(false)
  })

  it('records in a slot no instance runs for, and forgets a session’s slots with the session', async () => {
    const records = new SlotRecords()
    const holder = {}
    await records.of('gh', session).setLevel(holder, 'debug')
    await records.of('mem', session).watch(holder, 'm://1')
    await records.of('gh', alice).watch(holder, 'x://1')
    records.endSession('S1')
    expect([records.has('gh', session), records.has('mem', session), records.has('gh', alice)]).toEqual([
      false,
      false,
      true,
    ])
  })
})

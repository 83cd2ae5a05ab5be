import { describe, expect, it } from 'vitest'
import { ChildResources } from '../../src/children/child-resources.js'
import type { ChildSession } from '../../src/children/child-session.js'

/** A record over a session that notes what it is told, refusing the resources in `refuse`; `running: false` is a child not running. */
function record(options: { refuse?: string[]; running?: boolean } = {}) {
  const kept = { resourceUris: [] as readonly string[] }
  const told: Array<{ uris: readonly string[]; added?: string }> = []
  const session = {
    resourcesChanged: (added?: string) => {
      told.push({ uris: kept.resourceUris, ...(added !== undefined ? { added } : {}) })
      return added !== undefined && options.refuse?.includes(added)
        ? Promise.reject(new Error(`refused ${added}`))
        : Promise.resolve()
    },
  } as unknown as ChildSession
  const resources = new ChildResources(kept, () => (options.running === false ? undefined : session))
  return { kept, told, resources }
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

  it('a connection that replaces another (a reload changed the server) holds what the old one did', async () => {
    const old = record({ running: false })
    const next = record()
    const [c1, c2] = [{}, {}]
    await old.resources.watch(c1, 'a://1')
    await old.resources.watch(c2, 'b://2')
    await next.resources.watch(c2, 'a://1')
    await next.resources.adopt(old.resources)
    expect(next.kept.resourceUris).toEqual(['a://1', 'b://2'])
    // c1 and c2 both hold a://1 here now: one letting go keeps it.
    await next.resources.forget(c1)
    expect(next.kept.resourceUris).toEqual(['a://1', 'b://2'])
    await next.resources.forget(c2)
    expect(next.kept.resourceUris).toEqual([])
  })
})

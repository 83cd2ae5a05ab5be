import { describe, expect, it } from 'vitest'
import { responseLine } from '../../src/protocol/result-lines.js'
import { decodeCursor, ListPages, paginate } from '../../src/server/pagination.js'

describe('ListPages', () => {
  const items = Array.from({ length: 5 }, (_, i) => ({ name: `t${i}` }))
  const build = (list: readonly unknown[], offset: number, counter: { n: number }) => () => {
    counter.n++
    const page = paginate(list, offset, 2, 'tools')
    return { tools: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }
  }

  it('serves a page again as the same object while the list is made from the same things, and marks it reusable', () => {
    const pages = new ListPages()
    const counter = { n: 0 }
    const first = pages.page([items], 0, build(items, 0, counter))
    expect(pages.page([items], 0, build(items, 0, counter))).toBe(first)
    expect(counter.n).toBe(1)
    // Another page of the same list is its own.
    const second = pages.page([items], 2, build(items, 2, counter))
    expect(second).not.toBe(first)
    expect(decodeCursor(first.nextCursor, 'tools')).toBe(2)
    expect(JSON.parse(responseLine({ jsonrpc: '2.0', id: 9, result: first } as never) as string)).toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: first,
    })
  })

  it('builds anew when anything the list is made from changed', () => {
    const pages = new ListPages()
    const counter = { n: 0 }
    const first = pages.page([items, 'rev-1'], 0, build(items, 0, counter))
    const changed = [...items.slice(0, 4)]
    const next = pages.page([changed, 'rev-1'], 0, build(changed, 0, counter))
    expect(next).not.toBe(first)
    expect(pages.page([changed, 'rev-2'], 0, build(changed, 0, counter))).not.toBe(next)
    expect(counter.n).toBe(3)
  })
})

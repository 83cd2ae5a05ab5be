import { describe, expect, it } from 'vitest'
import { SeenLists, sameList, type ListKindName } from '../../src/principal/seen-lists.js'

describe('sameList', () => {
  it('compares by identity and order, not by content', () => {
    const a = { name: 'a' }
    const b = { name: 'b' }
    expect(sameList([a, b], [a, b])).toBe(true)
    expect(sameList([a, b], [b, a])).toBe(false)
    expect(sameList([a], [{ name: 'a' }])).toBe(false)
    expect(sameList([a], [a, b])).toBe(false)
    expect(sameList([], [])).toBe(true)
  })
})

describe('SeenLists', () => {
  it('a kind never seen counts as changed; then only a different list does, once', () => {
    let tools: unknown[] = [{ name: 'a' }]
    const seen = new SeenLists((kind: ListKindName) => (kind === 'tools' ? tools : []))
    expect(seen.changed('tools')).toBe(true)
    expect(seen.changed('tools')).toBe(false)
    tools = [...tools, { name: 'b' }]
    expect(seen.changed('tools')).toBe(true)
    expect(seen.changed('tools')).toBe(false)
  })

  it('rememberAll takes what is seen now of every kind as already told', () => {
    const seen = new SeenLists(() => [])
    seen.rememberAll()
    expect(seen.changed('tools')).toBe(false)
    expect(seen.changed('prompts')).toBe(false)
    expect(seen.changed('resources')).toBe(false)
  })
})

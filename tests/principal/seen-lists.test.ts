import { describe, expect, it } from 'vitest'
import { SeenLists, sameList, visibleNow, type ListKindName } from '../../src/principal/seen-lists.js'
import type { PrincipalView } from '../../src/principal/view.js'
import { Catalogue } from '../../src/registry/catalogue.js'

const naming = { separator: '__', maxLength: 64 }
const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } })
const all = ['tools', 'prompts', 'resources', 'resourceTemplates'] as const

/** A principal that reaches every server but `hidden`. */
function view(hidden = 'hidden'): PrincipalView {
  return {
    toolVisible: (e) => e.server !== hidden,
    promptVisible: (e) => e.server !== hidden,
    serverVisible: (s) => s !== hidden,
    builtinTools: () => [],
    callBuiltin: () => undefined,
    onChange: () => () => {},
  }
}

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

  it('over a catalogue: a server the principal cannot reach changing its lists changes nothing it sees; one it reaches does', () => {
    const c = new Catalogue(['open', 'hidden'], naming)
    c.setServer('open', { tools: [tool('a')], prompts: [{ name: 'p' }], resources: [{ uri: 'o://1', name: '1' }] }, all)
    c.setServer('hidden', { tools: [tool('h')], prompts: [{ name: 'q' }], resources: [{ uri: 'h://1', name: '1' }] }, all)
    const seen = SeenLists.of(c, view())
    seen.rememberAll()
    c.setServer('hidden', { tools: [tool('h'), tool('h2')], prompts: [{ name: 'q2' }], resources: [], resourceTemplates: [{ uriTemplate: 'h://{x}', name: 't' }] }, all)
    for (const kind of ['tools', 'prompts', 'resources'] as const) expect(seen.changed(kind), kind).toBe(false)
    c.setServer('open', { tools: [tool('a'), tool('b')] }, ['tools'])
    expect(seen.changed('tools')).toBe(true)
    expect(seen.changed('prompts')).toBe(false)
    c.setServer('open', { resourceTemplates: [{ uriTemplate: 'o://{x}', name: 't' }] }, ['resourceTemplates'])
    expect(seen.changed('resources')).toBe(true)
  })
})

describe('visibleNow', () => {
  it('tools: the built-ins first, then the visible tools’ definitions; resources: resources, then templates', () => {
    const c = new Catalogue(['open', 'hidden'], naming)
    const a = tool('a')
    c.setServer('open', { tools: [a], resources: [{ uri: 'o://1', name: '1' }], resourceTemplates: [{ uriTemplate: 'o://{x}', name: 't' }] }, all)
    c.setServer('hidden', { tools: [tool('h')] }, all)
    const builtin = { name: 'mycelium__list_skills', inputSchema: { type: 'object' as const } }
    const v = { ...view(), builtinTools: () => [builtin] }
    expect(visibleNow(c, v, 'tools')).toEqual([builtin, a])
    expect(visibleNow(c, v, 'tools')[1]).toBe(a)
    expect(visibleNow(c, v, 'resources')).toEqual([{ uri: 'o://1', name: '1' }, { uriTemplate: 'o://{x}', name: 't' }])
    expect(visibleNow(c, view('open'), 'tools').map((t) => (t as { name: string }).name)).toEqual(['h'])
  })
})

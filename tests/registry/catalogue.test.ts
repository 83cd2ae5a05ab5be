import { describe, expect, it } from 'vitest'
import { Catalogue } from '../../src/registry/catalogue.js'

const tool = (name: string, extra: Record<string, unknown> = {}) => ({ name, inputSchema: { type: 'object' as const }, ...extra })
const naming = { separator: '__', maxLength: 64 }
const all = ['tools', 'prompts', 'resources', 'resourceTemplates'] as const

describe('Catalogue', () => {
  it('orders servers as configured and keeps each child’s own order', () => {
    const c = new Catalogue(['b', 'a'], naming)
    c.setServer('a', { tools: [tool('z'), tool('y')] }, ['tools'])
    c.setServer('b', { tools: [tool('x')] }, ['tools'])
    expect(c.tools().map((t) => t.id)).toEqual(['b:x', 'a:z', 'a:y'])
    expect(c.toolByWire('a__y')?.id).toBe('a:y')
    expect(c.toolById('b:x')?.wireName).toBe('b__x')
    expect(c.toolByWire('a:y')).toBeUndefined()
  })

  it('keeps the child’s definition untouched and only renames the wire copy', () => {
    const c = new Catalogue(['s'], naming)
    const def = tool('t', { title: 'T', annotations: { readOnlyHint: true }, _meta: { k: 1 } })
    c.setServer('s', { tools: [def] }, ['tools'])
    const entry = c.tools()[0]!
    expect(entry.def).toBe(def)
    expect(entry.wire).toEqual({ ...def, name: 's__t' })
  })

  it('reports a wire-name collision, keeps the first server (config order) and leaves the other out', () => {
    const c = new Catalogue(['a', 'a_b'], { separator: '_', maxLength: 64 })
    c.setServer('a', { tools: [tool('b_c')] }, ['tools'])
    c.setServer('a_b', { tools: [tool('c')] }, ['tools'])
    expect(c.tools().map((t) => t.id)).toEqual(['a:b_c'])
    expect(c.conflicts).toEqual([{ kind: 'tool', name: 'a_b_c', kept: 'a:b_c', dropped: 'a_b:c' }])
  })

  it('removes a server’s entries of every kind at once', () => {
    const c = new Catalogue(['s', 't'], naming)
    c.setServer('s', { tools: [tool('a')], prompts: [{ name: 'p' }], resources: [{ uri: 'x://1', name: '1' }], resourceTemplates: [{ uriTemplate: 'x://{id}', name: 't' }] }, all)
    c.setServer('t', { tools: [tool('b')] }, ['tools'])
    const before = c.revision.tools
    c.clearServer('s')
    expect(c.tools().map((t) => t.id)).toEqual(['t:b'])
    expect(c.prompts()).toEqual([])
    expect(c.resources()).toEqual([])
    expect(c.templates()).toEqual([])
    expect(c.revision.tools).toBeGreaterThan(before)
  })

  it('routes resource URIs: listed resources first, then templates in config order', () => {
    const c = new Catalogue(['a', 'b'], naming)
    c.setServer('a', { resources: [{ uri: 'file:///x', name: 'x' }], resourceTemplates: [{ uriTemplate: 'db://{table}/{id}', name: 'row' }] }, all)
    c.setServer('b', { resources: [{ uri: 'file:///x', name: 'dup' }, { uri: 'mem://y', name: 'y' }], resourceTemplates: [{ uriTemplate: 'db://{anything}', name: 'b' }, { uriTemplate: 'mem://{key}', name: 'm' }] }, all)
    expect(c.serverForUri('file:///x')).toBe('a')
    expect(c.serverForUri('mem://y')).toBe('b')
    expect(c.serverForUri('db://users/7')).toBe('a')
    expect(c.serverForUri('mem://other')).toBe('b')
    expect(c.serverForUri('nope://x')).toBeUndefined()
    expect(c.serverForTemplate('mem://{key}')).toBe('b')
    expect(c.conflicts).toContainEqual({ kind: 'resource', name: 'file:///x', kept: 'a', dropped: 'b' })
  })

  it('namespaces prompts like tools', () => {
    const c = new Catalogue(['s'], naming)
    c.setServer('s', { prompts: [{ name: 'review', arguments: [{ name: 'diff' }] }] }, ['prompts'])
    expect(c.promptByWire('s__review')?.wire).toEqual({ name: 's__review', arguments: [{ name: 'diff' }] })
  })

  it('builds 2,000 tools without trouble and finds each by wire name', () => {
    const c = new Catalogue(['s'], naming)
    c.setServer('s', { tools: Array.from({ length: 2_000 }, (_, i) => tool(`t${i}`)) }, ['tools'])
    expect(c.tools()).toHaveLength(2_000)
    expect(c.toolByWire('s__t1999')?.name).toBe('t1999')
  })
})

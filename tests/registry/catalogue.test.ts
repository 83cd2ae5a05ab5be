import { describe, expect, it } from 'vitest'
import { Catalogue } from '../../src/registry/catalogue.js'

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  inputSchema: { type: 'object' as const },
  ...extra,
})
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
    c.setServer(
      's',
      {
        tools: [tool('a')],
        prompts: [{ name: 'p' }],
        resources: [{ uri: 'x://1', name: '1' }],
        resourceTemplates: [{ uriTemplate: 'x://{id}', name: 't' }],
      },
      all,
    )
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
    c.setServer(
      'a',
      {
        resources: [{ uri: 'file:///x', name: 'x' }],
        resourceTemplates: [{ uriTemplate: 'db://{table}/{id}', name: 'row' }],
      },
      all,
    )
    c.setServer(
      'b',
      {
        resources: [
          { uri: 'file:///x', name: 'dup' },
          { uri: 'mem://y', name: 'y' },
        ],
        resourceTemplates: [
          { uriTemplate: 'db://{anything}', name: 'b' },
          { uriTemplate: 'mem://{key}', name: 'm' },
        ],
      },
      all,
    )
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

describe('Catalogue: prefixes (mounting a child unprefixed or under another word)', () => {
  it('prefix false serves the child’s own names, a prefix string replaces the key, others keep their key', () => {
    const c = new Catalogue(
      ['main', 'helper', 'other'],
      naming,
      new Map<string, string | false>([
        ['main', false],
        ['helper', 'h'],
      ]),
    )
    c.setServer('main', { tools: [tool('test_simple_text')], prompts: [{ name: 'test_prompt' }] }, ['tools', 'prompts'])
    c.setServer('helper', { tools: [tool('run')] }, ['tools'])
    c.setServer('other', { tools: [tool('run')] }, ['tools'])
    expect(c.tools().map((t) => [t.id, t.wireName])).toEqual([
      ['main:test_simple_text', 'test_simple_text'],
      ['helper:run', 'h__run'],
      ['other:run', 'other__run'],
    ])
    expect(c.toolByWire('test_simple_text')?.server).toBe('main')
    expect(c.promptByWire('test_prompt')?.id).toBe('main:test_prompt')
  })

  it('an unprefixed name that clashes with another server’s is a conflict naming both; the first in config order stays', () => {
    const c = new Catalogue(['a', 'b'], naming, new Map<string, string | false>([['a', false]]))
    c.setServer('a', { tools: [tool('b__x')] }, ['tools'])
    c.setServer('b', { tools: [tool('x')] }, ['tools'])
    expect(c.tools().map((t) => t.id)).toEqual(['a:b__x'])
    expect(c.conflicts).toEqual([{ kind: 'tool', name: 'b__x', kept: 'a:b__x', dropped: 'b:x' }])
  })

  it('unsafe or long bare names are made safe with a hash suffix, and a reload can change the prefixes', () => {
    const c = new Catalogue(['a'], { separator: '__', maxLength: 24 }, new Map<string, string | false>([['a', false]]))
    c.setServer('a', { tools: [tool('has space'), tool('a'.repeat(30))] }, ['tools'])
    const [spaced, long] = c.tools().map((t) => t.wireName)
    expect(spaced).toMatch(/^has_space_[0-9a-f]{8}$/)
    expect(long).toHaveLength(24)
    c.setServerOrder(['a'], new Map())
    expect(c.tools()[0]!.wireName).toMatch(/^a__has_space_[0-9a-f]{8}$/)
  })

  it('a tool or prompt the gate withholds is in no list and no lookup, takes no wire name, and is listed as withheld', () => {
    const held = new Set(['a:secret', 'a:ask'])
    const gate = {
      judge: (server: string, _kind: string, def: { name: string }) =>
        held.has(`${server}:${def.name}`) ? { reason: 'changed' as const } : undefined,
    }
    const c = new Catalogue(['a', 'b'], naming, new Map<string, string | false>([['b', 'a']]), gate)
    c.setServer('a', { tools: [tool('secret'), tool('open')], prompts: [{ name: 'ask' }, { name: 'tell' }] }, [
      'tools',
      'prompts',
    ])
    // b's tools reach the client as a__…: b's `secret` is not shadowed by a withheld one.
    c.setServer('b', { tools: [tool('secret')] }, ['tools'])
    expect(c.tools().map((t) => t.id)).toEqual(['a:open', 'b:secret'])
    expect(c.toolByWire('a__secret')?.id).toBe('b:secret')
    expect(c.toolById('a:secret')).toBeUndefined()
    expect(c.prompts().map((p) => p.id)).toEqual(['a:tell'])
    expect(c.promptByWire('a__ask')).toBeUndefined()
    expect(c.conflicts).toEqual([])
    expect(c.withheld()).toEqual([
      { id: 'a:secret', server: 'a', kind: 'tool', name: 'secret', reason: 'changed' },
      { id: 'a:ask', server: 'a', kind: 'prompt', name: 'ask', reason: 'changed' },
    ])
    // The policy's strict check still knows the name (a skill that names it exactly is not disabled by a withheld tool).
    expect(c.toolNamesOf('a')).toEqual(new Set(['secret', 'open']))
    held.clear()
    const before = c.revision.tools
    c.regate()
    expect(c.revision.tools).toBeGreaterThan(before)
    expect(c.withheld()).toEqual([])
    expect(c.tools().map((t) => t.id)).toEqual(['a:secret', 'a:open'])
    expect(c.conflicts.map((x) => x.dropped)).toEqual(['b:secret'])
  })

  it('a down server keeps its last known tools, but never one the gate withholds', () => {
    const gate = {
      judge: (_server: string, _kind: string, def: { name: string }) =>
        def.name === 'secret' ? { reason: 'changed' as const } : undefined,
    }
    const c = new Catalogue(['a'], naming, new Map<string, string | false>([['a', false]]), gate)
    c.setServer('a', { tools: [tool('secret'), tool('open')] }, ['tools'])
    c.serverDown('a')
    expect(c.tools()).toEqual([])
    expect(c.lastKnownTool('open')?.id).toBe('a:open')
    // A withheld tool of a server that is down is as unknown as it was while the server ran.
    expect(c.lastKnownTool('secret')).toBeUndefined()
  })
})

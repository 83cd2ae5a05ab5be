import { describe, expect, it } from 'vitest'
import { SeenLists } from '../../src/principal/seen-lists.js'
import type { PrincipalView } from '../../src/principal/view.js'
import { Catalogue } from '../../src/registry/catalogue.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { visibleList } from '../../src/server/principal-requests.js'

const naming = { separator: '__', maxLength: 64 }
const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } })
const all = ['tools', 'prompts', 'resources', 'resourceTemplates'] as const

/** The parts of a runtime the list walk reads: the catalogue and the naming. */
function runtimeOf(catalogue: Catalogue): Runtime {
  return {
    catalogue,
    loaded: { config: { namespace: naming } },
    supervisor: { children: new Map() },
  } as unknown as Runtime
}

/** A principal that reaches every server but `hidden`. */
function view(hidden = 'hidden', extra: Partial<PrincipalView> = {}): PrincipalView {
  return {
    toolVisible: (e) => e.server !== hidden,
    promptVisible: (e) => e.server !== hidden,
    serverVisible: (s) => s !== hidden,
    builtinTools: () => [],
    callBuiltin: () => undefined,
    onChange: () => () => {},
    ...extra,
  }
}

describe('visibleList: the walk list changes are judged by is the one the faces list with', () => {
  it('tools: the built-ins first, then the visible tools as listed; resources: resources, then templates', () => {
    const c = new Catalogue(['open', 'hidden'], naming)
    c.setServer(
      'open',
      {
        tools: [tool('a')],
        resources: [{ uri: 'o://1', name: '1' }],
        resourceTemplates: [{ uriTemplate: 'o://{x}', name: 't' }],
      },
      all,
    )
    c.setServer('hidden', { tools: [tool('h')] }, all)
    const builtin = { name: 'mycelium__list_skills', inputSchema: { type: 'object' as const } }
    const rt = runtimeOf(c)
    const v = view('hidden', { builtinTools: () => [builtin] })
    expect((visibleList(rt, v, 'tools') as Array<{ name: string }>).map((t) => t.name)).toEqual([
      'mycelium__list_skills',
      'open__a',
    ])
    expect(visibleList(rt, v, 'resources')).toEqual([
      { uri: 'o://1', name: '1' },
      { uriTemplate: 'o://{x}', name: 't' },
    ])
    expect((visibleList(rt, view('open'), 'tools') as Array<{ name: string }>).map((t) => t.name)).toEqual([
      'hidden__h',
    ])
  })

  it('a server the principal cannot reach changing its lists changes nothing it sees; one it reaches does', () => {
    const c = new Catalogue(['open', 'hidden'], naming)
    c.setServer('open', { tools: [tool('a')], prompts: [{ name: 'p' }], resources: [{ uri: 'o://1', name: '1' }] }, all)
    c.setServer(
      'hidden',
      { tools: [tool('h')], prompts: [{ name: 'q' }], resources: [{ uri: 'h://1', name: '1' }] },
      all,
    )
    const rt = runtimeOf(c)
    const v = view()
    const seen = new SeenLists((kind) => visibleList(rt, v, kind))
    seen.rememberAll()
    c.setServer(
      'hidden',
      {
        tools: [tool('h'), tool('h2')],
        prompts: [{ name: 'q2' }],
        resources: [],
        resourceTemplates: [{ uriTemplate: 'h://{x}', name: 't' }],
      },
      all,
    )
    for (const kind of ['tools', 'prompts', 'resources'] as const) expect(seen.changed(kind), kind).toBe(false)
    c.setServer('open', { tools: [tool('a'), tool('b')] }, ['tools'])
    expect(seen.changed('tools')).toBe(true)
    expect(seen.changed('prompts')).toBe(false)
    c.setServer('open', { resourceTemplates: [{ uriTemplate: 'o://{x}', name: 't' }] }, ['resourceTemplates'])
    expect(seen.changed('resources')).toBe(true)
  })

  it('lazy open mode lists no child tool, so a child’s new tools are no change to it', () => {
    const c = new Catalogue(['open'], naming)
    c.setServer('open', { tools: [tool('a')] }, all)
    const rt = runtimeOf(c)
    const search = tool('mycelium__search_tools')
    const lazy = view('hidden', { listsChildTools: false, builtinTools: () => [search] })
    const seen = new SeenLists((kind) => visibleList(rt, lazy, kind))
    seen.rememberAll()
    c.setServer('open', { tools: [tool('a'), tool('b')] }, ['tools'])
    expect(seen.changed('tools')).toBe(false)
  })
})

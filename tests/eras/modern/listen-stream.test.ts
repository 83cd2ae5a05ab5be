import { describe, expect, it } from 'vitest'
import type { ChildConnection } from '../../../src/children/child.js'
import type { PrincipalView } from '../../../src/principal/view.js'
import { Catalogue } from '../../../src/registry/catalogue.js'
import type { ConnectionHandle, Runtime } from '../../../src/runtime/runtime.js'
import {
  ListenStream,
  serverEventOf,
  stamped,
  visibleFilter,
  type ListenNotification,
} from '../../../src/eras/modern/listen-stream.js'
import { waitFor } from '../../helpers/wait-for.js'

const naming = { separator: '__', maxLength: 64 }
const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } })
const all = ['tools', 'prompts', 'resources', 'resourceTemplates'] as const

describe('visibleFilter', () => {
  const visible = (uri: string) => uri.startsWith('ok://')

  it('leaves out the resources the principal cannot see, keeps every other field as asked', () => {
    expect(
      visibleFilter(
        { toolsListChanged: true, resourceSubscriptions: ['ok://a', 'hidden://b', 'ok://c', 'ok://a'] },
        visible,
      ),
    ).toEqual({ toolsListChanged: true, resourceSubscriptions: ['ok://a', 'ok://c'] })
    expect(visibleFilter({ promptsListChanged: true, resourcesListChanged: false }, visible)).toEqual({
      promptsListChanged: true,
      resourcesListChanged: false,
    })
  })

  it('with none of its resources visible, the filter has no resourceSubscriptions at all (nothing about them in the acknowledgement)', () => {
    expect(visibleFilter({ resourceSubscriptions: ['hidden://b'] }, visible)).toEqual({})
    expect(visibleFilter({ toolsListChanged: true, resourceSubscriptions: [] }, visible)).toEqual({
      toolsListChanged: true,
    })
  })

  it('something that is not a filter is left to the SDK (undefined)', () => {
    expect(visibleFilter(undefined, visible)).toBeUndefined()
    expect(visibleFilter('tools', visible)).toBeUndefined()
    expect(visibleFilter({ resourceSubscriptions: 'ok://a' }, visible)).toBeUndefined()
    expect(visibleFilter({ resourceSubscriptions: ['ok://a', 7] }, visible)).toBeUndefined()
  })
})

describe('stamped and serverEventOf', () => {
  it('stamped puts the subscription id in _meta, beside what was there', () => {
    expect(stamped({ method: 'notifications/tools/list_changed' }, 'listen:1')).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen:1' } },
    })
    expect(
      stamped({ method: 'notifications/resources/updated', params: { uri: 'x://1', _meta: { k: 1 } } }, 7),
    ).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'x://1', _meta: { k: 1, 'io.modelcontextprotocol/subscriptionId': 7 } },
    })
  })

  it('serverEventOf maps each notification onto the event the SDK listen router delivers as it', () => {
    expect(serverEventOf({ method: 'notifications/tools/list_changed' })).toEqual({ kind: 'tools_list_changed' })
    expect(serverEventOf({ method: 'notifications/prompts/list_changed' })).toEqual({ kind: 'prompts_list_changed' })
    expect(serverEventOf({ method: 'notifications/resources/list_changed' })).toEqual({
      kind: 'resources_list_changed',
    })
    expect(serverEventOf({ method: 'notifications/resources/updated', params: { uri: 'x://1' } })).toEqual({
      kind: 'resource_updated',
      uri: 'x://1',
      params: { uri: 'x://1' },
    })
  })
})

/** A runtime with a catalogue of `open` (seen) and `hidden` (not), and the children given; records what it was asked. */
function setup(children: Record<string, Partial<ChildConnection>> = {}) {
  const catalogue = new Catalogue(['open', 'hidden'], naming)
  catalogue.setServer(
    'open',
    {
      tools: [tool('a')],
      prompts: [{ name: 'p' }],
      resources: [
        { uri: 'o://1', name: '1' },
        { uri: 'o://2', name: '2' },
      ],
    },
    all,
  )
  catalogue.setServer('hidden', { tools: [tool('h')], resources: [{ uri: 'h://1', name: '1' }] }, all)
  const asked: unknown[][] = []
  const connections = new Set<ConnectionHandle>()
  const runtime = {
    catalogue,
    loaded: { config: { namespace: naming } },
    connections,
    supervisor: { children: new Map(Object.entries(children).map(([k, c]) => [k, { key: k, ...c }])) },
    logger: { debug: (line: string) => asked.push(['debug', line]) },
    addConnection: (c: ConnectionHandle) => connections.add(c),
    removeConnection: (c: ConnectionHandle) => (connections.delete(c), asked.push(['removeConnection', c])),
    subscribeResource: async (c: ConnectionHandle, child: ChildConnection, uri: string) =>
      void asked.push(['subscribeResource', c, child.key, uri]),
  } as unknown as Runtime
  const listeners = new Set<() => void>()
  const view: PrincipalView = {
    toolVisible: (e) => e.server !== 'hidden',
    promptVisible: (e) => e.server !== 'hidden',
    serverVisible: (s) => s !== 'hidden',
    builtinTools: () => [],
    callBuiltin: () => undefined,
    onChange: (l) => (listeners.add(l), () => listeners.delete(l)),
  }
  const delivered: ListenNotification[] = []
  const stream = (filter: Parameters<typeof visibleFilter>[0]) =>
    new ListenStream({ runtime, view, filter: filter as never, deliver: (n) => void delivered.push(n) })
  return { catalogue, runtime, connections, asked, delivered, listeners, stream }
}

describe('ListenStream', () => {
  it('is a runtime connection from open() to close(), and listens to the view only meanwhile', () => {
    const { connections, listeners, stream } = setup()
    const s = stream({ toolsListChanged: true })
    expect(connections.size).toBe(0)
    s.open()
    expect([...connections]).toEqual([s])
    expect(listeners.size).toBe(1)
    s.close()
    s.close()
    expect(connections.size).toBe(0)
    expect(listeners.size).toBe(0)
  })

  it('tells of a list change only of the kinds its filter names, and only when what the principal sees changed', () => {
    const { catalogue, delivered, stream } = setup()
    const s = stream({ toolsListChanged: true, resourcesListChanged: true })
    s.open()
    catalogue.setServer('hidden', { tools: [tool('h'), tool('h2')] }, ['tools'])
    s.catalogueChanged(new Set(['tools']))
    expect(delivered).toEqual([])
    catalogue.setServer('open', { tools: [tool('a'), tool('b')], prompts: [{ name: 'p2' }] }, ['tools', 'prompts'])
    s.catalogueChanged(new Set(['tools', 'prompts']))
    // prompts changed too, but the filter did not ask for them.
    expect(delivered).toEqual([{ method: 'notifications/tools/list_changed' }])
    s.catalogueChanged(new Set(['tools', 'prompts', 'resources']))
    expect(delivered).toHaveLength(1)
    s.close()
    catalogue.setServer('open', { tools: [tool('c')] }, ['tools'])
    s.catalogueChanged(new Set(['tools']))
    expect(delivered).toHaveLength(1)
  })

  it('a change of the view itself (an escalation, a reload) is checked like a catalogue change', () => {
    const { catalogue, delivered, listeners, stream } = setup()
    const s = stream({ toolsListChanged: true })
    s.open()
    catalogue.setServer('open', { tools: [tool('z')] }, ['tools'])
    for (const l of listeners) l()
    expect(delivered).toEqual([{ method: 'notifications/tools/list_changed' }])
    s.close()
  })

  it('delivers resources/updated for its own resources of servers the principal reaches, and nothing else', () => {
    const { delivered, stream } = setup()
    const s = stream({ resourceSubscriptions: ['o://1'] })
    const updated = (uri: string) => ({
      jsonrpc: '2.0' as const,
      method: 'notifications/resources/updated',
      params: { uri },
    })
    s.childNotification('open', updated('o://1'))
    expect(delivered).toEqual([])
    s.open()
    s.childNotification('open', updated('o://1'))
    s.childNotification('open', updated('o://2'))
    s.childNotification('hidden', updated('o://1'))
    s.childNotification('open', {
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'info', data: 'x' },
    })
    expect(delivered).toEqual([{ method: 'notifications/resources/updated', params: { uri: 'o://1' } }])
    s.close()
    s.childNotification('open', updated('o://1'))
    expect(delivered).toHaveLength(1)
  })

  it('asks the child that serves each of its resources through the runtime, as its person, and lets go when it closes', async () => {
    const { asked, stream } = setup({ open: { config: { type: 'stdio' } } as unknown as Partial<ChildConnection> })
    const s = stream({ resourceSubscriptions: ['o://1', 'h://1'] })
    s.open()
    await waitFor(() => asked.length > 0, 5_000, 'the runtime to be asked for o://1')
    // h://1 is of a server the principal does not reach: never asked for.
    expect(asked).toEqual([['subscribeResource', s, 'open', 'o://1']])
    // A stream of a credential without a person is whoever runs myc's (a scoped server's own process is theirs).
    expect(s.who).toEqual({})
    // Leaving the runtime is what lets go of its subscriptions (every child that holds it forgets it).
    s.close()
    expect(asked.slice(1)).toEqual([['removeConnection', s]])
  })

  it('is never asked a child’s request: it reaches no server, answers nothing', async () => {
    const { stream } = setup()
    const s = stream({ toolsListChanged: true })
    expect(s.reaches()).toBe(false)
    expect(s.canAnswer()).toBe(false)
    expect(s.clientHasRoots).toBe(false)
    await expect(s.forwardRequest('open', 'elicitation/create')).rejects.toThrow(/cannot be asked elicitation\/create/)
  })
})

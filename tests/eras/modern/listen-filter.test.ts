import { describe, expect, it } from 'vitest'
import { withoutSubscriptionId } from '../../../src/children/child-client.js'
import { isEmptyFilter, listenFilter, sameFilter, subscriptionIdOf } from '../../../src/eras/modern/listen-filter.js'

const ID = 'io.modelcontextprotocol/subscriptionId'

describe('the filter of a modern child’s listen', () => {
  it('asks for the list changes the child announces, and the subscribed resources only when it serves subscriptions', () => {
    const all = {
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true, subscribe: true },
    }
    expect(listenFilter(all, ['b://2', 'a://1', 'b://2'])).toEqual({
      toolsListChanged: true,
      promptsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: ['a://1', 'b://2'],
    })
    expect(listenFilter(all, [])).toEqual({
      toolsListChanged: true,
      promptsListChanged: true,
      resourcesListChanged: true,
    })
    // No subscribe capability: the resources are not asked for (the child would not honour them).
    expect(listenFilter({ tools: { listChanged: true }, resources: {} }, ['a://1'])).toEqual({ toolsListChanged: true })
    expect(listenFilter({ tools: {}, prompts: {} }, ['a://1'])).toEqual({})
    expect(listenFilter(undefined, ['a://1'])).toEqual({})
    expect(listenFilter({ resources: { subscribe: true } }, ['a://1'])).toEqual({ resourceSubscriptions: ['a://1'] })
  })

  it('is empty when it asks for nothing', () => {
    expect(isEmptyFilter({})).toBe(true)
    expect(isEmptyFilter({ resourceSubscriptions: [] })).toBe(true)
    expect(isEmptyFilter({ toolsListChanged: false })).toBe(true)
    expect(isEmptyFilter({ promptsListChanged: true })).toBe(false)
    expect(isEmptyFilter({ resourceSubscriptions: ['a://1'] })).toBe(false)
  })

  it('compares filters by what they ask for, the resources as sets', () => {
    expect(
      sameFilter(
        { toolsListChanged: true, resourceSubscriptions: ['a', 'b'] },
        { toolsListChanged: true, resourceSubscriptions: ['b', 'a'] },
      ),
    ).toBe(true)
    expect(sameFilter({ toolsListChanged: false }, {})).toBe(true)
    expect(sameFilter({ resourceSubscriptions: [] }, {})).toBe(true)
    expect(sameFilter({ toolsListChanged: true }, {})).toBe(false)
    expect(sameFilter({ promptsListChanged: true }, { resourcesListChanged: true })).toBe(false)
    expect(sameFilter({ resourceSubscriptions: ['a'] }, { resourceSubscriptions: ['a', 'b'] })).toBe(false)
    expect(sameFilter({ resourceSubscriptions: ['a', 'c'] }, { resourceSubscriptions: ['a', 'b'] })).toBe(false)
  })
})

describe('the subscription id on a child’s notifications', () => {
  it('is read from a notification’s _meta only', () => {
    expect(
      subscriptionIdOf({
        jsonrpc: '2.0',
        method: 'notifications/tools/list_changed',
        params: { _meta: { [ID]: 'listen:3' } },
      }),
    ).toBe('listen:3')
    expect(subscriptionIdOf({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })).toBeUndefined()
    expect(
      subscriptionIdOf({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { [ID]: 7 } } }),
    ).toBeUndefined()
    // A request or a response carrying one is not a listen's notification.
    expect(
      subscriptionIdOf({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { [ID]: 'listen:3' } } }),
    ).toBeUndefined()
    expect(
      subscriptionIdOf({ jsonrpc: '2.0', id: 'listen:3', result: { _meta: { [ID]: 'listen:3' } } }),
    ).toBeUndefined()
  })

  it('is taken off before a client hears the notification, the rest of _meta kept', () => {
    expect(
      withoutSubscriptionId({
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri: 'a://1', _meta: { [ID]: 'listen:1' } },
      }),
    ).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'a://1' },
    })
    expect(
      withoutSubscriptionId({
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri: 'a://1', _meta: { [ID]: 'listen:1', traceparent: 't' } },
      }),
    ).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'a://1', _meta: { traceparent: 't' } },
    })
    const plain = {
      jsonrpc: '2.0' as const,
      method: 'notifications/message',
      params: { level: 'info', data: 'x', _meta: { traceparent: 't' } },
    }
    expect(withoutSubscriptionId(plain)).toBe(plain)
  })
})

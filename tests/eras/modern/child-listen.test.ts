import type { JSONRPCMessage, McpSubscription, SubscriptionFilter } from '@modelcontextprotocol/client'
import { describe, expect, it } from 'vitest'
import { ListenKeeper, type ListenClient } from '../../../src/eras/modern/child-listen.js'
import { quietWindow, waitFor } from '../../helpers/wait-for.js'

const ID = 'io.modelcontextprotocol/subscriptionId'
const ALL = { tools: { listChanged: true }, prompts: {}, resources: { listChanged: true, subscribe: true } }

/** One listen the fake child was asked for. */
interface FakeListen {
  id: string
  filter: SubscriptionFilter
  closedBy: 'local' | 'graceful' | 'remote' | undefined
  end(cause: 'graceful' | 'remote'): void
}

/**
 * An SDK client's listen() against a fake child: each listen gets an id,
 * is acknowledged through `screen` (as the transport would show it to the
 * keeper) unless `answer` says otherwise, and can be ended from the child.
 */
class FakeClient implements ListenClient {
  readonly listens: FakeListen[] = []
  /** What the child answers the next listens with (shifted; empty: acknowledged). */
  readonly answers: Array<{ code: number; message: string }> = []
  keeper: ListenKeeper | undefined
  events: string[] = []

  async listen(filter: SubscriptionFilter): Promise<McpSubscription> {
    const id = `listen:${this.listens.length}`
    let settle!: (cause: 'local' | 'graceful' | 'remote') => void
    const closed = new Promise<'local' | 'graceful' | 'remote'>((r) => (settle = r))
    const entry: FakeListen = {
      id,
      filter,
      closedBy: undefined,
      end: (cause) => {
        if (entry.closedBy) return
        entry.closedBy = cause
        settle(cause)
      },
    }
    this.listens.push(entry)
    this.events.push(`open ${id}`)
    await Promise.resolve()
    const answer = this.answers.shift()
    if (answer) {
      entry.closedBy = 'remote'
      throw Object.assign(new Error(answer.message), { code: answer.code })
    }
    this.keeper?.screen({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: filter, _meta: { [ID]: id } },
    })
    return {
      honoredFilter: filter,
      closed,
      close: async () => {
        if (entry.closedBy) return
        this.events.push(`close ${id}`)
        entry.closedBy = 'local'
        settle('local')
      },
    }
  }

  get open(): FakeListen[] {
    return this.listens.filter((l) => !l.closedBy)
  }
}

function keeperOver(client: FakeClient, uris: { now: string[] }, caps: Record<string, unknown> = ALL): ListenKeeper {
  const keeper = new ListenKeeper({
    client,
    capabilities: caps,
    uris: () => uris.now,
    log: { debug: () => {} },
    ackTimeoutMs: 1_000,
    debounceMs: 15,
    retry: { maxRetries: 5, initialDelayMs: 100, maxDelayMs: 200 },
    random: () => 0,
  })
  client.keeper = keeper
  return keeper
}

function notification(id: string | undefined, method = 'notifications/resources/updated'): JSONRPCMessage {
  return { jsonrpc: '2.0', method, params: { uri: 'a://1', ...(id ? { _meta: { [ID]: id } } : {}) } }
}

describe('the listen kept open on a modern child', () => {
  it('opens one listen for the list changes the child announces, and none when it announces nothing', async () => {
    const client = new FakeClient()
    const keeper = keeperOver(client, { now: [] })
    await keeper.start()
    expect(client.listens.map((l) => l.filter)).toEqual([{ toolsListChanged: true, resourcesListChanged: true }])
    expect(keeper.filter).toEqual({ toolsListChanged: true, resourcesListChanged: true })
    keeper.stop()

    const quiet = new FakeClient()
    const none = keeperOver(quiet, { now: ['a://1'] }, { tools: {}, resources: {} })
    await none.start()
    await none.update()
    expect(quiet.listens).toEqual([])
    expect(none.filter).toBeUndefined()
  })

  it('opens it again with the subscribed resources (changes close together make one reopen), and closes the old one only after the new one is acknowledged', async () => {
    const client = new FakeClient()
    const uris = { now: [] as string[] }
    const keeper = keeperOver(client, uris)
    await keeper.start()
    uris.now = ['a://1']
    const first = keeper.update()
    uris.now = ['a://1', 'b://2']
    const second = keeper.update()
    await Promise.all([first, second])
    expect(client.listens.map((l) => l.filter.resourceSubscriptions)).toEqual([undefined, ['a://1', 'b://2']])
    expect(client.events).toEqual(['open listen:0', 'open listen:1', 'close listen:0'])
    expect(client.open.map((l) => l.id)).toEqual(['listen:1'])
    // The same filter again: nothing to reopen.
    uris.now = ['b://2', 'a://1']
    await keeper.update()
    expect(client.listens).toHaveLength(2)
    // The last resource gone: back to the list changes only.
    uris.now = []
    await keeper.update()
    expect(client.open.map((l) => l.filter)).toEqual([{ toolsListChanged: true, resourcesListChanged: true }])
    keeper.stop()
  })

  it('drops a replaced listen’s copies of an event once the new one is acknowledged, and passes everything else', async () => {
    const client = new FakeClient()
    const uris = { now: ['a://1'] }
    const keeper = keeperOver(client, uris)
    await keeper.start()
    // One listen: its notifications, and those that name no listen, reach the SDK.
    expect(keeper.screen(notification('listen:0'))).toBe(false)
    expect(keeper.screen(notification(undefined))).toBe(false)
    expect(keeper.screen({ jsonrpc: '2.0', id: 5, result: {} })).toBe(false)
    uris.now = ['a://1', 'b://2']
    await keeper.update()
    // Both delivered the same update around the swap: the old one's copy is dropped.
    expect(keeper.screen(notification('listen:0'))).toBe(true)
    expect(keeper.screen(notification('listen:1'))).toBe(false)
    expect(keeper.screen(notification('listen:1', 'notifications/tools/list_changed'))).toBe(false)
    // An acknowledgement is always the SDK’s (it settles listen()).
    expect(
      keeper.screen({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: {}, _meta: { [ID]: 'listen:0' } },
      }),
    ).toBe(false)
    keeper.stop()
  })

  it('opens it again with backoff when the child ends it, and not once stopped', async () => {
    const client = new FakeClient()
    const keeper = keeperOver(client, { now: ['a://1'] })
    await keeper.start()
    client.listens[0]!.end('remote')
    // random() = 0: half the ceiling, 50 ms then 100 ms.
    // Not opened again at once: the first retry waits its 50 ms.
    await quietWindow(10)
    expect(client.listens).toHaveLength(1)
    await waitFor(() => client.listens.length === 2, 5_000, 'the listen opened again after the backoff')
    expect(client.listens).toHaveLength(2)
    expect(client.listens[1]!.filter).toEqual({
      toolsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: ['a://1'],
    })
    client.listens[1]!.end('graceful')
    await waitFor(() => client.listens.length === 3, 5_000, 'the listen opened a third time')
    expect(client.listens).toHaveLength(3)
    keeper.stop()
    expect(client.open).toEqual([])
    client.listens[2]!.end('remote')
    // Stopped: no retry may open a fourth listen (a retry would come within 200 ms).
    await quietWindow(200)
    expect(client.listens).toHaveLength(3)
    await keeper.update()
    expect(client.listens).toHaveLength(3)
  })

  it('tries again after a failed open (the update that asked rejects), and never again when the child does not know the method', async () => {
    const client = new FakeClient()
    const uris = { now: [] as string[] }
    const keeper = keeperOver(client, uris)
    await keeper.start()
    client.answers.push({ code: -32603, message: 'Subscription limit reached' })
    uris.now = ['a://1']
    await expect(keeper.update()).rejects.toThrow(/Subscription limit reached/)
    // The old listen stays open meanwhile; the retry brings the new one.
    expect(client.open.map((l) => l.id)).toEqual(['listen:0'])
    await waitFor(
      () => JSON.stringify(client.open.map((l) => l.filter.resourceSubscriptions)) === '[["a://1"]]',
      5_000,
      'the retried listen naming a://1, in place of the old one',
    )
    expect(client.open.map((l) => l.filter.resourceSubscriptions)).toEqual([['a://1']])
    keeper.stop()

    const old = new FakeClient()
    old.answers.push({ code: -32601, message: 'Method not found' })
    const refused = keeperOver(old, uris)
    await refused.start()
    uris.now = ['b://2']
    await refused.update()
    // Method not found: no retry may open a second listen (one would come within 100-200 ms).
    await quietWindow(150)
    expect(old.listens).toHaveLength(1)
    refused.stop()
  })
})

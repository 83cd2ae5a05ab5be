import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectToMyc, writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { quietWindow, waitFor } from '../helpers/wait-for.js'

/**
 * A 2025 client's resources/subscribe and list changes over a 2026-07-28
 * child, through `myc serve` (build/myc.cjs): the child has no
 * resources/subscribe, so myc keeps a `subscriptions/listen` open on it
 * that names the resources its clients subscribed to, and turns what
 * arrives on it into the 2025 notifications. The child (watched-resources)
 * reports what it wrote: the filters it acknowledged and the updates it
 * sent, so what myc asked of it is seen where it arrives.
 */

type Wire = Array<{
  acknowledged?: { toolsListChanged?: boolean; resourcesListChanged?: boolean; resourceSubscriptions?: string[] }
  updated?: string
}>

function text(result: unknown): string {
  return (result as { content: Array<{ text: string }> }).content[0]!.text
}

describe('a 2025 client watching a 2026 child through myc serve (build/myc.cjs)', () => {
  const config = writeConfig({
    mcpServers: {
      watch: {
        command: process.execPath,
        args: [fixtureServer('watched-resources')],
        era: 'auto',
        restart: { initialDelayMs: 100, maxDelayMs: 200 },
      },
    },
  })
  let client: Client
  const updates: Array<Record<string, unknown>> = []
  let toolsChanged = 0

  const wire = async (): Promise<Wire> =>
    JSON.parse(text(await client.callTool({ name: 'watch__wire', arguments: {} }))) as Wire
  const touch = async (uri: string) =>
    expect(text(await client.callTool({ name: 'watch__touch', arguments: { uri } }))).toBe(`touched ${uri}`)
  const acknowledged = (w: Wire) => w.filter((e) => e.acknowledged).map((e) => e.acknowledged)
  const sent = (w: Wire) => w.filter((e) => e.updated).map((e) => e.updated)

  beforeAll(async () => {
    ;({ client } = await connectToMyc(['--config', config], {
      setup: (c) => {
        c.setNotificationHandler(
          'notifications/resources/updated',
          (n) => void updates.push(n.params as Record<string, unknown>),
        )
        c.setNotificationHandler('notifications/tools/list_changed', () => void toolsChanged++)
      },
    }))
  }, 60_000)
  afterAll(async () => {
    await client?.close().catch(() => {})
  })

  it('the client speaks 2025 to myc, and myc listens to the child the 2026 way for the list changes it announces', async () => {
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25')
    expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true, listChanged: true })
    expect(acknowledged(await wire())).toEqual([{ toolsListChanged: true, resourcesListChanged: true }])
  })

  it('resources/subscribe answers {} and the child’s listen names the resource; an update reaches the client as notifications/resources/updated', async () => {
    expect(await client.subscribeResource({ uri: 'watch://a' })).toEqual({})
    expect(acknowledged(await wire()).at(-1)).toEqual({
      toolsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: ['watch://a'],
    })
    await touch('watch://a')
    await waitFor(() => updates.length === 1, 10_000, 'notifications/resources/updated')
    // Without the id of myc's own listen, which means nothing to the client.
    expect(updates[0]).toEqual({ uri: 'watch://a' })
    // A resource nobody subscribed to: the child does not even send it.
    await touch('watch://b')
    expect(sent(await wire())).toEqual(['watch://a'])
  })

  it('after resources/unsubscribe the child is no longer asked for the resource, and the client hears nothing of it', async () => {
    expect(await client.unsubscribeResource({ uri: 'watch://a' })).toEqual({})
    await waitFor(
      async () => acknowledged(await wire()).at(-1)?.resourceSubscriptions === undefined,
      5_000,
      'a listen without watch://a',
    )
    await touch('watch://a')
    expect(sent(await wire())).toEqual(['watch://a'])
    // No second notifications/resources/updated may reach the client.
    await quietWindow(300)
    expect(updates).toHaveLength(1)
  })

  it('a tool the child adds reaches the client with tools/list_changed, and can be called', async () => {
    expect(text(await client.callTool({ name: 'watch__grow', arguments: {} }))).toBe('grown')
    await waitFor(() => toolsChanged > 0, 10_000, 'notifications/tools/list_changed')
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('watch__grown')
    expect(text(await client.callTool({ name: 'watch__grown', arguments: {} }))).toBe('I was grown')
  })

  it('a child that crashed and was restarted is asked again for the resources still subscribed', async () => {
    await client.subscribeResource({ uri: 'watch://b' })
    await client.callTool({ name: 'watch__exit', arguments: {} }).catch(() => {})
    // The new process wrote nothing yet but its own listen's acknowledgement, which names watch://b.
    await waitFor(
      async () => {
        const w = await wire().catch(() => undefined)
        return w !== undefined && acknowledged(w).at(-1)?.resourceSubscriptions?.[0] === 'watch://b'
      },
      15_000,
      'the restarted child to listen for watch://b',
    )
    const before = updates.length
    await touch('watch://b')
    await waitFor(() => updates.length === before + 1, 10_000, 'the update from the restarted child')
    expect(updates.at(-1)).toEqual({ uri: 'watch://b' })
  })
})

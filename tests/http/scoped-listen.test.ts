import type { Server } from 'node:http'
import { Client, StreamableHTTPClientTransport, type McpSubscription } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { waitFor } from '../helpers/runtime.js'
import { quietWindow } from '../helpers/wait-for.js'
import { firstText, PEOPLE, peopleFace, perPersonEntry, scopedRuntime, type Person } from '../helpers/scoped.js'

const COOKIE = 'person://cookie'

/**
 * A 2026-07-28 client's `subscriptions/listen` stream on a `scope:
 * "principal"` server (docs/team.md, "Routing"): it carries its
 * credential's person, so its resources are asked of that person's own
 * instance, and that instance's updates reach that person's streams only.
 * Real child processes (tests/fixtures/servers/per-person.mjs, whose
 * `remember` tells its subscribers), real SDK 2.x clients speaking
 * 2026-07-28 over real HTTP.
 */
describe('a 2026 listen stream on a scoped server: its own person’s instance', () => {
  let runtime: Runtime
  let server: Server
  let url: string
  const clients = new Map<Person, Client>()
  const heard: Record<Person, number> = { alice: 0, bob: 0, carol: 0 }

  async function modernClient(person: Person): Promise<Client> {
    const client = new Client(
      { name: person, version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    )
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      if (n.params.uri === COOKIE) heard[person]++
    })
    const headers = { Authorization: `Bearer ${PEOPLE[person]}` }
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
    clients.set(person, client)
    return client
  }

  /** What the person's own instance was asked to report (2026-07-28 tools/call, which reaches that instance). */
  async function subscribed(person: Person): Promise<string[]> {
    const result = await clients.get(person)!.callTool({ name: 'gh__subscribed', arguments: {} })
    expect(result.isError, firstText(result)).toBeFalsy()
    return JSON.parse(firstText(result)) as string[]
  }

  beforeAll(async () => {
    ;({ runtime } = await scopedRuntime(
      { gh: perPersonEntry() },
      { kept: { local: { github: 'operator' }, alice: { github: 'alice' }, bob: { github: 'bob' } } },
    ))
    ;({ url, server } = await peopleFace(runtime))
    await modernClient('alice')
    await modernClient('bob')
  }, 30_000)
  afterAll(async () => {
    await Promise.all([...clients.values()].map((c) => c.close().catch(() => {})))
    server?.close()
    await runtime?.close()
  })

  it('asks the person’s own instance, whose updates reach that person’s stream only; a closed stream is let go of', async () => {
    const alice = clients.get('alice')!
    const bob = clients.get('bob')!
    const streams: McpSubscription[] = [
      await alice.listen({ resourceSubscriptions: [COOKIE] }),
      await bob.listen({ resourceSubscriptions: [COOKIE] }),
    ]
    for (const stream of streams) expect(stream.honoredFilter).toEqual({ resourceSubscriptions: [COOKIE] })
    // Each stream's subscription is made as the stream opens: each person's own process is asked.
    await waitFor(async () => (await subscribed('alice')).includes(COOKIE), 10_000, 'alice’s instance to be asked')
    await waitFor(async () => (await subscribed('bob')).includes(COOKIE), 10_000, 'bob’s instance to be asked')
    const instances = runtime.supervisor.instances().filter((i) => i.server === 'gh')
    expect(instances.map((i) => i.principal).sort()).toEqual(['alice', 'bob'])
    await alice.callTool({ name: 'gh__remember', arguments: { value: 'alice' } })
    await waitFor(() => heard.alice === 1, 5_000, 'alice’s update on her stream')
    await bob.callTool({ name: 'gh__remember', arguments: { value: 'bob' } })
    await waitFor(() => heard.bob === 1, 5_000, 'bob’s update on his stream')
    // What must not happen: either hearing of the other's process.
    await quietWindow(200)
    expect(heard).toEqual({ alice: 1, bob: 1, carol: 0 })
    // Closed, the stream no longer holds the resource: alice's process is let go of it; bob's still reports it.
    await streams[0]!.close()
    await waitFor(async () => (await subscribed('alice')).length === 0, 5_000, 'alice’s instance to be let go of it')
    expect(await subscribed('bob')).toEqual([COOKIE])
    await streams[1]!.close()
  }, 30_000)
})

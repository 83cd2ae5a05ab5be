import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { captureLogger, connectClient, fixtureEntry, startRuntime, waitFor } from '../helpers/runtime.js'
import { callOk as call, countingClient, perPersonEntry, scopedRuntime, whoami } from '../helpers/scoped.js'
import { quietWindow } from '../helpers/wait-for.js'

/**
 * What a client asked of a child's resources is the child's record, and
 * every start of that child asks for it again (docs/team.md, "Routing"):
 * a process killed and restarted by the supervisor still reports the
 * resources clients subscribed to. Real child processes, killed with
 * SIGKILL; clients over in-memory transports, as their person.
 */

const COOKIE = 'person://cookie'
/** Restarts come at once: what is tested is what the new process is asked, not the backoff. */
const restart = { initialDelayMs: 10 }

describe('what clients asked of a shared 2025 child outlives its process', () => {
  let runtime: Runtime
  const { logger, lines } = captureLogger()
  /** While this file exists, the child refuses resources/subscribe. */
  const refuse = path.join(mkdtempSync(path.join(tmpdir(), 'myc-refuse-')), 'refuse')
  beforeAll(async () => {
    const pp = fixtureEntry('per-person', { env: { REFUSE_SUBSCRIBE_IF: refuse }, restart })
    // `late`: started on the first list that shows it (lazy), after a client set the level.
    const late = fixtureEntry('per-person', { startup: 'lazy' })
    runtime = await startRuntime({ mcpServers: { pp, echo: fixtureEntry('echo', { restart }), late } }, logger)
  }, 30_000)
  afterAll(async () => {
    await runtime?.close()
  })

  /** Kills the child's process and waits for the supervisor to run a new one. */
  async function killAndRestart(server = 'pp'): Promise<void> {
    const child = runtime.supervisor.children.get(server)!
    const before = child.pid!
    process.kill(before, 'SIGKILL')
    await waitFor(
      () => child.state === 'RUNNING' && child.pid !== undefined && child.pid !== before,
      15_000,
      'the supervisor to restart the child',
    )
  }

  it('asks the restarted process again: an update after the restart reaches the subscribed client', async () => {
    const { client, updates } = await countingClient(runtime)
    await client.subscribeResource({ uri: COOKIE })
    await killAndRestart()
    expect(await call(client, 'pp__subscribed')).toEqual([COOKIE])
    await call(client, 'pp__remember', { value: 'after the restart' })
    await waitFor(() => updates() === 1, 5_000, 'the update after the restart')
    // Unsubscribed, it is let go of in the running process and out of the record: the next process is not asked.
    await client.unsubscribeResource({ uri: COOKIE })
    expect(await call(client, 'pp__subscribed')).toEqual([])
    await killAndRestart()
    expect(await call(client, 'pp__subscribed')).toEqual([])
    await client.close()
  }, 30_000)

  it('a restarted process that refuses a subscription is logged, naming the server and the resource, and serves on', async () => {
    const { client } = await countingClient(runtime)
    await client.subscribeResource({ uri: COOKIE })
    writeFileSync(refuse, '')
    await killAndRestart()
    expect(lines.filter((l) => l.includes('refused resources/subscribe'))).toEqual([
      expect.stringMatching(/^\[pp\] refused resources\/subscribe of person:\/\/cookie, .*no subscriptions here/),
    ])
    expect(await call(client, 'pp__whoami')).toEqual(
      expect.objectContaining({ pid: runtime.supervisor.children.get('pp')!.pid }),
    )
    expect(await call(client, 'pp__subscribed')).toEqual([])
    await client.close()
  }, 30_000)
  it('asks the restarted process for the log level a client set', async () => {
    const heard: string[] = []
    const { client } = await connectClient(runtime, {
      setup: (c) => c.setNotificationHandler('notifications/message', (n) => void heard.push(n.params.level)),
    })
    await client.setLoggingLevel('error')
    await killAndRestart('echo')
    await call(client, 'echo__log')
    // What must not happen: the new process sending an info message (nothing told it the level).
    await quietWindow(200)
    expect(heard).toEqual([])
    // The message does come when the level lets it through.
    await client.setLoggingLevel('info')
    await call(client, 'echo__log')
    await waitFor(() => heard.length === 1, 5_000, 'the info message')
    expect(heard).toEqual(['info'])
    await client.close()
  }, 30_000)

  it('keeps the level a client set for a child not running then, and sends it at its start', async () => {
    const { client } = await connectClient(runtime)
    expect(runtime.supervisor.children.get('late')!.state).toBe('STOPPED')
    await client.setLoggingLevel('critical')
    await client.listTools()
    expect(await call(client, 'late__level')).toBe('critical')
    await client.close()
  }, 30_000)
})

describe('an instance’s subscriptions outlive its process, and stay its person’s', () => {
  let runtime: Runtime
  beforeAll(async () => {
    ;({ runtime } = await scopedRuntime(
      {
        gh: perPersonEntry({ restart }),
        // A scoped server whose instances speak 2026-07-28: their own listen names the resources.
        watch: fixtureEntry('watched-resources', { era: 'modern', scope: 'principal', restart }),
      },
      { kept: { local: { github: 'operator' }, alice: { github: 'alice' }, bob: { github: 'bob' } } },
    ))
  }, 30_000)
  afterAll(async () => {
    await runtime?.close()
  })

  const pidOf = (server: string, person: string) =>
    runtime.supervisor.instances().find((i) => i.server === server && i.principal === person && i.state === 'RUNNING')
      ?.pid

  /** Kills `person`'s instance of `server` and waits for its pool to run a new one. */
  async function killInstance(server: string, person: string): Promise<void> {
    const before = pidOf(server, person)!
    expect(before).toBeGreaterThan(0)
    process.kill(before, 'SIGKILL')
    await waitFor(
      () => (pidOf(server, person) ?? before) !== before,
      15_000,
      `${person}’s instance of ${server} to be restarted`,
    )
  }

  it('a 2025 instance killed and restarted is asked again; only its subscriber hears, another’s restart leaves it be', async () => {
    const alice = await countingClient(runtime, { owner: 'alice' })
    const bob = await countingClient(runtime, { owner: 'bob' })
    await alice.client.subscribeResource({ uri: COOKIE })
    expect((await whoami(bob.client)).secret).toBe('bob')
    await killInstance('gh', 'alice')
    expect(await call(alice.client, 'gh__subscribed')).toEqual([COOKIE])
    expect(await call(bob.client, 'gh__subscribed')).toEqual([])
    await call(alice.client, 'gh__remember', { value: 'alice' })
    await waitFor(() => alice.updates() === 1, 5_000, 'alice’s update after her restart')
    await call(bob.client, 'gh__remember', { value: 'bob' })
    // Bob's instance restarting touches nothing of alice's subscription.
    await killInstance('gh', 'bob')
    expect(await call(bob.client, 'gh__subscribed')).toEqual([])
    await call(alice.client, 'gh__remember', { value: 'alice again' })
    await waitFor(() => alice.updates() === 2, 5_000, 'alice’s update after bob’s restart')
    // What must not happen: bob hearing of a change, his own (he holds nothing) or alice's.
    await quietWindow(200)
    expect([alice.updates(), bob.updates()]).toEqual([2, 0])
    await Promise.all([alice.client.close(), bob.client.close()])
  }, 60_000)

  it('an instance that speaks 2026 listens for its person’s resources, again after it is killed and restarted', async () => {
    type Wire = Array<{ acknowledged?: { resourceSubscriptions?: string[] } }>
    const listensFor = async (client: Client) =>
      ((await call(client, 'watch__wire')) as Wire).at(-1)?.acknowledged?.resourceSubscriptions ?? []
    const alice = await countingClient(runtime, { owner: 'alice' })
    const bob = await countingClient(runtime, { owner: 'bob' })
    await alice.client.subscribeResource({ uri: 'watch://a' })
    expect(await listensFor(alice.client)).toEqual(['watch://a'])
    await call(alice.client, 'watch__touch', { uri: 'watch://a' })
    await waitFor(() => alice.updates() === 1, 5_000, 'alice’s update from her instance')
    await call(bob.client, 'watch__touch', { uri: 'watch://a' })
    await killInstance('watch', 'alice')
    await waitFor(async () => (await listensFor(alice.client)).includes('watch://a'), 5_000, 'her new listen')
    await call(alice.client, 'watch__touch', { uri: 'watch://a' })
    await waitFor(() => alice.updates() === 2, 5_000, 'alice’s update after her restart')
    // What must not happen: bob hearing of watch://a, which he never subscribed to, from anyone's instance.
    await quietWindow(200)
    expect([alice.updates(), bob.updates()]).toEqual([2, 0])
    await Promise.all([alice.client.close(), bob.client.close()])
  }, 60_000)
})

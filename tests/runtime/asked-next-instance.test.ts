import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { slotOf } from '../../src/children/slot-records.js'
import type { SecretStore } from '../../src/oauth/secret-store.js'
import { connectClient, loadedConfig, waitFor } from '../helpers/runtime.js'
import { callOk as call, countingClient, perPersonEntry, scopedRuntime, whoami } from '../helpers/scoped.js'
import { quietWindow } from '../helpers/wait-for.js'

/**
 * What a person's clients asked of a scoped server (their resource
 * subscriptions, their log level) is kept with their slot, not with one
 * process (docs/team.md, "What a person asked outlives their instance"): an
 * instance stopped for good (idleMs, a changed secret, a reload) takes none
 * of it, and the next one started for them is asked for it. Real child processes (tests/fixtures/servers/per-person.mjs,
 * which reports what it was asked); clients over in-memory transports, as
 * their person or 2025 session.
 */

const COOKIE = 'person://cookie'
/**
 * Short, so that each wait for an idle stop is short (five in this file). An
 * instance starting or with a call in flight is busy, never idle, however
 * long a loaded machine takes; one stopped between two steps of a case is
 * started again for the next and asked the same, which is what these cases
 * check.
 */
const IDLE_MS = 300
const KEPT = {
  local: { github: 'operator' },
  alice: { github: 'alice' },
  bob: { github: 'bob' },
  carol: { github: 'c' },
}

/** Whether an instance of `server` runs (in any state) for `who`: a person, or a session's id. */
function hasInstance(runtime: Runtime, server: string, who: { person?: string; session?: string }): boolean {
  return runtime.supervisor
    .instances()
    .some(
      (i) =>
        i.server === server && (who.session !== undefined ? i.session === who.session : i.principal === who.person),
    )
}

/** Waits for `who`'s instance of `server` to be stopped by idleMs (no subscription keeps it). */
async function idleStopped(
  runtime: Runtime,
  server: string,
  who: { person?: string; session?: string },
): Promise<void> {
  await waitFor(
    () => !hasInstance(runtime, server, who),
    15_000,
    `${JSON.stringify(who)}'s instance to be stopped as idle`,
  )
}

describe('after an idle stop, a person’s next instance is asked for what their clients asked', () => {
  let runtime: Runtime
  beforeAll(async () => {
    ;({ runtime } = await scopedRuntime({ gh: perPersonEntry({ idleMs: IDLE_MS }) }, { kept: KEPT }))
  }, 30_000)
  afterAll(async () => {
    await runtime?.close()
  })

  it('sends the level a person set to their instance started later, and to one started after an idle stop; not to others', async () => {
    const alice = await connectClient(runtime, { owner: 'alice' })
    const bob = await connectClient(runtime, { owner: 'bob' })
    // Set while no instance runs for either: kept for the next one.
    await alice.client.setLoggingLevel('error')
    await bob.client.setLoggingLevel('debug')
    expect(runtime.supervisor.instances()).toEqual([])
    expect(await call(alice.client, 'gh__level')).toBe('error')
    expect(await call(bob.client, 'gh__level')).toBe('debug')
    await alice.client.setLoggingLevel('warning')
    const before = (await whoami(alice.client)).pid
    await idleStopped(runtime, 'gh', { person: 'alice' })
    expect((await whoami(alice.client)).pid).not.toBe(before)
    expect(await call(alice.client, 'gh__level')).toBe('warning')
    expect(await call(bob.client, 'gh__level')).toBe('debug')
    // The server's own process is the local person's: no one else's level reaches it.
    const local = await connectClient(runtime)
    expect(await call(local.client, 'gh__level')).toBe('unset')
    await Promise.all([alice.client.close(), bob.client.close(), local.client.close()])
  }, 60_000)

  it('asks the next instance for the subscriptions: an update reaches its subscriber only, the other person’s too', async () => {
    const alice = await countingClient(runtime, { owner: 'alice' })
    const bob = await countingClient(runtime, { owner: 'bob' })
    const carol = await countingClient(runtime, { owner: 'carol' })
    await alice.client.subscribeResource({ uri: COOKIE })
    await bob.client.subscribeResource({ uri: COOKIE })
    const before = (await whoami(alice.client)).pid
    // A subscription keeps no instance running.
    await idleStopped(runtime, 'gh', { person: 'alice' })
    expect((await whoami(alice.client)).pid).not.toBe(before)
    expect(await call(alice.client, 'gh__subscribed')).toEqual([COOKIE])
    await call(alice.client, 'gh__remember', { value: 'alice' })
    await waitFor(() => alice.updates() === 1, 5_000, 'alice’s update from her next instance')
    expect(await call(bob.client, 'gh__subscribed')).toEqual([COOKIE])
    await call(bob.client, 'gh__remember', { value: 'bob' })
    await waitFor(() => bob.updates() === 1, 5_000, 'bob’s update from his')
    // Carol asked nothing: her instance is asked nothing.
    expect(await call(carol.client, 'gh__subscribed')).toEqual([])
    await call(carol.client, 'gh__remember', { value: 'carol' })
    // What must not happen: anyone hearing of another's change.
    await quietWindow(200)
    expect([alice.updates(), bob.updates(), carol.updates()]).toEqual([1, 1, 0])
    await Promise.all([alice.client.close(), bob.client.close(), carol.client.close()])
  }, 60_000)

  it('forgets what a person let go of while no instance ran, and their record once their clients are gone', async () => {
    const carol = await connectClient(runtime, { owner: 'carol' })
    await carol.client.subscribeResource({ uri: COOKIE })
    await carol.client.setLoggingLevel('error')
    await idleStopped(runtime, 'gh', { person: 'carol' })
    await carol.client.unsubscribeResource({ uri: COOKIE })
    expect(await call(carol.client, 'gh__subscribed')).toEqual([])
    expect(await call(carol.client, 'gh__level')).toBe('error')
    await carol.client.close()
    // Nothing is held for her now: her record goes with her instance.
    await idleStopped(runtime, 'gh', { person: 'carol' })
    await waitFor(() => !runtime.supervisor.records.has('gh', slotOf({ person: 'carol' })), 5_000, 'her record to go')
  }, 60_000)
})

describe('after a changed secret, a person’s next instance is asked for what their clients asked', () => {
  let runtime: Runtime
  let secrets: (person: string) => SecretStore
  beforeAll(async () => {
    ;({ runtime, secrets } = await scopedRuntime({ gh: perPersonEntry() }, { kept: KEPT }))
  }, 30_000)
  afterAll(async () => {
    await runtime?.close()
  })

  it('subscriptions and the level go to the new instance; the other person’s instance runs on untouched', async () => {
    const alice = await countingClient(runtime, { owner: 'alice' })
    const bob = await countingClient(runtime, { owner: 'bob' })
    await alice.client.subscribeResource({ uri: COOKIE })
    await bob.client.subscribeResource({ uri: COOKIE })
    const [aliceBefore, bobBefore] = [await whoami(alice.client), await whoami(bob.client)]
    // The level reaches her running instance.
    await alice.client.setLoggingLevel('error')
    expect(await call(alice.client, 'gh__level')).toBe('error')
    expect((await whoami(alice.client)).pid).toBe(aliceBefore.pid)
    await secrets('alice').set('github', 'alice-renewed')
    const aliceAfter = await whoami(alice.client)
    expect([aliceAfter.secret, aliceAfter.pid === aliceBefore.pid]).toEqual(['alice-renewed', false])
    expect(await call(alice.client, 'gh__subscribed')).toEqual([COOKIE])
    expect(await call(alice.client, 'gh__level')).toBe('error')
    await call(alice.client, 'gh__remember', { value: 'alice' })
    await waitFor(() => alice.updates() === 1, 5_000, 'alice’s update from her new instance')
    expect((await whoami(bob.client)).pid).toBe(bobBefore.pid)
    expect(await call(bob.client, 'gh__level')).toBe('unset')
    await call(bob.client, 'gh__remember', { value: 'bob' })
    await waitFor(() => bob.updates() === 1, 5_000, 'bob’s update')
    await quietWindow(200)
    expect([alice.updates(), bob.updates()]).toEqual([1, 1])
    await Promise.all([alice.client.close(), bob.client.close()])
  }, 60_000)

  it('after a reload that changed the server, the person’s instance of the new entry is asked too', async () => {
    const alice = await countingClient(runtime, { owner: 'alice' })
    const bob = await countingClient(runtime, { owner: 'bob' })
    await alice.client.subscribeResource({ uri: COOKIE })
    const before = (await whoami(alice.client)).pid
    await runtime.applyConfig(loadedConfig({ mcpServers: { gh: perPersonEntry({ timeoutMs: 29_000 }) } }), 0)
    expect((await whoami(alice.client)).pid).not.toBe(before)
    expect(await call(alice.client, 'gh__subscribed')).toEqual([COOKIE])
    await call(alice.client, 'gh__remember', { value: 'alice' })
    await waitFor(() => alice.updates() === 1, 5_000, 'alice’s update from her instance of the new entry')
    expect(await call(bob.client, 'gh__subscribed')).toEqual([])
    await Promise.all([alice.client.close(), bob.client.close()])
  }, 60_000)
})

describe('a 2025 session’s next instance of a session server is asked for what the session asked', () => {
  let runtime: Runtime
  beforeAll(async () => {
    ;({ runtime } = await scopedRuntime({ ses: perPersonEntry({ scope: 'session', idleMs: IDLE_MS }) }, { kept: KEPT }))
  }, 30_000)
  afterAll(async () => {
    await runtime?.close()
  })

  it('keeps a 2025 session’s subscription for its next instance of a session server, and forgets it with the session', async () => {
    const one = await countingClient(runtime, { owner: 'alice', sessionId: 'session-one' })
    const two = await countingClient(runtime, { owner: 'alice', sessionId: 'session-two' })
    await one.client.subscribeResource({ uri: COOKIE })
    await call(two.client, 'ses__whoami')
    await idleStopped(runtime, 'ses', { session: 'session-one' })
    expect(await call(one.client, 'ses__subscribed')).toEqual([COOKIE])
    // The same person's other session is its own slot: asked nothing.
    expect(await call(two.client, 'ses__subscribed')).toEqual([])
    await call(one.client, 'ses__remember', { value: 'one' })
    await waitFor(() => one.updates() === 1, 5_000, 'the session’s update from its next instance')
    await one.client.close()
    await waitFor(() => !runtime.supervisor.records.has('ses', slotOf({ person: 'alice', session: 'session-one' })))
    expect(two.updates()).toBe(0)
    await two.client.close()
  }, 60_000)
})

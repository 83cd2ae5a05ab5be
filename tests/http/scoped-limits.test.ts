import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import type { Server } from 'node:http'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterEach, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { waitFor } from '../helpers/runtime.js'
import { quietWindow } from '../helpers/wait-for.js'
import {
  alive,
  firstText,
  peopleFace,
  perPersonEntry,
  personClient,
  scopedRuntime,
  whoami,
  type Person,
} from '../helpers/scoped.js'

const KEPT = {
  local: { github: 'operator' },
  alice: { github: 'a' },
  bob: { github: 'b' },
  carol: { github: 'c' },
}

/** A file not there yet, whose path a `gh__wait` call waits on: the call answers once `release` writes it. */
function releaseFile(): { path: string; release: () => void } {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'myc-release-')), 'done')
  return { path: file, release: () => writeFileSync(file, '') }
}

/**
 * `idleMs` and `maxInstances` of a scoped server (docs/team.md): an idle
 * instance stops, one in use never does; at the cap the least recently used
 * idle one makes room, and with none idle the call is refused at once, as
 * temporary, naming the cap.
 */
describe('a scoped server’s idleMs and maxInstances', () => {
  let runtime: Runtime | undefined
  let server: Server | undefined
  const open: Client[] = []
  const people = async (entry: Record<string, unknown>) => {
    ;({ runtime } = await scopedRuntime({ gh: perPersonEntry(entry) }, { kept: KEPT }))
    let url: string
    ;({ url, server } = await peopleFace(runtime))
    const client = async (person: Person) => {
      const { client: c } = await personClient(url, person)
      open.push(c)
      return c
    }
    return { alice: await client('alice'), bob: await client('bob'), carol: await client('carol') }
  }
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close().catch(() => {})))
    server?.close()
    await runtime?.close()
  })

  it('stops an instance idle for idleMs, and not one with a call in flight', async () => {
    const { alice, bob } = await people({ idleMs: 400 })
    const { pid: a, home } = await whoami(alice)
    // Bob's first call lasts until the test has looked: his instance is in use from its start,
    // however long the machine takes between two calls.
    const done = releaseFile()
    const long = bob.callTool({ name: 'gh__wait', arguments: { until: done.path } })
    const bobs = () => runtime!.supervisor.instances().find((i) => i.principal === 'bob' && i.pid !== null)?.pid
    await waitFor(() => bobs() !== undefined, 10_000, 'bob’s instance to start')
    const b = bobs()!
    await waitFor(() => !alive(a), 10_000, 'alice’s idle instance to stop')
    // Its folders go with it (persist is off).
    await waitFor(() => !existsSync(path.dirname(home!)), 5_000, 'alice’s instance folder to be removed')
    // What must not happen: bob's instance stopped (or asked to stop) while his call runs, though its
    // start is now longer ago than idleMs and a sweep: an instance stopping leaves the list at once.
    await quietWindow(600)
    expect(bobs()).toBe(b)
    expect(alive(b)).toBe(true)
    done.release()
    expect(firstText(await long)).toBe(`waited ${b}`)
    await waitFor(() => !alive(b), 10_000, 'bob’s instance to stop once idle')
    expect(runtime!.supervisor.instances()).toEqual([])
    // The server's own process (the tool list, the local person's) is no instance: idleMs never stops it.
    expect(alive(runtime!.supervisor.children.get('gh')!.pid!)).toBe(true)
  }, 30_000)

  it('keeps a stopped instance’s folders with persist: its HOME is there for the person’s next one', async () => {
    const { alice } = await people({ idleMs: 300, persist: true })
    const first = await whoami(alice)
    await alice.callTool({ name: 'gh__remember', arguments: { value: 'kept' } })
    // On a busy machine the first instance may idle out before `remember`, which then starts
    // another: wait for every instance of hers to stop, not only the first.
    await waitFor(() => !alive(first.pid), 10_000, 'the idle instance to stop')
    await waitFor(() => runtime!.supervisor.instances().length === 0, 10_000, 'every instance to stop')
    expect(existsSync(path.join(first.home!, 'cookie'))).toBe(true)
    const recalled = JSON.parse(firstText(await alice.callTool({ name: 'gh__recall', arguments: {} })))
    expect(recalled).toEqual({ memory: null, file: 'kept' })
  }, 30_000)

  it('makes room at the cap by stopping the least recently used idle instance; refuses at once when none is idle', async () => {
    const { alice, bob, carol } = await people({ maxInstances: 2 })
    const a = (await whoami(alice)).pid
    const b = (await whoami(bob)).pid
    // Carol's first call: alice's (used longest ago, idle) makes room; bob's stays.
    const c = (await whoami(carol)).pid
    await waitFor(() => !alive(a), 5_000, 'alice’s instance to stop')
    expect(alive(b) && alive(c)).toBe(true)
    // Both busy (until the test has looked): alice is told at once, as temporary, naming the cap.
    const done = releaseFile()
    const busy = [
      bob.callTool({ name: 'gh__wait', arguments: { until: done.path } }),
      carol.callTool({ name: 'gh__wait', arguments: { until: done.path } }),
    ]
    await waitFor(
      () => runtime!.supervisor.instances().every((i) => i.inFlight > 0),
      5_000,
      'both calls to be in flight',
    )
    const refused = await alice.callTool({ name: 'gh__whoami', arguments: {} })
    expect(refused.isError).toBe(true)
    expect(firstText(refused)).toBe('gh: every instance is busy (maxInstances 2); retry shortly')
    done.release()
    expect((await Promise.all(busy)).map(firstText)).toEqual([`waited ${b}`, `waited ${c}`])
    // Once one is idle again, alice gets hers.
    expect((await whoami(alice)).secret).toBe('a')
    // The cap counts instances only: the server's own process never made room.
    expect(alive(runtime!.supervisor.children.get('gh')!.pid!)).toBe(true)
    expect(runtime!.supervisor.instances()).toHaveLength(2)
  }, 30_000)
})

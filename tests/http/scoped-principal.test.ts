import type { Server } from 'node:http'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { modernRequest } from '../helpers/http.js'
import { waitFor } from '../helpers/runtime.js'
import { quietWindow } from '../helpers/wait-for.js'
import {
  alive,
  firstText,
  PEOPLE,
  peopleFace,
  perPersonEntry,
  personClient,
  instancePeople,
  scopedRuntime,
  whoami,
  type Person,
} from '../helpers/scoped.js'
import type { SecretStore } from '../../src/oauth/secret-store.js'

/**
 * A server with `scope: "principal"` behind the HTTP face (docs/team.md):
 * one process per person, each with its own HOME and the person's own
 * secret in its environment; a person with no secret kept gets the error
 * naming it, never someone else's value nor the process environment's. Real
 * child processes (tests/fixtures/servers/per-person.mjs), real SDK clients
 * over real HTTP.
 */
describe('scope "principal": one process per person, over HTTP', () => {
  let runtime: Runtime
  let folder: string
  let secrets: (person: string) => SecretStore
  let url: string
  let server: Server
  const clients = new Map<Person, Client>()
  const client = async (person: Person) => {
    let c = clients.get(person)
    if (!c) clients.set(person, (c = (await personClient(url, person)).client))
    return c
  }

  beforeAll(async () => {
    ;({ runtime, folder, secrets } = await scopedRuntime(
      { gh: perPersonEntry() },
      {
        // The process environment has a value of the same name: no one may get it.
        env: { GITHUB_TOKEN: 'from-the-environment' },
        // The operator's own (the server's own process lists the tools), alice's and bob's; carol has none.
        kept: {
          local: { github: 'operator-token' },
          alice: { github: 'alice-token' },
          bob: { github: 'bob-token' },
        },
      },
    ))
    ;({ url, server } = await peopleFace(runtime))
    await waitFor(() => runtime.supervisor.children.get('gh')?.state === 'RUNNING', 10_000, 'the server’s own process')
  }, 30_000)
  afterAll(async () => {
    await Promise.all([...clients.values()].map((c) => c.close().catch(() => {})))
    server?.close()
    await runtime?.close()
  })

  it('gives two people a process each: different pids and HOMEs, each with their own secret only', async () => {
    const [a, b] = await Promise.all([whoami(await client('alice')), whoami(await client('bob'))])
    expect(a.secret).toBe('alice-token')
    expect(b.secret).toBe('bob-token')
    expect(a.pid).not.toBe(b.pid)
    expect(a.home).not.toBe(b.home)
    // Their folders are under myc's state, not the operator's process's, and each instance runs apart from it.
    const own = runtime.supervisor.children.get('gh')!.pid
    expect([a.pid, b.pid]).not.toContain(own)
    for (const w of [a, b]) {
      expect(w.home!.startsWith(path.join(folder, 'instances', 'gh'))).toBe(true)
      expect(w.tmp!.startsWith(path.dirname(w.home!))).toBe(true)
    }
    // The same person again: the same process.
    expect((await whoami(await client('alice'))).pid).toBe(a.pid)
    expect(instancePeople(runtime)).toEqual(['alice', 'bob'])
  }, 30_000)

  it('fails the calls of a person with no secret, naming it and the command that sets it; never a fallback', async () => {
    const refused = await (await client('carol')).callTool({ name: 'gh__whoami', arguments: {} })
    expect(refused.isError).toBe(true)
    expect(firstText(refused)).toMatch(/"github"/)
    expect(firstText(refused)).toMatch(/myc secrets set github --principal carol/)
    expect(firstText(refused)).not.toMatch(/from-the-environment|operator-token|alice-token|bob-token/)
    // No process was started for her.
    expect(runtime.supervisor.instances().some((i) => i.principal === 'carol')).toBe(false)
  })

  it('serves a person’s 2026-07-28 requests from the same process as their session’s', async () => {
    const a = await whoami(await client('alice'))
    const modern = await modernRequest(
      url,
      'tools/call',
      { name: 'gh__whoami', arguments: {} },
      { token: PEOPLE.alice },
    )
    expect(JSON.parse(firstText(modern.answer.result)).pid).toBe(a.pid)
  })

  it('keeps a browser-like state per person: nothing crosses', async () => {
    const a = await client('alice')
    const b = await client('bob')
    await a.callTool({ name: 'gh__remember', arguments: { value: 'alice-cookie' } })
    await b.callTool({ name: 'gh__remember', arguments: { value: 'bob-cookie' } })
    expect(JSON.parse(firstText(await a.callTool({ name: 'gh__recall', arguments: {} })))).toEqual({
      memory: 'alice-cookie',
      file: 'alice-cookie',
    })
    expect(JSON.parse(firstText(await b.callTool({ name: 'gh__recall', arguments: {} })))).toEqual({
      memory: 'bob-cookie',
      file: 'bob-cookie',
    })
  })

  it('restarts one person’s crashed process while another’s calls run untouched, both at once', async () => {
    const a = await client('alice')
    const b = await client('bob')
    const before = await whoami(a)
    const bobs = await whoami(b)
    // Bob calls again and again while alice's process crashes and comes back.
    let crashed = false
    const bobCalls = (async () => {
      const pids: number[] = []
      while (!crashed || pids.length < 10) {
        const r = await b.callTool({ name: 'gh__wait', arguments: { ms: 20 } })
        expect(r.isError, firstText(r)).toBeFalsy()
        pids.push(Number(firstText(r).split(' ')[1]))
      }
      return pids
    })()
    const crash = await a.callTool({ name: 'gh__crash', arguments: {} })
    crashed = true
    expect(crash.isError).toBe(true)
    await waitFor(() => !alive(before.pid), 5_000, 'alice’s process to be gone')
    await waitFor(
      () => runtime.supervisor.instances().some((i) => i.principal === 'alice' && i.state === 'RUNNING'),
      15_000,
      'alice’s process to be restarted',
    )
    const after = await whoami(a)
    expect(after.pid).not.toBe(before.pid)
    expect(after.secret).toBe('alice-token')
    expect(new Set(await bobCalls)).toEqual(new Set([bobs.pid]))
  }, 30_000)

  it('tells an instance’s messages outside any call to its person only', async () => {
    const a = await client('alice')
    const b = await client('bob')
    const heard: Record<Person, string[]> = { alice: [], bob: [], carol: [] }
    for (const [who, c] of [
      ['alice', a],
      ['bob', b],
    ] as const) {
      c.setNotificationHandler('notifications/tools/list_changed', () => void heard[who].push('tools/list_changed'))
      c.setNotificationHandler('notifications/message', (n) => void heard[who].push(`log ${String(n.params.data)}`))
      await c.setLoggingLevel('info')
    }
    const pid = (await whoami(a)).pid
    await a.callTool({ name: 'gh__later', arguments: {} })
    await waitFor(() => heard.alice.length >= 2, 5_000, 'alice to hear her process')
    expect(heard.alice).toEqual(expect.arrayContaining([`log from ${pid}`, 'tools/list_changed']))
    // What must not happen: bob hearing alice's process.
    await quietWindow(200)
    expect(heard.bob).toEqual([])
  })

  it('routes prompts, resource reads, completions and subscriptions to the person’s own process', async () => {
    const a = await client('alice')
    const b = await client('bob')
    const [alicePid, bobPid] = [(await whoami(a)).pid, (await whoami(b)).pid]
    const prompt = await a.getPrompt({ name: 'gh__whose' })
    expect((prompt.messages[0]!.content as { text: string }).text).toBe(`pid ${alicePid}`)
    const read = await b.readResource({ uri: 'person://cookie' })
    expect((read.contents[0] as { text: string }).text.startsWith(`${bobPid}:`)).toBe(true)
    const completed = await a.complete({
      ref: { type: 'ref/prompt', name: 'gh__whose' },
      argument: { name: 'of', value: '' },
    })
    expect(completed.completion.values).toEqual([String(alicePid)])
    const updated: Record<'alice' | 'bob', number> = { alice: 0, bob: 0 }
    a.setNotificationHandler('notifications/resources/updated', () => void updated.alice++)
    b.setNotificationHandler('notifications/resources/updated', () => void updated.bob++)
    await a.subscribeResource({ uri: 'person://cookie' })
    await b.subscribeResource({ uri: 'person://cookie' })
    await a.callTool({ name: 'gh__remember', arguments: { value: 'alice-again' } })
    await waitFor(() => updated.alice === 1, 5_000, 'alice’s update')
    await b.callTool({ name: 'gh__remember', arguments: { value: 'bob-again' } })
    await waitFor(() => updated.bob === 1, 5_000, 'bob’s update')
    // What must not happen: either hearing of the other's change.
    await quietWindow(200)
    expect(updated).toEqual({ alice: 1, bob: 1 })
  })

  it('starts a new process with a person’s changed secret', async () => {
    const a = await client('alice')
    const before = await whoami(a)
    await secrets('alice').set('github', 'alice-token-2')
    const after = await whoami(a)
    expect(after.secret).toBe('alice-token-2')
    expect(after.pid).not.toBe(before.pid)
    await waitFor(() => !alive(before.pid), 5_000, 'the old process to be gone')
    await secrets('alice').set('github', 'alice-token')
  })
})

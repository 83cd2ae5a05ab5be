import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client, StreamableHTTPClientTransport, type McpSubscription } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { freePort } from '../helpers/http.js'
import { quietWindow, waitFor } from '../helpers/wait-for.js'

/**
 * subscriptions/listen (MCP 2026-07-28) served by `myc serve` to 2026
 * clients, over HTTP and over stdio, per principal (build/myc.cjs). One
 * myc serves both faces (`--http … --stdio`): the stdio client is the
 * launch's principal (guest, skills common + watcher: echo and the watch
 * child), the HTTP tokens are alice (the same role and skills) and bob
 * (developer, common + writer: echo and the grow child, not watch). So a
 * change bob makes to what only he sees happens in the same myc as
 * alice's streams, which must hear nothing of it. The children: echo (a
 * 2025 child with resources/subscribe, which announces an update 50 ms
 * after a subscribe), grow (list-changing, 2025) and watch
 * (watched-resources, a 2026 child: myc's own listen on it names the
 * resources its clients want, and it reports what it acknowledged).
 */

const MODERN = '2026-07-28'
const TOKENS = {
  MYC_LISTEN_ALICE: 'alice-listen-0123456789abcdef0123456789',
  MYC_LISTEN_BOB: 'bob-listen-0123456789abcdef0123456789ab',
  MYC_LISTEN_SCRAPER: 'scraper-listen-0123456789abcdef012345678',
}
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId'

interface Heard {
  method: string
  params: Record<string, unknown>
}

/** A 2026 client and what arrived on its listen streams. */
interface Listener {
  client: Client
  heard: Heard[]
  /** What arrived on one subscription. */
  on(sub: McpSubscription, method?: string): Heard[]
}

const ids = new WeakMap<McpSubscription, unknown>()

function listener(client: Client): Listener {
  const heard: Heard[] = []
  for (const method of [
    'notifications/tools/list_changed',
    'notifications/prompts/list_changed',
    'notifications/resources/list_changed',
    'notifications/resources/updated',
  ] as const) {
    client.setNotificationHandler(
      method,
      (n) => void heard.push({ method, params: (n.params ?? {}) as Record<string, unknown> }),
    )
  }
  return {
    client,
    heard,
    on: (sub, method) =>
      heard.filter(
        (h) =>
          (h.params._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID] === ids.get(sub) &&
          (method === undefined || h.method === method),
      ),
  }
}

/** Opens a listen and remembers its subscription id (the id of its acknowledgement, which the first notification on it will carry). */
async function listen(l: Listener, filter: Parameters<Client['listen']>[0]): Promise<McpSubscription> {
  const sub = await l.client.listen(filter)
  // The SDK keys subscriptions by the listen request's id ('listen:N'), and every notification on it carries that id.
  const state = (l.client as unknown as { _listenState: Map<unknown, unknown> })._listenState
  const id = [...state.keys()].at(-1)
  ids.set(sub, id)
  return sub
}

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools(undefined, { cacheMode: 'bypass' })).tools.map((t) => t.name)
}

function text(result: unknown): string {
  return (result as { content: Array<{ text: string }> }).content[0]!.text
}

function skill(dir: string, name: string, roles: string[], tools: string[]): void {
  mkdirSync(path.join(dir, name), { recursive: true })
  writeFileSync(
    path.join(dir, name, 'SKILL.md'),
    `---\nname: ${name}\ndescription: ${name}\nallowedRoles: ${JSON.stringify(roles)}\nallowedTools: ${JSON.stringify(tools)}\n---\n${name} instructions.\n`,
  )
}

type Wire = Array<{ acknowledged?: { resourceSubscriptions?: string[] }; updated?: string }>

describe('subscriptions/listen for 2026 clients, per principal, over HTTP and stdio (build/myc.cjs)', () => {
  let url: string
  let stdio: Listener
  let alice: Listener
  let bob: Listener
  const open: McpSubscription[] = []
  const keep = (s: McpSubscription) => (open.push(s), s)

  /** What the watch child acknowledged (its listen's filters), asked through the stdio client (which sees it). */
  const acknowledged = async () =>
    (JSON.parse(text(await stdio.client.callTool({ name: 'watch__wire', arguments: {} }))) as Wire)
      .filter((e) => e.acknowledged)
      .map((e) => e.acknowledged!)

  beforeAll(async () => {
    requireBundle()
    const skills = mkdtempSync(path.join(tmpdir(), 'myc-listen-skills-'))
    skill(skills, 'common', ['*'], ['echo:*'])
    skill(skills, 'watcher', ['guest'], ['watch:*'])
    skill(skills, 'writer', ['developer'], ['grow:*'])
    const config = writeConfig({
      mcpServers: {
        echo: { command: process.execPath, args: [fixtureServer('echo')] },
        grow: { command: process.execPath, args: [fixtureServer('list-changing')] },
        watch: { command: process.execPath, args: [fixtureServer('watched-resources')], era: 'auto' },
      },
      skills: { dirs: [skills] },
      roles: { default: 'guest' },
      http: {
        tokens: [
          { env: 'MYC_LISTEN_ALICE', role: 'guest', skills: ['common', 'watcher'], name: 'alice' },
          { env: 'MYC_LISTEN_BOB', role: 'developer', skills: ['common', 'writer'], name: 'bob' },
        ],
        metricsToken: { env: 'MYC_LISTEN_SCRAPER' },
      },
    })
    const port = await freePort()
    url = `http://127.0.0.1:${port}/mcp`
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        bundle,
        'serve',
        '--http',
        `127.0.0.1:${port}`,
        '--stdio',
        '--config',
        config,
        '--role',
        'guest',
        '--skills',
        'common,watcher',
      ],
      env: { ...(process.env as Record<string, string>), ...TOKENS },
      stderr: 'pipe',
    })
    const onStdio = new Client(
      { name: 'listen-stdio', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    )
    stdio = listener(onStdio)
    await onStdio.connect(transport)
    const overHttp = async (token: string, name: string) => {
      const client = new Client({ name, version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } })
      const l = listener(client)
      await waitFor(
        () =>
          client
            .connect(
              new StreamableHTTPClientTransport(new URL(url), {
                requestInit: { headers: { Authorization: `Bearer ${token}` } },
              }),
            )
            .then(
              () => true,
              () => false,
            ),
        20_000,
        'myc serve --http to answer',
      )
      return l
    }
    alice = await overHttp(TOKENS.MYC_LISTEN_ALICE, 'alice')
    bob = await overHttp(TOKENS.MYC_LISTEN_BOB, 'bob')
  }, 60_000)

  afterAll(async () => {
    await Promise.all(open.map((s) => s.close().catch(() => {})))
    await Promise.all([alice, bob].map((l) => l?.client.close().catch(() => {})))
    await stdio?.client.close().catch(() => {})
  })

  it('advertises list changes and resource subscriptions to 2026 clients on both faces', async () => {
    for (const l of [stdio, alice]) {
      expect(l.client.getNegotiatedProtocolVersion?.()).toBe(MODERN)
      expect(l.client.getServerCapabilities()).toMatchObject({
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { listChanged: true, subscribe: true },
      })
    }
    expect(await toolNames(stdio.client)).toEqual(expect.arrayContaining(['echo__echo', 'watch__touch']))
    expect(await toolNames(alice.client)).not.toContain('grow__grow')
    expect(await toolNames(bob.client)).toEqual(expect.arrayContaining(['echo__echo', 'grow__grow']))
    expect(await toolNames(bob.client)).not.toContain('watch__touch')
  })

  it('a child grows a tool its principal sees: the listening client hears tools/list_changed on that stream and sees it; the principals who cannot see it hear nothing', async () => {
    const b = keep(await listen(bob, { toolsListChanged: true }))
    const a = keep(await listen(alice, { toolsListChanged: true }))
    const s = keep(await listen(stdio, { toolsListChanged: true }))
    expect(b.honoredFilter).toEqual({ toolsListChanged: true })
    expect(s.honoredFilter).toEqual({ toolsListChanged: true })
    // Over HTTP: bob's grow child grows a tool only bob sees.
    expect(text(await bob.client.callTool({ name: 'grow__grow', arguments: { name: 'sprout' } }))).toBe('added sprout')
    await waitFor(() => bob.on(b, 'notifications/tools/list_changed').length === 1, 10_000, "bob's tools/list_changed")
    expect(await toolNames(bob.client)).toContain('grow__sprout')
    // Alice and the stdio client, who cannot see grow, must hear nothing of it.
    await quietWindow(500)
    // Alice (HTTP) and the launch's principal (stdio) cannot see grow: not a word of it.
    expect(alice.heard).toEqual([])
    expect(stdio.heard).toEqual([])
    expect(bob.on(b)).toHaveLength(1)

    // Over stdio: the watch child (a 2026 child) grows a tool the launch's principal sees; alice sees it too, bob does not.
    expect(text(await stdio.client.callTool({ name: 'watch__grow', arguments: {} }))).toBe('grown')
    await waitFor(
      () => stdio.on(s, 'notifications/tools/list_changed').length === 1,
      10_000,
      "the stdio client's tools/list_changed",
    )
    expect(await toolNames(stdio.client)).toContain('watch__grown')
    await waitFor(
      () => alice.on(a, 'notifications/tools/list_changed').length === 1,
      10_000,
      "alice's tools/list_changed",
    )
    // Bob must hear nothing of watch's new tool, and the stdio client no second word.
    await quietWindow(500)
    expect(bob.on(b)).toHaveLength(1)
    expect(stdio.heard).toHaveLength(1)
    await Promise.all([a.close(), b.close(), s.close()])
  })

  it('a listen hears only of the kinds it names: a change of a list it did not ask for is not sent', async () => {
    const b = keep(await listen(bob, { promptsListChanged: true }))
    expect(b.honoredFilter).toEqual({ promptsListChanged: true })
    // bob's own tools change, but this stream asked for prompts only.
    expect(text(await bob.client.callTool({ name: 'grow__grow', arguments: { name: 'shoot' } }))).toBe('added shoot')
    await waitFor(async () => (await toolNames(bob.client)).includes('grow__shoot'), 5_000, 'grow__shoot')
    // The prompts-only stream must not hear of the tools change.
    await quietWindow(500)
    expect(bob.on(b)).toEqual([])
    await b.close()
  })

  it('resource subscriptions: a URI of a server the view does not reach is left out of the honoured filter; updates of the others arrive, tagged with the subscription', async () => {
    // bob cannot see watch: watch://a is left out, as an unknown URI is; echo://static (a 2025 child with resources/subscribe) is kept.
    const b = keep(await listen(bob, { resourceSubscriptions: ['watch://a', 'echo://static', 'nope://never'] }))
    expect(b.honoredFilter).toEqual({ resourceSubscriptions: ['echo://static'] })
    // The echo child announces an update 50 ms after it is subscribed.
    await waitFor(() => bob.on(b, 'notifications/resources/updated').length === 1, 10_000, "bob's echo://static update")
    expect(bob.on(b, 'notifications/resources/updated')[0]!.params.uri).toBe('echo://static')

    // Over stdio, from the 2026 child: myc's listen on it now names watch://a.
    const s = keep(await listen(stdio, { resourceSubscriptions: ['watch://a', 'nope://never'] }))
    expect(s.honoredFilter).toEqual({ resourceSubscriptions: ['watch://a'] })
    await waitFor(
      async () => (await acknowledged()).at(-1)?.resourceSubscriptions?.includes('watch://a') === true,
      10_000,
      'the watch child asked for watch://a',
    )
    // …and over HTTP, alice too.
    const a = keep(await listen(alice, { resourceSubscriptions: ['watch://a'] }))
    expect(a.honoredFilter).toEqual({ resourceSubscriptions: ['watch://a'] })
    expect(text(await stdio.client.callTool({ name: 'watch__touch', arguments: { uri: 'watch://a' } }))).toBe(
      'touched watch://a',
    )
    await waitFor(
      () =>
        stdio.on(s, 'notifications/resources/updated').length === 1 &&
        alice.on(a, 'notifications/resources/updated').length === 1,
      10_000,
      'the watch://a updates',
    )
    expect(stdio.on(s, 'notifications/resources/updated')[0]!.params.uri).toBe('watch://a')
    // A resource nobody listens for reaches nobody.
    expect(text(await stdio.client.callTool({ name: 'watch__touch', arguments: { uri: 'watch://b' } }))).toBe(
      'touched watch://b',
    )
    // watch://b has no listener: no update may arrive on any stream.
    await quietWindow(300)
    expect(stdio.on(s, 'notifications/resources/updated')).toHaveLength(1)
    expect(bob.on(b, 'notifications/resources/updated')).toHaveLength(1)
    // Closing the listens lets go of the child's resource: its listen no longer names watch://a.
    await Promise.all([s.close(), a.close(), b.close()])
    await waitFor(
      async () => (await acknowledged()).at(-1)?.resourceSubscriptions === undefined,
      10_000,
      'the watch child no longer asked for watch://a',
    )
    expect(text(await stdio.client.callTool({ name: 'watch__touch', arguments: { uri: 'watch://a' } }))).toBe(
      'touched watch://a',
    )
    // The closed listens must get no update of watch://a.
    await quietWindow(300)
    expect(stdio.on(s, 'notifications/resources/updated')).toHaveLength(1)
    expect(alice.on(a, 'notifications/resources/updated')).toHaveLength(1)
  })

  it('after a listen closes, a new one works on both faces (nothing of the old one is left behind)', async () => {
    const s = keep(await listen(stdio, { resourceSubscriptions: ['watch://b'], toolsListChanged: true }))
    const a = keep(await listen(alice, { resourceSubscriptions: ['watch://b'] }))
    expect(s.honoredFilter).toEqual({ toolsListChanged: true, resourceSubscriptions: ['watch://b'] })
    await waitFor(
      async () => JSON.stringify((await acknowledged()).at(-1)?.resourceSubscriptions) === '["watch://b"]',
      10_000,
      'the watch child asked for watch://b only',
    )
    expect(text(await stdio.client.callTool({ name: 'watch__touch', arguments: { uri: 'watch://b' } }))).toBe(
      'touched watch://b',
    )
    await waitFor(
      () =>
        stdio.on(s, 'notifications/resources/updated').length === 1 &&
        alice.on(a, 'notifications/resources/updated').length === 1,
      10_000,
      'the watch://b updates',
    )
    await a.close()
    // alice's stream is gone, the stdio one still wants watch://b: the child still names it.
    // (myc must not send the child a listen without watch://b meanwhile.)
    await quietWindow(300)
    expect((await acknowledged()).at(-1)?.resourceSubscriptions).toEqual(['watch://b'])
    await s.close()
    await waitFor(
      async () => (await acknowledged()).at(-1)?.resourceSubscriptions === undefined,
      10_000,
      'the watch child no longer asked for watch://b',
    )
  })

  it('one credential holds at most 16 listen streams (429 beyond), counted in myc_http_listen_streams_active; closing one frees its place', async () => {
    /** A raw listen of bob's: its HTTP status, and the controller that closes it (the stream stays open until then). */
    const rawListen = async () => {
      const controller = new AbortController()
      const envelope = {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': {},
      }
      const response = await fetch(url, {
        method: 'POST',
        signal: controller.signal,
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': MODERN,
          'Mcp-Method': 'subscriptions/listen',
          Authorization: `Bearer ${TOKENS.MYC_LISTEN_BOB}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'subscriptions/listen',
          params: { notifications: { toolsListChanged: true }, _meta: envelope },
        }),
      })
      if (response.status !== 200) await response.text()
      return { status: response.status, close: () => controller.abort() }
    }
    const gauge = async () =>
      Number(
        /^myc_http_listen_streams_active (\d+)$/m.exec(
          await (
            await fetch(new URL('/metrics', url), { headers: { Authorization: `Bearer ${TOKENS.MYC_LISTEN_SCRAPER}` } })
          ).text(),
        )?.[1] ?? NaN,
      )
    const before = await gauge()
    // 20 at once: a burst cannot pass the cap while the first streams are still opening.
    const opened = await Promise.all(Array.from({ length: 20 }, () => rawListen()))
    expect(opened.filter((l) => l.status === 429).length).toBeGreaterThanOrEqual(4)
    const held = opened.filter((l) => l.status === 200)
    // bob's own SDK client may hold some already: 16 in all, whatever he had.
    expect(held.length).toBeLessThanOrEqual(16)
    await waitFor(async () => (await gauge()) === before + held.length, 15_000, 'the gauge to count the new streams')
    held[0]!.close()
    await waitFor(async () => (await gauge()) === before + held.length - 1, 15_000, 'the closed stream to be let go')
    const again = await rawListen()
    expect(again.status).toBe(200)
    // Another credential is not held back by bob's streams.
    const aliceOwn = keep(await listen(alice, { toolsListChanged: true }))
    expect(aliceOwn.honoredFilter).toEqual({ toolsListChanged: true })
    again.close()
    for (const l of held) l.close()
    await waitFor(async () => (await gauge()) <= before + 1, 15_000, 'the streams to be let go')
  })
})

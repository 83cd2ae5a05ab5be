import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../../src/runtime/runtime.js'
import { openView, type PrincipalView } from '../../../src/principal/view.js'
import { passthrough } from '../../../src/protocol/passthrough.js'
import { fixtureServer } from '../../helpers/fixtures.js'
import { captureLogger, connectClient, fixtureEntry, startRuntime, waitFor } from '../../helpers/runtime.js'

describe('client connection over the merged catalogue (echo + paginated)', () => {
  let runtime: Runtime
  let client: Client
  let direct: Client

  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { echo: fixtureEntry('echo'), paged: fixtureEntry('paginated') } })
    ;({ client } = await connectClient(runtime))
    direct = new Client({ name: 'direct', version: '1' })
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [fixtureServer('echo')] }))
  })
  afterAll(async () => {
    await client?.close()
    await direct?.close()
    await runtime?.close()
  })

  it('identifies itself as mycelium and advertises tools.listChanged', () => {
    expect(client.getServerVersion()?.name).toBe('mycelium')
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true)
    expect(client.getServerCapabilities()?.prompts).toBeDefined()
    expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true)
  })

  it('merges instructions under a heading per server', () => {
    expect(client.getInstructions()).toContain('## echo\n\nUse echo to repeat text.')
  })

  it('lists every tool once under its namespaced name, following the child’s pages', async () => {
    const { tools } = await client.listTools()
    const names = tools.map((t) => t.name)
    expect(names.filter((n) => n.startsWith('echo__'))).toEqual([
      'echo__echo',
      'echo__add',
      'echo__image',
      'echo__fail',
      'echo__log',
    ])
    expect(names.filter((n) => n.startsWith('paged__'))).toHaveLength(25)
    expect(new Set(names).size).toBe(names.length)
  })

  it('passes every field of a tool definition through untouched', async () => {
    const { tools } = await client.listTools()
    const mine = tools.find((t) => t.name === 'echo__echo')!
    const theirs = (await direct.listTools()).tools.find((t) => t.name === 'echo')!
    expect({ ...mine, name: 'echo' }).toEqual(theirs)
    expect(mine._meta).toEqual({ 'fixture/extra': 42 })
    expect(mine.outputSchema).toBeDefined()
    expect(mine.annotations).toEqual({ readOnlyHint: true })
  })

  it('returns tool results exactly as the child does', async () => {
    for (const [name, args] of [
      ['echo', { message: 'hi there' }],
      ['image', {}],
      ['fail', {}],
      ['add', { a: 2, b: 3 }],
    ] as const) {
      const through = await client.callTool({ name: `echo__${name}`, arguments: args })
      const straight = await direct.callTool({ name, arguments: args })
      expect(through).toEqual(straight)
    }
  })

  it('answers an unknown tool with the invalid-params error that names it', async () => {
    await expect(client.callTool({ name: 'echo__nope', arguments: {} })).rejects.toThrow(/Unknown tool: echo__nope/)
    await expect(client.callTool({ name: 'echo:echo', arguments: {} })).rejects.toThrow(/Unknown tool: echo:echo/)
  })

  it('serves prompts namespaced and routes prompts/get', async () => {
    const { prompts } = await client.listPrompts()
    expect(prompts.map((p) => p.name)).toEqual(['echo__greet'])
    const result = await client.getPrompt({ name: 'echo__greet', arguments: { who: 'Ada' } })
    expect(result.messages[0]?.content).toEqual({ type: 'text', text: 'Hello, Ada!' })
    await expect(client.getPrompt({ name: 'echo__nope' })).rejects.toThrow(/Unknown prompt/)
  })

  it('keeps resource URIs and routes reads, including through templates', async () => {
    const { resources } = await client.listResources()
    expect(resources.map((r) => r.uri)).toEqual(['echo://static'])
    const { resourceTemplates } = await client.listResourceTemplates()
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['echo://item/{id}'])
    expect((await client.readResource({ uri: 'echo://static' })).contents[0]).toMatchObject({ text: 'static text' })
    expect((await client.readResource({ uri: 'echo://item/42' })).contents[0]).toMatchObject({ text: 'item 42' })
    await expect(client.readResource({ uri: 'nowhere://x' })).rejects.toThrow(/Resource not found/)
  })

  it('routes completion by prompt name and by template', async () => {
    const byPrompt = await client.complete({
      ref: { type: 'ref/prompt', name: 'echo__greet' },
      argument: { name: 'who', value: 'al' },
    })
    expect(byPrompt.completion.values).toEqual(['alice', 'albert'])
    const byTemplate = await client.complete({
      ref: { type: 'ref/resource', uri: 'echo://item/{id}' },
      argument: { name: 'id', value: 'b' },
    })
    expect(byTemplate.completion.values).toEqual(['bob'])
  })

  it('forwards resource updates to the subscriber only', async () => {
    const updates: string[] = []
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updates.push(n.params.uri)
    })
    const other = await connectClient(runtime)
    const otherUpdates: string[] = []
    other.client.setNotificationHandler('notifications/resources/updated', (n) => {
      otherUpdates.push(n.params.uri)
    })
    await client.subscribeResource({ uri: 'echo://static' })
    await waitFor(() => updates.length > 0, 5_000, 'resource update')
    expect(updates).toEqual(['echo://static'])
    expect(otherUpdates).toEqual([])
    await other.client.close()
  })

  it('forwards an update the child sends before its answer to the subscription', async () => {
    const updates: string[] = []
    const { client: eager } = await connectClient(runtime)
    eager.setNotificationHandler('notifications/resources/updated', (n) => {
      updates.push(n.params.uri)
    })
    await eager.subscribeResource({ uri: 'echo://item/now' })
    await waitFor(() => updates.length > 0, 5_000, 'the update sent with the answer')
    expect(updates).toEqual(['echo://item/now'])
    await eager.close()
  })

  it('fans logging/setLevel out and forwards log messages with the server key as logger', async () => {
    const messages: Array<{ logger?: string; data: unknown }> = []
    client.setNotificationHandler('notifications/message', (n) => {
      messages.push({ logger: n.params.logger, data: n.params.data })
    })
    await client.setLoggingLevel('debug')
    await client.callTool({ name: 'echo__log', arguments: { text: 'from child' } })
    await waitFor(() => messages.length > 0, 5_000, 'log message')
    expect(messages[0]).toEqual({ logger: 'echo', data: { said: 'from child' } })
  })

  it('paginates its own answers when the catalogue is large', async () => {
    const { client: small, connection } = await connectClient(runtime)
    ;(connection as unknown as { pageSize: number }).pageSize = 7
    const first = await small.request({ method: 'tools/list', params: {} })
    expect((first as { tools: unknown[] }).tools).toHaveLength(7)
    expect((first as { nextCursor?: string }).nextCursor).toBeTypeOf('string')
    const { tools } = await small.listTools()
    expect(tools).toHaveLength(30)
    await expect(small.request({ method: 'tools/list', params: { cursor: 'garbage' } })).rejects.toThrow(
      /Invalid cursor/,
    )
    await small.close()
  })
})

describe('child list changes, progress, cancellation and timeouts', () => {
  let runtime: Runtime
  let client: Client
  const capture = captureLogger()

  beforeAll(async () => {
    runtime = await startRuntime(
      {
        mcpServers: {
          grow: fixtureEntry('list-changing'),
          prog: fixtureEntry('progress', { timeoutMs: 400 }),
          hang: fixtureEntry('hang', { timeoutMs: 500 }),
        },
      },
      capture.logger,
    )
    ;({ client } = await connectClient(runtime))
  })
  afterAll(async () => {
    await client?.close()
    await runtime?.close()
  })

  it('refreshes a child’s tools on its list_changed and tells the client', async () => {
    let changed = 0
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++
    })
    await client.callTool({ name: 'grow__grow', arguments: { name: 'sprout' } })
    await waitFor(
      async () => (await client.listTools()).tools.some((t) => t.name === 'grow__sprout'),
      5_000,
      'grown tool',
    )
    expect(changed).toBeGreaterThan(0)
    const result = await client.callTool({ name: 'grow__sprout', arguments: {} })
    expect(result.content).toEqual([{ type: 'text', text: 'sprout' }])
  })

  it('sends the child’s progress with the client’s token, and progress resets the timeout', async () => {
    const seen: Array<{ progress: number; total?: number; message?: string }> = []
    // 8 steps of 150 ms = 1.2 s in all, three times the 400 ms call timeout.
    const result = await client.callTool(
      { name: 'prog__count', arguments: { steps: 8, stepMs: 150 } },
      { onprogress: (p) => seen.push(p), timeout: 10_000 },
    )
    expect(result.content).toEqual([{ type: 'text', text: 'counted 8' }])
    expect(seen.map((p) => p.progress)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(seen[0]).toMatchObject({ total: 8, message: 'step 1' })
  })

  it('times a call out after timeoutMs without progress', async () => {
    // The client waits 10 s: an error naming myc's 500 ms is myc's timeout, not the client's.
    await expect(client.callTool({ name: 'hang__hang', arguments: {} }, { timeout: 10_000 })).rejects.toThrow(
      /timed out after 500 ms/,
    )
  })

  it('passes the client’s cancellation on to the child', async () => {
    const controller = new AbortController()
    const call = client.callTool({ name: 'hang__hang', arguments: {} }, { signal: controller.signal, timeout: 10_000 })
    await waitFor(
      () => capture.lines.some((l) => l.includes('[hang]') && l.includes('hang: waiting')),
      5_000,
      'the call to reach the child',
    )
    controller.abort('user pressed stop')
    await expect(call).rejects.toThrow()
    // The child saw notifications/cancelled (its handler logs to stderr, tagged with its key).
    await waitFor(
      () => capture.lines.some((l) => l.includes('[hang]') && l.includes('hang: cancelled')),
      5_000,
      'child to see the cancellation',
    )
    // The relay must have forgotten the call: nothing in flight for the child.
    const child = runtime.supervisor.children.get('hang')!
    await waitFor(
      () => (child as unknown as { relay: { inFlight: number } }).relay.inFlight === 0,
      2_000,
      'relay to settle',
    )
  })
})

describe('one table of myc’s own and forwarded requests, for every connection', () => {
  let runtime: Runtime

  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { text: fixtureEntry('text-echo'), echo: fixtureEntry('echo') } })
  })
  afterAll(async () => {
    await runtime?.close()
  })

  it('each connection lists and calls through its own view only, at the same time', async () => {
    const noEcho: PrincipalView = {
      ...openView(),
      toolVisible: (entry) => entry.server !== 'echo',
      promptVisible: (entry) => entry.server !== 'echo',
      serverVisible: (server) => server !== 'echo',
    }
    const open = await connectClient(runtime)
    const narrow = await connectClient(runtime, { view: noEcho })
    const [wide, small] = await Promise.all([open.client.listTools(), narrow.client.listTools()])
    expect(wide.tools.map((t) => t.name)).toContain('echo__echo')
    expect(small.tools.map((t) => t.name).sort()).toEqual(['text__add', 'text__echo', 'text__fail'])
    const [opened, hidden, own] = await Promise.allSettled([
      open.client.callTool({ name: 'echo__echo', arguments: { message: 'a' } }),
      narrow.client.callTool({ name: 'echo__echo', arguments: { message: 'b' } }),
      narrow.client.callTool({ name: 'text__echo', arguments: { message: 'c' } }),
    ])
    expect(opened).toMatchObject({ status: 'fulfilled', value: { structuredContent: { echoed: 'a' } } })
    expect(hidden).toMatchObject({
      status: 'rejected',
      reason: { message: expect.stringMatching(/Unknown tool: echo__echo/) },
    })
    expect(own).toMatchObject({ status: 'fulfilled', value: { content: [{ type: 'text', text: 'c' }] } })
    await open.client.close()
    await narrow.client.close()
  })

  it('answers a list its capabilities lack, and a method it does not serve, as not found', async () => {
    const tools = await startRuntime({ mcpServers: { text: fixtureEntry('text-echo') } })
    try {
      const { client } = await connectClient(tools)
      expect(client.getServerCapabilities()?.prompts).toBeUndefined()
      for (const [method, params] of [
        ['prompts/list', {}],
        ['resources/list', {}],
        ['resources/subscribe', { uri: 'text://x' }],
        ['myc/unknown', {}],
      ] as const)
        await expect(client.request({ method, params }, passthrough), method).rejects.toMatchObject({ code: -32601 })
      expect((await client.listTools()).tools).toHaveLength(3)
      await client.close()
    } finally {
      await tools.close()
    }
  })
})

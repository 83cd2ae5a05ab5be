import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, connectToMyc, requireBundle, writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { connectHttp, startHttpMyc, type HttpMyc } from '../helpers/http.js'
import { quietWindow, waitFor } from '../helpers/wait-for.js'

/**
 * Each child in its newest era, through `myc serve` (build/myc.cjs): a
 * 2026-07-28 child (modern-echo, SDK 2.x serveStdio) beside 2025 ones
 * (echo; strict-legacy, which exits on any request before initialize),
 * called by a 2025 client over stdio, a 2025 HTTP session and a 2026 HTTP
 * client. The modern child echoes the `_meta` envelope it got, so what myc
 * forwarded is seen where it arrives.
 */

const MODERN = '2026-07-28'
const PV = 'io.modelcontextprotocol/protocolVersion'
const INFO = 'io.modelcontextprotocol/clientInfo'
const CAPS = 'io.modelcontextprotocol/clientCapabilities'
const LEVEL = 'io.modelcontextprotocol/logLevel'
const node = (name: string, env?: Record<string, string>) => ({
  command: process.execPath,
  args: [fixtureServer(name)],
  ...(env ? { env } : {}),
})

function text(result: unknown): string {
  return (result as { content: Array<{ text: string }> }).content[0]!.text
}

/** What the modern child saw of a call to its `meta` tool. */
function seen(result: unknown): { envelope: Record<string, unknown> | null; meta: Record<string, unknown> | null } {
  return JSON.parse(text(result)) as never
}

async function connectModern(url: string): Promise<Client> {
  const client = new Client(
    { name: 'modern-e2e', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MODERN } } },
  )
  client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { colour: 'teal' } }))
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

/** A 2026-07-28 request as a plain POST, its JSON-RPC answer parsed (JSON or one SSE event). */
async function modernPost(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': method,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: { [PV]: MODERN, [CAPS]: {} } } }),
  })
  const body = await response.text()
  const json = response.headers.get('content-type')?.includes('text/event-stream')
    ? body
        .split('\n')
        .find((l) => l.startsWith('data: '))!
        .slice(6)
    : body
  return JSON.parse(json) as Record<string, unknown>
}

describe('children of both eras through myc serve (build/myc.cjs)', () => {
  const spawns = path.join(mkdtempSync(path.join(tmpdir(), 'myc-eras-')), 'spawns.log')
  const config = writeConfig({
    mcpServers: {
      echo: { ...node('echo'), era: 'auto' },
      modern: { ...node('modern-echo'), era: 'auto' },
      // The same server held to the 2025 era.
      old: { ...node('modern-echo'), era: 'legacy' },
      strict: { ...node('strict-legacy', { STRICT_LEGACY_LOG: spawns }), era: 'auto' },
    },
  })
  let m: HttpMyc
  let stdio: Client
  let session: Client
  let modern: Client
  let asker: Client
  const logs: Array<{ level: string; logger?: string }> = []
  /** How the stdio client answers elicitation (each test sets it), and what it was asked. */
  let onElicit: (params: { message: string }, signal: AbortSignal) => Promise<Record<string, unknown>> = async () => ({
    action: 'decline',
  })
  const elicited: string[] = []

  beforeAll(async () => {
    m = await startHttpMyc(config)
    ;({ client: stdio } = await connectToMyc(['--config', config], {
      capabilities: { elicitation: { form: {} } },
      setup: (c) => {
        c.setRequestHandler('elicitation/create', (request, ctx) => {
          elicited.push(request.params.message)
          return onElicit(request.params as { message: string }, ctx.mcpReq.signal) as never
        })
        c.setNotificationHandler('notifications/message', (n) => void logs.push(n.params as never))
      },
    }))
    ;({ client: session } = await connectHttp(m.url))
    modern = await connectModern(m.url)
    // A 2025 HTTP session that can be asked: the child's question comes on the call's own stream.
    ;({ client: asker } = await connectHttp(m.url, {
      capabilities: { elicitation: {} },
      setup: (c) =>
        c.setRequestHandler('elicitation/create', (request) => ({
          action: 'accept',
          content: { colour: request.params.message.includes('colour') ? 'plum' : '?', size: 'S' },
        })),
    }))
  }, 60_000)
  afterAll(async () => {
    await Promise.all([stdio, session, modern, asker].map((c) => c?.close().catch(() => {})))
    expect(await m?.stop()).toBe(0)
  })

  it('calls the modern and the legacy child alike from a 2025 and a 2026 client', async () => {
    expect(modern.getNegotiatedProtocolVersion()).toBe(MODERN)
    for (const client of [stdio, session, modern]) {
      const names = (await client.listTools(undefined, { cacheMode: 'bypass' })).tools.map((t) => t.name)
      expect(names).toEqual(
        expect.arrayContaining(['echo__echo', 'modern__echo', 'modern__meta', 'modern__ask', 'strict__hello']),
      )
      expect(text(await client.callTool({ name: 'modern__echo', arguments: { message: 'to 2026' } }))).toBe('to 2026')
      expect(text(await client.callTool({ name: 'echo__echo', arguments: { message: 'to 2025' } }))).toBe('to 2025')
      expect(text(await client.callTool({ name: 'strict__hello', arguments: {} }))).toBe('hello')
    }
  })

  it('sends the modern child the 2026 envelope: myc’s version, client info and offer; the caller’s trace context, never its credentials', async () => {
    const callerMeta = {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'com.example/tenant': 'blue',
      authorization: 'Bearer secret-0123456789',
      'com.example/apiKey': 'k-123',
      accessToken: 'at-123',
      [LEVEL]: 'debug',
      [INFO]: { name: 'impostor', version: '6.6.6' },
    }
    const fromModern = seen(await modern.callTool({ name: 'modern__meta', arguments: {}, _meta: callerMeta }))
    const fromLegacy = seen(await stdio.callTool({ name: 'modern__meta', arguments: {}, _meta: callerMeta }))
    for (const got of [fromModern, fromLegacy]) {
      expect(got.envelope).toMatchObject({ [PV]: MODERN, [INFO]: { name: 'mycelium' } })
      expect(got.envelope![CAPS]).toBeTypeOf('object')
      expect(got.meta).toMatchObject({ traceparent: callerMeta.traceparent, 'com.example/tenant': 'blue' })
      const all = JSON.stringify(got)
      for (const secret of ['secret-0123456789', 'k-123', 'at-123', 'impostor']) expect(all).not.toContain(secret)
    }
    // The 2026 caller's own log level rides on; a 2025 caller's reserved keys are not its to set.
    expect(fromModern.envelope![LEVEL]).toBe('debug')
    expect(fromLegacy.envelope![LEVEL]).toBeUndefined()
    // A 2025 client's logging/setLevel reaches a modern child as the level of its envelope.
    await stdio.setLoggingLevel('warning')
    expect(seen(await stdio.callTool({ name: 'modern__meta', arguments: {} })).envelope![LEVEL]).toBe('warning')
  })

  it('a 2025 client’s log level reaches the modern child in the envelope, and its log messages come back', async () => {
    await stdio.setLoggingLevel('info')
    await stdio.callTool({ name: 'modern__log', arguments: {} })
    await waitFor(() => logs.length > 0, 5_000, 'a log message')
    expect(logs[0]).toMatchObject({ level: 'info', logger: 'modern' })
    await stdio.setLoggingLevel('error')
    await stdio.callTool({ name: 'modern__log', arguments: {} })
    // At level error, the child's info message must not come back.
    await quietWindow(300)
    expect(logs).toHaveLength(1)
  })

  it('a child held to the 2025 era (era: "legacy") gets no envelope, from either era of client', async () => {
    for (const client of [stdio, modern]) {
      const got = seen(
        await client.callTool({
          name: 'old__meta',
          arguments: {},
          _meta: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
        }),
      )
      expect(got.envelope).toBeNull()
      expect(got.meta).toMatchObject({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })
    }
    // The 2026 era's input_required is the modern era's: in the 2025 era the same tool answers plainly.
    expect(text(await modern.callTool({ name: 'old__ask', arguments: {} }))).toBe('ask needs the 2026 era')
  })

  it('passes a modern child’s input_required to a 2026 client (which answers and retries), and asks a 2025 client the 2025 way (the bridge)', async () => {
    expect(text(await modern.callTool({ name: 'modern__ask', arguments: {} }))).toBe('colour: teal (state asked-once)')
    onElicit = async () => ({ action: 'accept', content: { colour: 'teal' } })
    elicited.length = 0
    expect(text(await stdio.callTool({ name: 'modern__ask', arguments: {} }))).toBe('colour: teal (state asked-once)')
    // The child's own question, prefixed with its server key as any child's elicitation is.
    expect(elicited).toEqual(['[modern] Favourite colour?'])
    // Over HTTP, on the stream of the session's call.
    expect(text(await asker.callTool({ name: 'modern__ask', arguments: {} }))).toBe('colour: plum (state asked-once)')
    // prompts/get too; a client that cannot be asked gets -32603 naming the missing capability.
    elicited.length = 0
    const prompt = await stdio.getPrompt({ name: 'modern__pick' })
    expect((prompt.messages[0]!.content as { text: string }).text).toBe('Paint it teal')
    expect(elicited).toEqual(['[modern] Which colour to paint?'])
    const refused = await session.getPrompt({ name: 'modern__pick' }).then(
      () => undefined,
      (e: unknown) => e as { code: number; message: string },
    )
    expect(refused?.code).toBe(-32603)
    expect(refused?.message).toMatch(/did not declare the elicitation capability/)
  })

  it('bridges several rounds, each answer keyed as the child asked and its requestState echoed', async () => {
    onElicit = async (params) =>
      params.message.includes('colour')
        ? { action: 'accept', content: { colour: 'teal' } }
        : { action: 'accept', content: { size: 'L' } }
    elicited.length = 0
    expect(text(await stdio.callTool({ name: 'modern__ask_twice', arguments: {} }))).toBe('size: L after round-2')
    expect(elicited).toEqual(['[modern] First, a colour?', '[modern] Size for teal?'])
    const asks = JSON.parse(text(await stdio.callTool({ name: 'modern__asked', arguments: {} }))) as Array<{
      tool: string
      state: string | null
      responses: string[]
    }>
    expect(asks.filter((a) => a.tool === 'ask_twice')).toEqual([
      { tool: 'ask_twice', state: null, responses: [] },
      { tool: 'ask_twice', state: 'round-1', responses: ['colour'] },
      { tool: 'ask_twice', state: 'round-2', responses: ['size'] },
    ])
    expect(text(await asker.callTool({ name: 'modern__ask_twice', arguments: {} }))).toBe('size: S after round-2')
  })

  it('stops asking after 8 rounds, and answers a client without the capability with a clear error naming it', async () => {
    onElicit = async () => ({ action: 'decline' })
    elicited.length = 0
    const endless = await stdio.callTool({ name: 'modern__ask', arguments: {} })
    expect(endless.isError).toBe(true)
    expect(text(endless)).toMatch(
      /Server "modern" \(MCP 2026-07-28\) still asked for input to answer tools\/call after 8 rounds/,
    )
    expect(elicited).toHaveLength(8)
    // The 2025 session declared no elicitation: it is not asked, and hears why (a refusal, not a wait that timed out).
    const refused = await session.callTool({ name: 'modern__ask', arguments: {} })
    expect(refused.isError).toBe(true)
    // The child saw the session's capabilities in the envelope and refused itself (-32021): said the bridge's way, with the child's words.
    expect(text(refused)).toMatch(
      /Server "modern" \(MCP 2026-07-28\) needs input to answer tools\/call, but the MCP client connected to mycelium did not declare the elicitation capability, so it cannot be asked \(.*'colour'/,
    )
  })

  it('a call the client cancels while it is being asked sends nothing more to the child', async () => {
    const count = async () =>
      (JSON.parse(text(await stdio.callTool({ name: 'modern__asked', arguments: {} }))) as unknown[]).length
    const before = await count()
    let aborted = false
    onElicit = (_params, signal) =>
      new Promise((_, reject) =>
        signal.addEventListener('abort', () => {
          aborted = true
          reject(new Error('cancelled'))
        }),
      )
    elicited.length = 0
    const controller = new AbortController()
    const call = stdio.callTool({ name: 'modern__ask_twice', arguments: {} }, { signal: controller.signal }).then(
      () => 'answered',
      () => 'rejected',
    )
    await waitFor(() => elicited.length === 1, 5_000, 'the question to reach the client')
    controller.abort('changed my mind')
    expect(await call).toBe('rejected')
    // myc withdraws its question from the client, and never retries the child.
    await waitFor(() => aborted, 5_000, 'the elicitation to be cancelled')
    // myc must not ask the child again (no retry of the cancelled call).
    await quietWindow(500)
    expect(await count()).toBe(before + 1)
  })

  it('fetches a modern child’s lists with the envelope, and keeps its ttlMs/cacheScope to itself', async () => {
    const lists = JSON.parse(text(await stdio.callTool({ name: 'modern__seen_lists', arguments: {} }))) as Array<{
      method: string
      envelope: Record<string, unknown> | null
    }>
    expect(lists.map((l) => l.method)).toEqual(
      expect.arrayContaining(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']),
    )
    for (const l of lists) expect(l.envelope).toMatchObject({ [PV]: MODERN, [INFO]: { name: 'mycelium' } })
    const answer = (await modernPost(m.url, 'tools/list')).result as Record<string, unknown>
    expect(answer.cacheScope).toBe('private')
    expect(answer.ttlMs).not.toBe(987_654)
    expect((answer.tools as Array<{ name: string }>).map((t) => t.name)).toContain('modern__seen_lists')
  })

  it('hears a modern child’s list changes over subscriptions/listen', async () => {
    // Each myc process has its own children: grow the one behind the stdio client.
    expect(text(await stdio.callTool({ name: 'modern__grow', arguments: {} }))).toBe('grown')
    await waitFor(
      async () => (await stdio.listTools()).tools.some((t) => t.name === 'modern__grown'),
      10_000,
      'modern__grown to be listed',
    )
    expect(text(await stdio.callTool({ name: 'modern__grown', arguments: {} }))).toBe('I was grown')
  })

  it('starts a 2025 server that exits on the probe again, with initialize, and remembers it', () => {
    const starts = readFileSync(spawns, 'utf8').trim().split('\n')
    // Two myc processes (HTTP and stdio), each: one start that died on the probe, one that initialized.
    expect(starts).toHaveLength(4)
  })

  it('speaks 2026-07-28 to a modern child over Streamable HTTP (this myc, as another myc’s child)', () => {
    const chained = writeConfig({
      mcpServers: { up: { type: 'http', url: m.url, era: 'auto' }, upOld: { type: 'http', url: m.url } },
    })
    const status = spawnSync(process.execPath, [bundle, 'status', '--json', '--config', chained], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    const servers = JSON.parse(status.stdout).servers as Array<Record<string, unknown>>
    expect(servers.map((s) => [s.key, s.state, s.era, s.protocolVersion])).toEqual([
      ['up', 'RUNNING', 'modern', MODERN],
      ['upOld', 'RUNNING', 'legacy', '2025-11-25'],
    ])
    expect(servers[0]!.tools).toBe(servers[1]!.tools)
  })

  it('myc status --json and myc doctor show each child’s era and protocol version', () => {
    requireBundle()
    const status = spawnSync(process.execPath, [bundle, 'status', '--json', '--config', config], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    const servers = JSON.parse(status.stdout).servers as Array<Record<string, unknown>>
    expect(servers.map((s) => [s.key, s.state, s.era, s.protocolVersion])).toEqual([
      ['echo', 'RUNNING', 'legacy', '2025-11-25'],
      ['modern', 'RUNNING', 'modern', MODERN],
      ['old', 'RUNNING', 'legacy', '2025-11-25'],
      ['strict', 'RUNNING', 'legacy', '2025-06-18'],
    ])
    const doctor = spawnSync(process.execPath, [bundle, 'doctor', '--json', '--config', config], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    const checks = JSON.parse(doctor.stdout).checks as Array<{ name: string; detail: string }>
    expect(checks.find((c) => c.name === 'server modern')!.detail).toMatch(/2026 era, MCP 2026-07-28/)
    expect(checks.find((c) => c.name === 'server echo')!.detail).toMatch(/2025 era, MCP 2025-11-25/)
  })
})

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, protocolErrorOf, requireBundle, writeConfig } from '../helpers/e2e.js'
import { repoRoot } from '../helpers/fixtures.js'
import { fixtureEntry } from '../helpers/runtime.js'

/**
 * MCP 2026-07-28 over `myc serve` on stdio, beside the 2025 era: the first
 * message of a connection decides its era (`--era auto`), or `--era` pins
 * it. SDK 2.x clients over the SDK's own StdioClientTransport (which probes
 * with server/discover on a sibling process), and raw lines for the wire.
 * A 2026 client's principal is the launch's role and --skills alone.
 */

const MODERN = '2026-07-28'
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} }
const skillsDir = path.join(repoRoot, 'tests/fixtures/http/skills')
// guest, launched with the common skill (echo:echo, echo:log); reader (echo:add) is one the role may use but was not launched with.
const CONFIG = {
  mcpServers: { echo: fixtureEntry('echo') },
  skills: { dirs: [skillsDir] },
  roles: { default: 'guest' },
  session: { defaultSkills: ['common'] },
}
const MODERN_TOOLS = [
  'mycelium__list_skills',
  'mycelium__activate_skill',
  'mycelium__get_context',
  'mycelium__search_tools',
  'echo__echo',
  'echo__log',
]

type Negotiation = 'legacy' | 'auto' | 'pin'

/** An SDK 2.x client on `node build/myc.cjs serve <args>` over real stdio, negotiating as asked. */
async function connect(
  config: string,
  negotiation: Negotiation,
  args: string[] = [],
  setup?: (c: Client) => void,
): Promise<Client> {
  requireBundle()
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bundle, 'serve', '--config', config, ...args],
    stderr: 'pipe',
  })
  const options =
    negotiation === 'legacy'
      ? {}
      : { versionNegotiation: { mode: negotiation === 'pin' ? ({ pin: MODERN } as const) : ('auto' as const) } }
  const client = new Client({ name: `stdio-${negotiation}`, version: '1.0.0' }, { capabilities: {}, ...options })
  setup?.(client)
  await client.connect(transport)
  return client
}

async function names(client: Client): Promise<string[]> {
  return (await client.listTools(undefined, { cacheMode: 'bypass' })).tools.map((t) => t.name)
}

function texts(result: { content?: unknown }): string[] {
  return (result.content as Array<{ text: string }>).map((c) => c.text)
}

/** `myc serve` spoken to in raw lines: every answer recorded by id (null ids apart). */
class RawClient {
  readonly proc: ChildProcessWithoutNullStreams
  readonly answers = new Map<string, Array<Record<string, unknown>>>()
  readonly nullIdAnswers: unknown[] = []
  private buffer = ''
  private waiters = new Map<string, (answer: Record<string, unknown>) => void>()
  readonly exited: Promise<number | null>

  constructor(config: string, args: string[] = []) {
    requireBundle()
    this.proc = spawn(process.execPath, [bundle, 'serve', '--config', config, ...args], { stdio: 'pipe' })
    this.exited = new Promise((resolve) => this.proc.once('exit', (code) => resolve(code)))
    this.proc.stdout.setEncoding('utf8')
    this.proc.stdout.on('data', (chunk: string) => {
      this.buffer += chunk
      let nl: number
      while ((nl = this.buffer.indexOf('\n')) !== -1) {
        const message = JSON.parse(this.buffer.slice(0, nl)) as Record<string, unknown>
        this.buffer = this.buffer.slice(nl + 1)
        if (message.method !== undefined) continue
        if (message.id === null) {
          this.nullIdAnswers.push(message)
          continue
        }
        const key = JSON.stringify(message.id)
        this.answers.set(key, [...(this.answers.get(key) ?? []), message])
        this.waiters.get(key)?.(message)
        this.waiters.delete(key)
      }
    })
  }

  write(line: string): void {
    this.proc.stdin.write(`${line}\n`)
  }

  /** Sends a request line (the params as given: add ENVELOPE for a 2026 one) and waits for its answer. */
  request(
    id: string,
    method: string,
    params?: Record<string, unknown>,
  ): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }> {
    const answer = new Promise<Record<string, unknown>>((resolve) => this.waiters.set(JSON.stringify(id), resolve))
    this.write(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }))
    return answer as never
  }

  async end(): Promise<number | null> {
    this.proc.stdin.end()
    return this.exited
  }
}

describe('myc serve on stdio (build/myc.cjs): the 2026-07-28 era beside the 2025 one', () => {
  let config: string
  const clients: Client[] = []
  const keep = (c: Client): Client => {
    clients.push(c)
    return c
  }
  beforeAll(() => {
    config = writeConfig(CONFIG)
  })
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})))
  })

  it('a client pinned to 2026-07-28 and one negotiating (auto) both get the 2026 era; a 2025 client gets the 2025 one', async () => {
    const pinned = keep(await connect(config, 'pin'))
    const auto = keep(await connect(config, 'auto'))
    const legacy = keep(await connect(config, 'legacy'))
    expect(pinned.getNegotiatedProtocolVersion?.()).toBe(MODERN)
    expect(auto.getNegotiatedProtocolVersion?.()).toBe(MODERN)
    expect(legacy.getNegotiatedProtocolVersion?.()).not.toBe(MODERN)
    expect(pinned.getServerVersion()).toMatchObject({ name: 'mycelium' })
    // A 2026 client's principal cannot drop a skill: no deactivate_skill; the 2025 session has it.
    expect(await names(pinned)).toEqual(MODERN_TOOLS)
    expect(await names(auto)).toEqual(MODERN_TOOLS)
    expect(await names(legacy)).toEqual([
      'mycelium__list_skills',
      'mycelium__activate_skill',
      'mycelium__deactivate_skill',
      'mycelium__get_context',
      'mycelium__search_tools',
      'echo__echo',
      'echo__log',
    ])
  }, 60_000)

  it('2026: a call, a hidden tool answering as one that never existed, a prompt, a resource, completion, the per-request log level', async () => {
    const logs: unknown[] = []
    const client = keep(
      await connect(config, 'pin', [], (c) =>
        c.setNotificationHandler('notifications/message', (n) => void logs.push(n.params)),
      ),
    )
    const called = await client.callTool({ name: 'echo__echo', arguments: { message: 'over stdio' } })
    expect(texts(called)).toEqual(['over stdio'])
    const never = await protocolErrorOf(() => client.callTool({ name: 'zz__never', arguments: {} }))
    expect(never).toBe('-32602 Unknown tool: zz__never')
    for (const hidden of ['echo__add', 'echo__fail', 'mycelium__deactivate_skill'])
      expect(await protocolErrorOf(() => client.callTool({ name: hidden, arguments: {} }))).toBe(
        never.replace('zz__never', hidden),
      )

    const prompts = (await client.listPrompts()).prompts.map((p) => p.name)
    expect(prompts).toEqual(['echo__greet'])
    const prompt = await client.getPrompt({ name: 'echo__greet', arguments: { who: 'stdio' } })
    expect(prompt.messages[0]!.content).toEqual({ type: 'text', text: 'Hello, stdio!' })
    expect(await protocolErrorOf(() => client.getPrompt({ name: 'zz__never' }))).toBe(
      '-32602 Unknown prompt: zz__never',
    )
    const read = await client.readResource({ uri: 'echo://item/7' })
    expect(read.contents).toEqual([{ uri: 'echo://item/7', mimeType: 'text/plain', text: 'item 7' }])
    expect(await protocolErrorOf(() => client.readResource({ uri: 'nowhere://x' }))).toBe(
      '-32602 Resource not found: nowhere://x',
    )
    const completion = await client.complete({
      ref: { type: 'ref/prompt', name: 'echo__greet' },
      argument: { name: 'who', value: 'al' },
    })
    expect(completion.completion.values).toEqual(['alice', 'albert'])

    // No log level in the request: no log messages; one asked for: the child's message, with its server as logger.
    await client.callTool({ name: 'echo__log', arguments: { text: 'quiet' } })
    expect(logs).toEqual([])
    await client.callTool({
      name: 'echo__log',
      arguments: { text: 'loud' },
      _meta: { 'io.modelcontextprotocol/logLevel': 'info' },
    })
    expect(logs).toEqual([{ level: 'info', logger: 'echo', data: { said: 'loud' } }])
  }, 60_000)

  it('2026: activate_skill for a skill the launch did not give returns its instructions and says a person adds it; the list never changes', async () => {
    const client = keep(await connect(config, 'pin'))
    const before = await names(client)
    const refused = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'reader' } })
    expect(refused.isError).toBe(true)
    const [explanation, instructions] = texts(refused)
    expect(explanation).toMatch(
      /^Skill reader is not active, and this client cannot activate it: .*--skills.* \/add reader in myc chat, or a relaunch of myc serve with --skills reader\./,
    )
    expect(instructions).toBe('Reader instructions.')
    expect(await names(client)).toEqual(before)
    expect(await protocolErrorOf(() => client.callTool({ name: 'echo__add', arguments: { a: 1, b: 2 } }))).toBe(
      '-32602 Unknown tool: echo__add',
    )
    // A skill the launch gave: its instructions; one the role cannot use: unknown. Nothing changes.
    expect(texts(await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'common' } }))).toEqual([
      'Skill common is already active.\n\nEcho things.',
    ])
    const unknown = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'writer' } })
    expect(unknown.isError).toBe(true)
    expect(texts(unknown)).toEqual(['Unknown skill: writer. Call list_skills to see the skills you can activate.'])
    expect(await names(client)).toEqual(before)
    // Launched with --skills reader, it is there from the start.
    const withReader = keep(await connect(config, 'pin', ['--skills', 'common,reader']))
    expect(await names(withReader)).toContain('echo__add')
    expect(texts(await withReader.callTool({ name: 'echo__add', arguments: { a: 2, b: 3 } }))).toEqual(['5'])
  }, 60_000)

  it('2026 on the wire: server/discover, lists with cacheScope "private" and a ttlMs; hostile lines each answered once', async () => {
    const raw = new RawClient(config)
    const discover = await raw.request('d', 'server/discover', { _meta: ENVELOPE })
    expect(discover.result).toMatchObject({
      supportedVersions: [MODERN],
      resultType: 'complete',
      cacheScope: 'private',
      capabilities: { tools: { listChanged: true } },
    })
    for (const [method, key] of [
      ['tools/list', 'tools'],
      ['prompts/list', 'prompts'],
      ['resources/list', 'resources'],
      ['resources/templates/list', 'resourceTemplates'],
    ] as const) {
      const r = await raw.request(`l-${method}`, method, { _meta: ENVELOPE })
      expect(r.result, method).toMatchObject({
        resultType: 'complete',
        cacheScope: 'private',
        ttlMs: expect.any(Number),
      })
      expect(r.result!.ttlMs as number, method).toBeGreaterThan(0)
      expect(Array.isArray(r.result![key]), method).toBe(true)
    }
    raw.write('null')
    const answers = await Promise.all([
      raw.request('bad-envelope', 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': 5 } }),
      raw.request('no-envelope', 'tools/list'),
      raw.request('unknown-method', 'no/such/method', { _meta: ENVELOPE }),
      raw.request('unknown-revision', 'tools/list', {
        _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
      }),
      raw.request('ping-is-gone', 'ping', { _meta: ENVELOPE }),
      raw.request('bad-params', 'tools/call', { name: 7, _meta: ENVELOPE }),
      raw.request('initialize-now', 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'late', version: '1' },
      }),
    ])
    expect(answers.map((a) => a.error?.code)).toEqual([-32602, -32602, -32601, -32022, -32601, -32602, -32022])
    // Still serving, and every request above was answered exactly once.
    const called = await raw.request('after', 'tools/call', {
      name: 'echo__echo',
      arguments: { message: 'still here' },
      _meta: ENVELOPE,
    })
    expect(called.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'still here' }] })
    expect(raw.nullIdAnswers).toHaveLength(1)
    for (const [id, got] of raw.answers) expect(got, id).toHaveLength(1)
    expect(await raw.end()).toBe(0)
  }, 60_000)

  it('a client probing in place (server/discover, then initialize on the same connection) is answered, then served as 2025', async () => {
    const raw = new RawClient(config)
    const discover = await raw.request('probe', 'server/discover', { _meta: ENVELOPE })
    expect(discover.result).toMatchObject({ supportedVersions: [MODERN] })
    const init = await raw.request('init', 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'in-place', version: '1' },
    })
    expect(init.result).toMatchObject({ protocolVersion: '2025-11-25', serverInfo: { name: 'mycelium' } })
    raw.write('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    const listed = await raw.request('list', 'tools/list')
    expect((listed.result!.tools as Array<{ name: string }>).map((t) => t.name)).toContain('mycelium__deactivate_skill')
    expect(listed.result).not.toHaveProperty('cacheScope')
    expect(await raw.end()).toBe(0)
  }, 60_000)
})

describe('myc serve --era (build/myc.cjs): pinning the stdio era', () => {
  let config: string
  const clients: Client[] = []
  beforeAll(() => {
    config = writeConfig(CONFIG)
  })
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})))
  })

  it('--era legacy: 2026 requests are unknown methods, so a negotiating client falls back to 2025 and a pinned one cannot connect', async () => {
    const auto = await connect(config, 'auto', ['--era', 'legacy'])
    clients.push(auto)
    expect(auto.getNegotiatedProtocolVersion?.()).not.toBe(MODERN)
    expect(await names(auto)).toContain('mycelium__deactivate_skill')
    await expect(connect(config, 'pin', ['--era', 'legacy'])).rejects.toThrow(
      /did not offer pinned protocol version 2026-07-28/,
    )
    const raw = new RawClient(config, ['--era', 'legacy'])
    const refused = await raw.request('d', 'server/discover', { _meta: ENVELOPE })
    expect(refused.error).toMatchObject({ code: -32601, message: 'Method not found' })
    expect((await raw.request('l', 'tools/list', { _meta: ENVELOPE })).error?.code).toBe(-32601)
    expect(await raw.end()).toBe(0)
  }, 60_000)

  it('--era modern: initialize is refused with a clear error; 2026 clients are served', async () => {
    const refused = await connect(config, 'legacy', ['--era', 'modern']).then(
      () => 'connected',
      (error: unknown) => String(error),
    )
    expect(refused).toMatch(/--era modern.*2026-07-28 only/)
    const pinned = await connect(config, 'pin', ['--era', 'modern'])
    clients.push(pinned)
    expect(await names(pinned)).toEqual(MODERN_TOOLS)
    const raw = new RawClient(config, ['--era', 'modern'])
    const init = await raw.request('i', 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'old', version: '1' },
    })
    expect(init.error).toMatchObject({ code: -32022, data: { supported: [MODERN], requested: '2025-11-25' } })
    // The connection stays open for a 2026 request.
    expect((await raw.request('l', 'tools/list', { _meta: ENVELOPE })).result).toMatchObject({ cacheScope: 'private' })
    expect(await raw.end()).toBe(0)
  }, 60_000)

  it('--era takes auto, legacy or modern only', () => {
    const run = spawn(process.execPath, [bundle, 'serve', '--config', config, '--era', 'sideways'], { stdio: 'pipe' })
    let stderr = ''
    run.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    return new Promise<void>((resolve) =>
      run.once('exit', (code) => {
        expect(code).toBe(2)
        expect(stderr).toContain('--era must be one of auto, legacy, modern')
        resolve()
      }),
    )
  })
})

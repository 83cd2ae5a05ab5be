import { Client, ProtocolError } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, npmServer, protocolErrorOf, requireBundle, writeConfig } from '../helpers/e2e.js'

/**
 * A 2026-07-28 client (an SDK 2.x client pinned to the revision) through
 * `myc serve --era modern` on stdio, in front of the 2025 reference server
 * from npm (server-everything, built on the 1.x SDK): lists, calls, reads,
 * prompts, completion, progress, cancellation, and the reference server's
 * own sampling, elicitation and roots requests, which reach this client as
 * `input_required` results its handlers answer (the legacy→modern bridge),
 * compared with a 2025 client calling the same server directly.
 */

const MODERN = '2026-07-28'
const caps = { elicitation: { form: {} }, sampling: {}, roots: {} }
const roots = [{ uri: 'file:///workspace/modern', name: 'modern-ws' }]

function texts(result: unknown): string[] {
  return ((result as { content: Array<{ type: string; text?: string }> }).content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text!)
}

describe('a 2026-07-28 client through myc serve (build/myc.cjs) in front of server-everything', () => {
  let modern: Client
  let direct: Client
  const sampled: unknown[] = []
  const elicited: string[] = []

  beforeAll(async () => {
    requireBundle()
    const everything = { command: process.execPath, args: [npmServer('server-everything'), 'stdio'] }
    const config = writeConfig({ mcpServers: { everything } })
    modern = new Client(
      { name: 'modern-npm', version: '1.0.0' },
      { capabilities: caps, versionNegotiation: { mode: { pin: MODERN } } },
    )
    modern.setRequestHandler('sampling/createMessage', (request) => {
      sampled.push(request.params.messages)
      return {
        role: 'assistant',
        content: { type: 'text', text: 'sampled by the 2026 client' },
        model: 'e2e-model',
        stopReason: 'endTurn',
      }
    })
    modern.setRequestHandler('elicitation/create', (request) => {
      elicited.push(String(request.params.message))
      return { action: 'decline' }
    })
    modern.setRequestHandler('roots/list', () => ({ roots }))
    await modern.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [bundle, 'serve', '--era', 'modern', '--config', config],
        stderr: 'pipe',
      }),
    )
    // What myc offers its children when a 2026 client connects (all a question can be carried as), so the child registers the same tools.
    direct = new Client(
      { name: 'direct', version: '1' },
      { capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: { listChanged: true } } },
    )
    direct.setRequestHandler('roots/list', () => ({ roots }))
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: everything.args }))
  }, 60_000)

  afterAll(async () => {
    await modern?.close()
    await direct?.close()
  })

  it('speaks 2026-07-28 with myc, which speaks 2025 with the child', () => {
    expect(modern.getNegotiatedProtocolVersion?.()).toBe(MODERN)
  })

  it('lists the child’s tools, prompts and resources under their namespaced names', async () => {
    const tools = (await modern.listTools(undefined, { cacheMode: 'bypass' })).tools.map((t) => t.name)
    const theirs = (await direct.listTools()).tools.map((t) => `everything__${t.name}`)
    expect(tools.filter((t) => t.startsWith('everything__')).sort()).toEqual(theirs.sort())
    // Offered sampling, elicitation and roots (what the bridge carries), the child registers its tools that ask.
    expect(tools).toEqual(
      expect.arrayContaining([
        'everything__trigger-sampling-request',
        'everything__trigger-elicitation-request',
        'everything__get-roots-list',
      ]),
    )
    const prompts = (await modern.listPrompts(undefined, { cacheMode: 'bypass' })).prompts.map((p) => p.name)
    expect(prompts.sort()).toEqual((await direct.listPrompts()).prompts.map((p) => `everything__${p.name}`).sort())
  })

  it('calls, reads, gets prompts and completes as the child answers them directly', async () => {
    for (const [name, args] of [
      ['echo', { message: 'hello 2026' }],
      ['get-sum', { a: 2, b: 40 }],
      ['get-structured-content', { location: 'New York' }],
    ] as const) {
      const through = await modern.callTool({ name: `everything__${name}`, arguments: args })
      const straight = await direct.callTool({ name, arguments: args })
      expect(through.content, name).toEqual(straight.content)
      expect(through.structuredContent, name).toEqual(straight.structuredContent)
    }
    const uri = (await direct.listResources()).resources[0]!.uri
    expect((await modern.readResource({ uri })).contents).toEqual((await direct.readResource({ uri })).contents)
    const args = { city: 'Lisbon', state: 'LX' }
    expect((await modern.getPrompt({ name: 'everything__args-prompt', arguments: args })).messages).toEqual(
      (await direct.getPrompt({ name: 'args-prompt', arguments: args })).messages,
    )
    const argument = { name: 'department', value: 'E' }
    const through = await modern.complete({
      ref: { type: 'ref/prompt', name: 'everything__completable-prompt' },
      argument,
    })
    const straight = await direct.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument })
    expect(through.completion.values).toEqual(straight.completion.values)
    expect(through.completion.values.length).toBeGreaterThan(0)
  })

  it('passes progress on with the request’s token, and cancels the child’s call when the client does', async () => {
    const progress: number[] = []
    // The child's own reports (total 3): a round of input_required, when the child asked something meanwhile, adds the SDK client's own.
    const done = await modern.callTool(
      { name: 'everything__trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
      { onprogress: (p) => p.total === 3 && progress.push(p.progress) },
    )
    expect(texts(done).join('')).toMatch(/Long running operation completed/)
    // At least two of the three reports, in order (the SDK client may drop one that races the result, or one sent on a round it retried).
    expect(progress.length).toBeGreaterThanOrEqual(2)
    expect(progress).toEqual([...new Set(progress)].sort((x, y) => x - y))
    const controller = new AbortController()
    const call = modern.callTool(
      { name: 'everything__trigger-long-running-operation', arguments: { duration: 20, steps: 20 } },
      { signal: controller.signal },
    )
    setTimeout(() => controller.abort('stop'), 300)
    await expect(call).rejects.toThrow()
    expect(
      texts(await modern.callTool({ name: 'everything__echo', arguments: { message: 'after' } })).join(''),
    ).toContain('after')
  })

  it('carries the child’s sampling, elicitation and roots requests to this client as input_required, and completes the calls', async () => {
    const sampling = await modern.callTool({
      name: 'everything__trigger-sampling-request',
      arguments: { prompt: 'Say hello', maxTokens: 20 },
    })
    expect(JSON.stringify(sampling.content)).toContain('sampled by the 2026 client')
    expect(JSON.stringify(sampled)).toContain('Say hello')
    const elicitation = await modern.callTool({ name: 'everything__trigger-elicitation-request', arguments: {} })
    expect(elicited).toHaveLength(1)
    expect(JSON.stringify(elicitation.content)).toMatch(/decline/i)
    const listed = await modern.callTool({ name: 'everything__get-roots-list', arguments: {} })
    expect(JSON.stringify(listed.content)).toContain('file:///workspace/modern')
  })

  it('answers a tool that does not exist as it answers a 2025 client: -32602 Unknown tool', async () => {
    expect(await protocolErrorOf(() => modern.callTool({ name: 'everything__no-such-tool', arguments: {} }))).toBe(
      '-32602 Unknown tool: everything__no-such-tool',
    )
    await expect(modern.callTool({ name: 'nothing__at-all', arguments: {} })).rejects.toBeInstanceOf(ProtocolError)
  })
})

import path from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'
import { modernRequest, startHttpMyc, type HttpMyc, type RpcAnswer } from '../helpers/http.js'

/**
 * The legacy→modern bridge (docs/protocol-eras.md): a 2025 child (tests/fixtures/servers/
 * elicit.mjs, which asks with real elicitation/create and
 * sampling/createMessage requests mid-call) under 2026-07-28 clients of
 * `myc serve`. myc parks the child's call, answers the client with
 * `input_required`, and completes the call on the retry that carries the
 * answers and myc's requestState. Raw POSTs for the wire, SDK 2.x clients
 * pinned to 2026-07-28 (which fulfil input_required themselves) for the
 * whole round trip, over HTTP and over stdio.
 */

const MODERN = '2026-07-28'
const TOKENS = {
  MYC_E2E_TOKEN_ANN: 'ann-0123456789abcdef0123456789abcdef00',
  MYC_E2E_TOKEN_BEN: 'ben-0123456789abcdef0123456789abcdef00',
}
const ann = TOKENS.MYC_E2E_TOKEN_ANN
const ben = TOKENS.MYC_E2E_TOKEN_BEN
const skillsDir = path.join(repoRoot, 'tests/fixtures/http/skills')
const server = (name: string) => ({ command: process.execPath, args: [fixtureServer(name)] })
const CONFIG = {
  // The interactive skill (tests/fixtures/http/skills) grants asker:* and slow:*.
  mcpServers: { asker: server('elicit'), slow: server('progress') },
  skills: { dirs: [skillsDir] },
  roles: { default: 'developer' },
  session: { defaultSkills: ['interactive'] },
}
const ALL_CAPS = { elicitation: {}, sampling: {} }

/** A 2026-07-28 tools/call of `token` with these client capabilities (tests/helpers/http.ts modernRequest): the HTTP status and the JSON-RPC answer. */
async function call(
  url: string,
  token: string,
  params: Record<string, unknown>,
  caps: Record<string, unknown> = ALL_CAPS,
): Promise<{ status: number; rpc: RpcAnswer }> {
  const { status, answer } = await modernRequest(url, 'tools/call', params, { token, capabilities: caps })
  return { status, rpc: answer }
}

const textOf = (result: Record<string, unknown> | undefined) => (result!.content as Array<{ text: string }>)[0]!.text

describe('a 2025 child asks during a 2026 client’s call over HTTP (build/myc.cjs serve --http)', () => {
  let m: HttpMyc

  beforeAll(async () => {
    m = await startHttpMyc(
      writeConfig({
        ...CONFIG,
        http: {
          tokens: [
            { env: 'MYC_E2E_TOKEN_ANN', role: 'developer', skills: ['interactive'], name: 'ann' },
            { env: 'MYC_E2E_TOKEN_BEN', role: 'developer', skills: ['interactive'], name: 'ben' },
          ],
        },
      }),
      { env: TOKENS },
    )
  }, 30_000)
  afterAll(async () => {
    expect(await m?.stop()).toBe(0)
  })

  it('answers input_required with the child’s question, and the retry with the child’s result', async () => {
    const first = await call(m.url, ann, { name: 'asker__ask', arguments: {} })
    expect(first.status).toBe(200)
    const result = first.rpc.result!
    expect(result.resultType).toBe('input_required')
    expect(result.inputRequests).toEqual({
      elicitation_1: {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: 'Favourite colour?',
          requestedSchema: { type: 'object', properties: { colour: { type: 'string' } } },
        },
      },
    })
    expect(result.requestState).toMatch(/^myc\./)
    const retry = await call(m.url, ann, {
      name: 'asker__ask',
      arguments: {},
      inputResponses: { elicitation_1: { action: 'accept', content: { colour: 'green' } } },
      requestState: result.requestState,
    })
    expect(retry.rpc.result?.resultType).toBe('complete')
    expect(JSON.parse(textOf(retry.rpc.result))).toEqual({ action: 'accept', content: { colour: 'green' } })
  })

  it('refuses a tampered requestState, and one presented by another credential (-32602), and the call stays waiting for its owner', async () => {
    const first = await call(m.url, ann, { name: 'asker__sample', arguments: {} })
    const state = String(first.rpc.result?.requestState)
    expect(first.rpc.result?.inputRequests).toEqual({
      sampling_1: {
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }], maxTokens: 10 },
      },
    })
    const answer = { sampling_1: { role: 'assistant', content: { type: 'text', text: 'hi there' }, model: 'test' } }
    const tampered = await call(m.url, ann, {
      name: 'asker__sample',
      arguments: {},
      inputResponses: answer,
      requestState: `${state}-TAMPERED`,
    })
    expect(tampered.rpc.error?.code).toBe(-32602)
    const stolen = await call(m.url, ben, {
      name: 'asker__sample',
      arguments: {},
      inputResponses: answer,
      requestState: state,
    })
    expect(stolen.rpc.error?.code).toBe(-32602)
    // An answer of the wrong shape: -32602 naming the key; nothing is lost, the right answer still completes the call.
    const malformed = await call(m.url, ann, {
      name: 'asker__sample',
      arguments: {},
      inputResponses: { sampling_1: { text: 'no role' } },
      requestState: state,
    })
    expect(malformed.rpc.error?.code).toBe(-32602)
    expect(malformed.rpc.error?.message).toMatch(/inputResponses\["sampling_1"\]/)
    const owner = await call(m.url, ann, {
      name: 'asker__sample',
      arguments: {},
      inputResponses: answer,
      requestState: state,
    })
    expect(textOf(owner.rpc.result)).toBe(JSON.stringify({ type: 'text', text: 'hi there' }))
  })

  it('asks again what the retry left unanswered', async () => {
    const first = await call(m.url, ann, { name: 'asker__ask', arguments: {} })
    const again = await call(m.url, ann, {
      name: 'asker__ask',
      arguments: {},
      inputResponses: { wrong_key: { action: 'accept', content: {} } },
      requestState: first.rpc.result?.requestState,
    })
    expect(again.rpc.result?.resultType).toBe('input_required')
    expect(Object.keys(again.rpc.result?.inputRequests as object)).toEqual(['elicitation_1'])
    expect(again.rpc.result?.requestState).not.toBe(first.rpc.result?.requestState)
    const done = await call(m.url, ann, {
      name: 'asker__ask',
      arguments: {},
      inputResponses: { elicitation_1: { action: 'decline' } },
      requestState: again.rpc.result?.requestState,
    })
    expect(JSON.parse(textOf(done.rpc.result))).toEqual({ action: 'decline' })
  })

  it('declines for the child an elicitation the request did not declare; answers -32021 (HTTP 400) naming sampling it did not declare', async () => {
    // The client is not asked; the child hears a decline, a client's own answer that grants nothing.
    const declined = await call(m.url, ann, { name: 'asker__ask', arguments: {} }, { sampling: {} })
    expect(declined.status).toBe(200)
    expect(JSON.parse(textOf(declined.rpc.result))).toEqual({ action: 'decline' })
    // Sampling has no such answer: refused to the child, and its failed call names what the request lacked.
    const missing = await call(m.url, ann, { name: 'asker__sample', arguments: {} }, { elicitation: {} })
    expect(missing.status).toBe(400)
    expect(missing.rpc.error?.code).toBe(-32021)
    expect(missing.rpc.error?.data?.requiredCapabilities).toEqual({ sampling: {} })
    // Answers to questions never asked (no requestState of myc's): a new call, which asks.
    const unsolicited = await call(m.url, ann, {
      name: 'asker__ask',
      arguments: {},
      inputResponses: { anything: { action: 'accept', content: {} } },
    })
    expect(unsolicited.rpc.result?.resultType).toBe('input_required')
  })

  it('is transparent to an SDK 2.x client pinned to 2026-07-28: its elicitation and sampling handlers answer the child', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(m.url), {
      requestInit: { headers: { Authorization: `Bearer ${ann}` } },
    })
    const client = new Client(
      { name: 'modern-asked', version: '1.0.0' },
      { capabilities: ALL_CAPS, versionNegotiation: { mode: { pin: MODERN } } },
    )
    const asked: string[] = []
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(String(request.params.message))
      return { action: 'accept', content: { colour: 'teal' } }
    })
    client.setRequestHandler('sampling/createMessage', () => ({
      role: 'assistant',
      content: { type: 'text', text: 'sampled' },
      model: 'test',
    }))
    await client.connect(transport)
    try {
      // One after the other: a stdio child does not say which call a question is for, so questions of concurrent calls are told apart only while one call is in flight (or the others wait for their clients).
      const a = await client.callTool({ name: 'asker__ask', arguments: {} })
      const s = await client.callTool({ name: 'asker__sample', arguments: { delayMs: 50 } })
      expect(JSON.parse(textOf(a as never))).toEqual({ action: 'accept', content: { colour: 'teal' } })
      expect(textOf(s as never)).toBe(JSON.stringify({ type: 'text', text: 'sampled' }))
      expect(asked).toEqual(['Favourite colour?'])
    } finally {
      await client.close()
    }
  })
})

describe('a 2025 child asks during a 2026 client’s call over stdio (build/myc.cjs serve --era modern)', () => {
  it('fulfils the question through the SDK client’s handler', async () => {
    requireBundle()
    const config = writeConfig(CONFIG)
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bundle, 'serve', '--era', 'modern', '--config', config],
      stderr: 'pipe',
    })
    const client = new Client(
      { name: 'stdio-asked', version: '1.0.0' },
      { capabilities: ALL_CAPS, versionNegotiation: { mode: { pin: MODERN } } },
    )
    client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { colour: 'amber' } }))
    await client.connect(transport)
    try {
      const result = await client.callTool({ name: 'asker__ask', arguments: {} })
      expect(JSON.parse(textOf(result as never))).toEqual({ action: 'accept', content: { colour: 'amber' } })
    } finally {
      await client.close()
    }
  })
})

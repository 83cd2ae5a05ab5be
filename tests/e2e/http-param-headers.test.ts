import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { connectHttp, startHttpMyc, type HttpMyc } from '../helpers/http.js'

/**
 * SEP-2243 `Mcp-Param-*` headers through `myc serve --http` (build/myc.cjs):
 * a 2026-07-28 tools/call must mirror the arguments its tool marks
 * `x-mcp-header` into headers that agree with the body (the conformance
 * fixture's test_custom_headers marks `region` as `Region`). A tool the
 * credential does not see answers as one that does not exist, header or not;
 * 2025 sessions have no such headers.
 */

const MODERN = '2026-07-28'
const TOKENS = {
  MYC_E2E_TOKEN_SEES: 'sees-0123456789abcdef0123456789abcdef0',
  MYC_E2E_TOKEN_BLIND: 'blind-0123456789abcdef0123456789abcdef',
}
const sees = TOKENS.MYC_E2E_TOKEN_SEES
const blind = TOKENS.MYC_E2E_TOKEN_BLIND
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} }
const TOOL = 'test_custom_headers'
const b64 = (s: string) => `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`

let nextId = 1

/** A 2026-07-28 tools/call as a plain POST: the envelope, the standard headers, and `headers` on top (null removes one). */
async function call(
  url: string,
  token: string,
  name: string,
  args: Record<string, unknown>,
  headers: Record<string, string | null> = {},
): Promise<{
  status: number
  body: {
    id?: unknown
    result?: { content: Array<{ text: string }> }
    error?: { code: number; message: string; data?: unknown }
  }
}> {
  const all: Record<string, string | null> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': 'tools/call',
    'Mcp-Name': name,
    Authorization: `Bearer ${token}`,
    ...headers,
  }
  const sent = Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== null))
  const response = await fetch(url, {
    method: 'POST',
    headers: sent,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: { name, arguments: args, _meta: ENVELOPE },
    }),
  })
  const text = await response.text()
  // JSON, or one SSE event carrying it.
  const json = text.startsWith('{')
    ? text
    : text
        .split('\n')
        .find((l) => l.startsWith('data: '))!
        .slice('data: '.length)
  return { status: response.status, body: JSON.parse(json) }
}

describe('myc serve --http: SEP-2243 Mcp-Param-* headers on the 2026-07-28 route (build/myc.cjs)', () => {
  let m: HttpMyc
  const clients: Client[] = []

  beforeAll(async () => {
    const config = writeConfig({
      mcpServers: { conformance: { command: process.execPath, args: [fixtureServer('conformance')], prefix: false } },
      roles: { default: 'guest' },
      http: {
        tokens: [
          { env: 'MYC_E2E_TOKEN_SEES', role: 'guest', skills: ['headers'], name: 'sees' },
          { env: 'MYC_E2E_TOKEN_BLIND', role: 'guest', skills: ['plain'], name: 'blind' },
        ],
      },
    })
    // Two skills beside the config: one with the x-mcp-header tool, one without it.
    const skills = path.join(path.dirname(config), 'skills')
    const skill = (name: string, tool: string) => {
      mkdirSync(path.join(skills, name), { recursive: true })
      writeFileSync(
        path.join(skills, name, 'SKILL.md'),
        `---\nname: ${name}\ndescription: ${name} tools\nallowedRoles: [guest]\nallowedTools: ["conformance:${tool}"]\n---\n${name}.\n`,
      )
    }
    skill('headers', TOOL)
    skill('plain', 'test_simple_text')
    m = await startHttpMyc(config, { env: TOKENS })
  }, 30_000)
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})))
    expect(await m?.stop()).toBe(0)
  })

  it('a header that matches the argument, plain or =?base64?…?=, is served', async () => {
    const plain = await call(m.url, sees, TOOL, { region: 'eu-west-1' }, { 'Mcp-Param-Region': 'eu-west-1' })
    expect(plain.status).toBe(200)
    expect(plain.body.result!.content[0]!.text).toBe('Region: eu-west-1')
    const encoded = await call(m.url, sees, TOOL, { region: 'Zürich' }, { 'mcp-param-region': b64('Zürich') })
    expect(encoded.status).toBe(200)
    expect(encoded.body.result!.content[0]!.text).toBe('Region: Zürich')
    // Without the wrapper a Base64-looking value is literal.
    const literal = await call(m.url, sees, TOOL, { region: 'SGVsbG8=' }, { 'Mcp-Param-Region': 'SGVsbG8=' })
    expect(literal.body.result!.content[0]!.text).toBe('Region: SGVsbG8=')
  })

  it('a header that disagrees, is missing, or cannot be decoded: HTTP 400, -32020, naming the header, the argument and the fix', async () => {
    const mismatch = await call(m.url, sees, TOOL, { region: 'eu-west-1' }, { 'Mcp-Param-Region': 'us-east-1' })
    expect(mismatch.status).toBe(400)
    expect(mismatch.body.id).toEqual(expect.any(Number))
    expect(mismatch.body.error).toMatchObject({
      code: -32020,
      data: { mismatch: { header: 'Mcp-Param-Region', body: 'arguments.region' } },
    })
    expect(mismatch.body.error!.message).toBe(
      'Bad Request: the request headers and body disagree: the Mcp-Param-Region header does not match argument region (tool input property "region" is marked x-mcp-header): send Mcp-Param-Region: eu-west-1',
    )

    const missing = await call(m.url, sees, TOOL, { region: 'Zürich' })
    expect(missing.status).toBe(400)
    expect(missing.body.error!.code).toBe(-32020)
    expect(missing.body.error!.message).toContain(`the Mcp-Param-Region header is missing while argument region is set`)
    expect(missing.body.error!.message).toContain(`send Mcp-Param-Region: ${b64('Zürich')}`)

    for (const bad of ['=?base64?SGVsbG8?=', '=?base64?SGVs!!!bG8=?=']) {
      const invalid = await call(m.url, sees, TOOL, { region: 'Hello' }, { 'Mcp-Param-Region': bad })
      expect(invalid.status, bad).toBe(400)
      expect(invalid.body.error!.code, bad).toBe(-32020)
      expect(invalid.body.error!.message, bad).toContain('the Mcp-Param-Region header cannot be decoded')
    }
    // No argument, no header expected: the tool's own answer (here: region is required).
    const none = await call(m.url, sees, TOOL, {})
    expect(none.status).toBe(200)
  })

  it('a tool the credential does not see answers exactly as one that does not exist, whatever its headers', async () => {
    const answer = async (name: string, headers: Record<string, string | null>) => {
      const r = await call(m.url, blind, name, { region: 'eu-west-1' }, headers)
      return {
        status: r.status,
        error: r.body.error && { code: r.body.error.code, message: r.body.error.message.replace(name, '<name>') },
      }
    }
    const never = await answer('zz_never', {})
    expect(never).toEqual({ status: 200, error: { code: -32602, message: 'Unknown tool: <name>' } })
    for (const headers of [
      {},
      { 'Mcp-Param-Region': 'us-east-1' },
      { 'Mcp-Param-Region': '=?base64?SGVsbG8?=' },
    ] as Array<Record<string, string>>) {
      expect(await answer(TOOL, headers)).toEqual(never)
    }
    // The credential that sees it is refused for the same request.
    expect((await call(m.url, sees, TOOL, { region: 'eu-west-1' })).status).toBe(400)
  })

  it('an SDK client pinned to 2026-07-28 mirrors the headers itself; one that has not listed the tools recovers from the -32020', async () => {
    // What the client sends for each tools/call, and what it gets back.
    const seen: Array<{ region: string | null; status: number }> = []
    const recording = async (input: string | URL, init?: RequestInit) => {
      const response = await fetch(input, init)
      const headers = new Headers(init?.headers)
      if (headers.get('mcp-method') === 'tools/call')
        seen.push({ region: headers.get('mcp-param-region'), status: response.status })
      return response
    }
    const transport = new StreamableHTTPClientTransport(new URL(m.url), {
      fetch: recording,
      requestInit: { headers: { Authorization: `Bearer ${sees}` } },
    })
    const client = new Client(
      { name: 'param-headers-e2e', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    )
    clients.push(client)
    await client.connect(transport)
    expect(client.getNegotiatedProtocolVersion?.()).toBe(MODERN)
    // No tools/list yet: sent without the header, refused, listed, sent again with it.
    const first = await client.callTool({ name: TOOL, arguments: { region: 'ap-south-1' } })
    expect((first.content as Array<{ text: string }>)[0]!.text).toBe('Region: ap-south-1')
    const second = await client.callTool({ name: TOOL, arguments: { region: 'São Paulo' } })
    expect((second.content as Array<{ text: string }>)[0]!.text).toBe('Region: São Paulo')
    expect(seen).toEqual([
      { region: null, status: 400 },
      { region: 'ap-south-1', status: 200 },
      { region: b64('São Paulo'), status: 200 },
    ])
  })

  it('a 2025 session is unchanged: no Mcp-Param-* header needed', async () => {
    const { client } = await connectHttp(m.url, { token: sees })
    clients.push(client)
    const result = await client.callTool({ name: TOOL, arguments: { region: 'eu-west-1' } })
    expect((result.content as Array<{ text: string }>)[0]!.text).toBe('Region: eu-west-1')
  })
})

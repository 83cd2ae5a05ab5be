import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Era } from '../../src/protocol/facts.js'
import { fixture, startFixture, type Running } from '../conformance/run.js'

/**
 * The conformance fixture (tests/fixtures/servers/conformance.mjs) answers
 * both eras on both of its faces: SDK 2.x clients in the 2025 era (the
 * default) and pinned to 2026-07-28, over stdio (serveStdio) and over HTTP
 * (isLegacyRequest in front of createMcpHandler). The same multi-round-trip
 * tool serves both: a 2026 client fulfils the input_required result itself, a
 * 2025 client is asked elicitation/create by the SDK's legacy shim.
 */

const MODERN = '2026-07-28'

function client(era: Era, asked: string[]): Client {
  const c = new Client(
    { name: `fixture-${era}`, version: '1.0.0' },
    {
      capabilities: { elicitation: {} },
      ...(era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN } } } : {}),
    },
  )
  c.setRequestHandler('elicitation/create', (request) => {
    asked.push(String(request.params.message))
    return { action: 'accept', content: { name: 'Ada' } }
  })
  return c
}

function text(result: { content?: unknown }): string {
  return (result.content as Array<{ text: string }>)[0]!.text
}

async function exercise(c: Client, era: Era, asked: string[]): Promise<void> {
  if (era === 'modern') expect(c.getNegotiatedProtocolVersion()).toBe(MODERN)
  else expect(c.getNegotiatedProtocolVersion()).toMatch(/^2025-/)
  const names = (await c.listTools()).tools.map((t) => t.name)
  expect(names).toEqual(
    expect.arrayContaining([
      'test_simple_text',
      'test_input_required_result_elicitation',
      'test_input_required_result_multi_round',
    ]),
  )
  expect(text(await c.callTool({ name: 'test_simple_text', arguments: {} }))).toBe(
    'This is a simple text response for testing.',
  )
  expect(text(await c.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }))).toBe('Hello, Ada!')
  expect(asked).toEqual(['What is your name?'])
}

describe('the conformance fixture serves both eras', () => {
  let http: Running
  const open: Client[] = []
  beforeAll(async () => {
    http = await startFixture()
  })
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => {})))
    await http?.stop()
  })

  for (const era of ['legacy', 'modern'] as const) {
    it(`over stdio, ${era} era`, async () => {
      const asked: string[] = []
      const c = client(era, asked)
      open.push(c)
      await c.connect(new StdioClientTransport({ command: process.execPath, args: [fixture], stderr: 'pipe' }))
      await exercise(c, era, asked)
    })

    it(`over HTTP, ${era} era`, async () => {
      const asked: string[] = []
      const c = client(era, asked)
      open.push(c)
      await c.connect(new StreamableHTTPClientTransport(new URL(http.url)))
      await exercise(c, era, asked)
    })
  }
})

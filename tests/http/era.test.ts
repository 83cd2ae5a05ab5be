import { describe, expect, it } from 'vitest'
import { eraOf, MODERN_PROTOCOL_VERSION, readForEra, type ReadBody } from '../../src/http/era.js'

const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} }
const modernBody = (method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: ENVELOPE } })
const parsed = (value: unknown): ReadBody => ({ parsed: true, value })
const req = (method: string, headers: Record<string, string> = {}) => ({ method, headers: new Headers(headers) })
const modernHeaders = (method: string, extra: Record<string, string> = {}) => ({ 'mcp-protocol-version': MODERN_PROTOCOL_VERSION, 'mcp-method': method, ...extra })

describe('the protocol era of an HTTP request (the SDK classifier, as routeFor uses it)', () => {
  it('2025 traffic is legacy: GET and DELETE, initialize, claim-less requests and notifications, responses, batches', () => {
    expect(eraOf(req('GET'), { parsed: false })).toBe('legacy')
    expect(eraOf(req('DELETE', { 'mcp-session-id': 'x' }), { parsed: false })).toBe('legacy')
    expect(eraOf(req('POST'), parsed({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }))).toBe('legacy')
    expect(eraOf(req('POST', { 'mcp-protocol-version': '2025-11-25' }), parsed({ jsonrpc: '2.0', id: 2, method: 'tools/list' }))).toBe('legacy')
    expect(eraOf(req('POST'), parsed({ jsonrpc: '2.0', method: 'notifications/initialized' }))).toBe('legacy')
    expect(eraOf(req('POST'), parsed({ jsonrpc: '2.0', id: 5, result: {} }))).toBe('legacy')
    expect(eraOf(req('POST'), parsed([{ jsonrpc: '2.0', id: 1, method: 'ping' }]))).toBe('legacy')
  })

  it('a request carrying the 2026 envelope is modern, whatever its method, server/discover included', () => {
    for (const method of ['server/discover', 'tools/list', 'tools/call', 'resources/read', 'subscriptions/listen']) {
      expect(eraOf(req('POST', modernHeaders(method)), parsed(modernBody(method)))).toBe('modern')
    }
    // The body decides: a proxy that strips the headers does not change the era (the modern route then refuses the missing header).
    expect(eraOf(req('POST'), parsed(modernBody('tools/list')))).toBe('modern')
    // initialize with a valid modern envelope is a modern request (answered as an unknown method there).
    expect(eraOf(req('POST', modernHeaders('initialize')), parsed(modernBody('initialize')))).toBe('modern')
  })

  it('envelope and header problems go to the modern route, which answers them with the 2026 codes', () => {
    // A modern header on a body without the envelope: -32602 from the modern route.
    expect(eraOf(req('POST', modernHeaders('tools/list')), parsed({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))).toBe('modern')
    // Mcp-Method disagreeing with the body: -32020.
    expect(eraOf(req('POST', modernHeaders('tools/list')), parsed(modernBody('tools/call', { name: 'x' })))).toBe('modern')
    // The header and the envelope naming two versions: -32020.
    expect(eraOf(req('POST', { 'mcp-protocol-version': '2025-11-25' }), parsed(modernBody('tools/list')))).toBe('modern')
    // An envelope naming a version myc does not serve: -32022.
    expect(eraOf(req('POST'), parsed({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } }))).toBe('modern')
    // initialize (the legacy handshake) sent with a modern header.
    expect(eraOf(req('POST', modernHeaders('initialize')), parsed({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }))).toBe('modern')
    // A batch with a modern element.
    expect(eraOf(req('POST'), parsed([modernBody('tools/list')]))).toBe('modern')
  })

  it('a body the session route owes an answer to stays there: unreadable, not JSON-RPC, or not a POST', () => {
    expect(eraOf(req('POST', modernHeaders('tools/list')), { parsed: false })).toBe('legacy')
    expect(eraOf(req('POST'), parsed({ hello: 'world' }))).toBe('legacy')
    expect(eraOf(req('POST'), parsed([]))).toBe('legacy')
    expect(eraOf(req('GET', modernHeaders('tools/list')), parsed(modernBody('tools/list')))).toBe('legacy')
  })

  it('a modern notification is modern; its method header must still agree', () => {
    const note = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL_VERSION } } }
    expect(eraOf(req('POST', modernHeaders('notifications/cancelled')), parsed(note))).toBe('modern')
    expect(eraOf(req('POST', { 'mcp-protocol-version': MODERN_PROTOCOL_VERSION }), parsed({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }))).toBe('modern')
  })
})

describe('readForEra: the body read once, and handed on', () => {
  const inbound = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }, method = 'POST') => {
    let reads = 0
    const request = new Request('http://127.0.0.1:8808/mcp', { method, headers, ...(method === 'POST' ? { body } : {}) })
    return {
      inbound: {
        request,
        readBody: async (max: number) => {
          reads++
          return body.length > max ? ({ tooLarge: true } as const) : ({ tooLarge: false, text: body } as const)
        },
      },
      reads: () => reads,
    }
  }

  it('parses a JSON POST and gives the route the same text without reading the stream again', async () => {
    const body = JSON.stringify(modernBody('tools/list'))
    const i = inbound(body)
    const read = await readForEra(i.inbound, 1_000)
    expect(read.body).toEqual({ parsed: true, value: JSON.parse(body) })
    expect(await read.inbound.readBody(1_000)).toEqual({ tooLarge: false, text: body })
    expect(i.reads()).toBe(1)
  })

  it('leaves what the session route answers to it: a wrong Content-Type (415) unread, too large (413), too deep or not JSON (400)', async () => {
    const plain = inbound('{}', { 'content-type': 'text/plain' })
    expect((await readForEra(plain.inbound, 1_000)).body).toEqual({ parsed: false })
    expect(plain.reads()).toBe(0)
    const big = inbound(JSON.stringify(modernBody('tools/list')))
    const readBig = await readForEra(big.inbound, 10)
    expect(readBig.body).toEqual({ parsed: false })
    expect(await readBig.inbound.readBody(10)).toEqual({ tooLarge: true })
    expect((await readForEra(inbound('['.repeat(200) + ']'.repeat(200)).inbound, 10_000)).body).toEqual({ parsed: false })
    expect((await readForEra(inbound('{"jsonrpc":').inbound, 1_000)).body).toEqual({ parsed: false })
    const get = inbound('', {}, 'GET')
    expect((await readForEra(get.inbound, 1_000)).body).toEqual({ parsed: false })
    expect(get.reads()).toBe(0)
  })
})

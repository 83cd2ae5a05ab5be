import { describe, expect, it } from 'vitest'
import { eraOf, MODERN_PROTOCOL_VERSION, type ReadBody } from '../../src/http/http-era.js'

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
}
const modernBody = (method: string, params: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: 1,
  method,
  params: { ...params, _meta: ENVELOPE },
})
const parsed = (value: unknown): ReadBody => ({ parsed: true, value })
const req = (method: string, headers: Record<string, string> = {}) => ({ method, headers: new Headers(headers) })
const modernHeaders = (method: string, extra: Record<string, string> = {}) => ({
  'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
  'mcp-method': method,
  ...extra,
})

describe('the protocol era of an HTTP request (the SDK classifier, as routeFor uses it)', () => {
  it('2025 traffic is legacy: GET and DELETE, initialize, claim-less requests and notifications, responses, batches', () => {
    expect(eraOf(req('GET'), { parsed: false })).toBe('legacy')
    expect(eraOf(req('DELETE', { 'mcp-session-id': 'x' }), { parsed: false })).toBe('legacy')
    expect(
      eraOf(
        req('POST'),
        parsed({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
        }),
      ),
    ).toBe('legacy')
    expect(
      eraOf(
        req('POST', { 'mcp-protocol-version': '2025-11-25' }),
        parsed({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      ),
    ).toBe('legacy')
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
    expect(
      eraOf(req('POST', modernHeaders('tools/list')), parsed({ jsonrpc: '2.0', id: 1, method: 'tools/list' })),
    ).toBe('modern')
    // Mcp-Method disagreeing with the body: -32020.
    expect(eraOf(req('POST', modernHeaders('tools/list')), parsed(modernBody('tools/call', { name: 'x' })))).toBe(
      'modern',
    )
    // The header and the envelope naming two versions: -32020.
    expect(eraOf(req('POST', { 'mcp-protocol-version': '2025-11-25' }), parsed(modernBody('tools/list')))).toBe(
      'modern',
    )
    // An envelope naming a version myc does not serve: -32022.
    expect(
      eraOf(
        req('POST'),
        parsed({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/list',
          params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
        }),
      ),
    ).toBe('modern')
    // initialize (the legacy handshake) sent with a modern header.
    expect(
      eraOf(
        req('POST', modernHeaders('initialize')),
        parsed({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
        }),
      ),
    ).toBe('modern')
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
    const note = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 1, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL_VERSION } },
    }
    expect(eraOf(req('POST', modernHeaders('notifications/cancelled')), parsed(note))).toBe('modern')
    expect(
      eraOf(
        req('POST', { 'mcp-protocol-version': MODERN_PROTOCOL_VERSION }),
        parsed({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }),
      ),
    ).toBe('modern')
  })
})

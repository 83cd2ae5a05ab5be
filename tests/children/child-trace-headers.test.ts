import { describe, expect, it } from 'vitest'
import { withTraceHeaders } from '../../src/children/child-trace-headers.js'

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'

/** The init each request reached the wrapped fetch with. */
function recording() {
  const seen: Array<RequestInit | undefined> = []
  const fetch = withTraceHeaders(async (_url, init) => {
    seen.push(init)
    return new Response('{}')
  })
  return { fetch, seen, headers: (i = 0) => new Headers(seen[i]?.headers) }
}

const post = (
  message: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): RequestInit => ({ method: 'POST', headers, body: JSON.stringify(message) })

describe('withTraceHeaders: the trace context of _meta in the HTTP headers too', () => {
  it('copies traceparent, tracestate and baggage from params._meta, keeping the other headers and the body', async () => {
    const r = recording()
    const init = post(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 't', _meta: { traceparent: PARENT, tracestate: 'v=1', baggage: 'user=a' } },
      },
      { 'content-type': 'application/json', 'mcp-session-id': 's1' },
    )
    await r.fetch('http://x/mcp', init)
    expect(Object.fromEntries(r.headers())).toEqual({
      'content-type': 'application/json',
      'mcp-session-id': 's1',
      traceparent: PARENT,
      tracestate: 'v=1',
      baggage: 'user=a',
    })
    expect(r.seen[0]!.body).toBe(init.body)
  })

  it('leaves a request without trace context, a GET, a response and a batch as they were', async () => {
    const r = recording()
    const plain = post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })
    await r.fetch('http://x/mcp', plain)
    await r.fetch('http://x/mcp', { method: 'GET', headers: { accept: 'text/event-stream' } })
    await r.fetch('http://x/mcp', post({ jsonrpc: '2.0', id: 1, result: { _meta: { traceparent: PARENT } } }))
    await r.fetch(
      'http://x/mcp',
      post([{ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { traceparent: PARENT } } }]),
    )
    expect(r.seen[0]).toBe(plain)
    for (const i of [1, 2, 3]) expect(r.headers(i).get('traceparent')).toBeNull()
  })

  it('drops a traceparent that is not W3C and a value a header cannot carry, without failing the request', async () => {
    const r = recording()
    await r.fetch(
      'http://x/mcp',
      post({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { _meta: { traceparent: 'not-a-traceparent\r\nx-evil: 1' } },
      }),
    )
    await r.fetch(
      'http://x/mcp',
      post({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { _meta: { traceparent: `00-${'0'.repeat(32)}-b7ad6b7169203331-01` } },
      }),
    )
    await r.fetch(
      'http://x/mcp',
      post({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { _meta: { traceparent: PARENT, tracestate: 'a=1\r\nx-evil: 1', baggage: 'é=1' } },
      }),
    )
    expect(r.seen).toHaveLength(3)
    expect(r.headers(0).get('traceparent')).toBeNull()
    expect(r.headers(1).get('traceparent')).toBeNull()
    expect(Object.fromEntries(r.headers(2))).toEqual({ 'content-type': 'application/json', traceparent: PARENT })
    expect(r.headers(2).get('x-evil')).toBeNull()
  })

  it('a body whose text names traceparent but is not JSON goes on unchanged', async () => {
    const r = recording()
    const init: RequestInit = { method: 'POST', body: '{"traceparent": broken' }
    await r.fetch('http://x/mcp', init)
    expect(r.seen[0]).toBe(init)
  })
})

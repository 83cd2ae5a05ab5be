import { describe, expect, it } from 'vitest'
import { withHeaderTraceContext } from '../../src/http/trace-headers.js'

const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

describe('withHeaderTraceContext', () => {
  it('puts the headers’ trace context into a request’s _meta when it names none', () => {
    const headers = new Headers({ traceparent: tp, tracestate: 'a=1', baggage: 'k=v' })
    expect(
      withHeaderTraceContext(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', _meta: { progressToken: 3 } } },
        headers,
      ),
    ).toEqual({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'x', _meta: { progressToken: 3, traceparent: tp, tracestate: 'a=1', baggage: 'k=v' } },
    })
    expect(withHeaderTraceContext({ jsonrpc: '2.0', id: 1, method: 'ping' }, headers)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      method: 'ping',
      params: { _meta: { traceparent: tp, tracestate: 'a=1', baggage: 'k=v' } },
    })
  })

  it('leaves _meta’s own context, responses, batches and header-less requests alone', () => {
    const headers = new Headers({ traceparent: tp })
    const own = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: { traceparent: 'mine' } } }
    expect(withHeaderTraceContext(own, headers)).toBe(own)
    const response = { jsonrpc: '2.0', id: 1, result: {} }
    expect(withHeaderTraceContext(response, headers)).toBe(response)
    const batch = [own]
    expect(withHeaderTraceContext(batch, headers)).toBe(batch)
    const plain = { jsonrpc: '2.0', id: 1, method: 'ping' }
    expect(withHeaderTraceContext(plain, new Headers())).toBe(plain)
  })
})

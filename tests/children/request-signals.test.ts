import { getEventListeners } from 'node:events'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { withOwnSignals } from '../../src/children/request-signals.js'

/**
 * The SDK's HTTP client transports give every request the same long-lived
 * signal; withOwnSignals keeps that signal to one listener however many
 * requests go through, and aborting it still ends what is open. Against a
 * real HTTP server: /json answers at once, /sse streams until told to end,
 * /slow answers after 5 s.
 */
describe('withOwnSignals: a signal per request, following the transport’s', () => {
  let server: Server
  let base: string
  const streams: ServerResponse[] = []
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/json') return res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}')
      if (req.url === '/missing') return res.writeHead(404, { 'Content-Type': 'text/plain' }).end('nope')
      if (req.url === '/sse') {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' })
        res.write('data: first\n\n')
        streams.push(res)
        return
      }
      if (req.url === '/sse-short')
        return res.writeHead(200, { 'Content-Type': 'text/event-stream' }).end('data: only\n\n')
      setTimeout(() => res.writeHead(200).end('late'), 5_000).unref()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    for (const res of streams) res.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  it('leaves one listener on the transport’s signal after many requests, JSON and event streams alike', async () => {
    const fetchIt = withOwnSignals()
    const transport = new AbortController()
    for (let i = 0; i < 40; i++) {
      const json = await fetchIt(`${base}/json`, { signal: transport.signal })
      expect(await json.json()).toEqual({ ok: true })
      const sse = await fetchIt(`${base}/sse-short`, { signal: transport.signal })
      expect(await sse.text()).toBe('data: only\n\n')
    }
    expect(getEventListeners(transport.signal, 'abort')).toHaveLength(1)
  })

  it('passes other answers on as they are', async () => {
    const fetchIt = withOwnSignals()
    const response = await fetchIt(`${base}/missing`, { signal: new AbortController().signal })
    expect(response.status).toBe(404)
    expect(response.headers.get('content-type')).toBe('text/plain')
    expect(await response.text()).toBe('nope')
  })

  it('aborting the transport’s signal ends an open event stream and a request still waiting', async () => {
    const fetchIt = withOwnSignals()
    const transport = new AbortController()
    const stream = await fetchIt(`${base}/sse`, { signal: transport.signal })
    expect(stream.headers.get('content-type')).toBe('text/event-stream')
    const reader = stream.body!.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n')
    const waiting = fetchIt(`${base}/slow`, { signal: transport.signal })
    const next = reader.read()
    transport.abort(new Error('transport closed'))
    await expect(next).rejects.toThrow()
    await expect(waiting).rejects.toThrow()
    // After the abort, a new request with the same signal fails at once.
    await expect(fetchIt(`${base}/json`, { signal: transport.signal })).rejects.toThrow()
  })
})

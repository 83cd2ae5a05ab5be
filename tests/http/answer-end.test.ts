import { request, type ClientRequest, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpFace } from '../../src/http/http-face.js'
import { AnswerEnd, type InboundRequest } from '../../src/http/node-bridge.js'
import { nodeServer } from '../../src/http/node-server.js'
import { createLogger } from '../../src/logger.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { faceOptions, initializeBody, mcpHeaders } from '../helpers/http.js'
import { fixtureEntry, startRuntime } from '../helpers/runtime.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * A request counts as in flight until its answer is over. Served by myc's
 * node:http server, the server says when (AnswerEnd, run once the answer has
 * been written to its end or its client went away), and the routes wrap
 * nothing around the answer; served another way, the routes watch the
 * answer's body as before.
 */
describe('AnswerEnd: what runs once an answer is over', () => {
  it('runs what was added once, in the order added, and what is added later at once', () => {
    const end = new AnswerEnd()
    const ran: string[] = []
    end.add(() => ran.push('session'))
    end.add(() => ran.push('credential'))
    expect(ran).toEqual([])
    end.run()
    end.run()
    expect(ran).toEqual(['session', 'credential'])
    end.add(() => ran.push('late'))
    expect(ran).toEqual(['session', 'credential', 'late'])
  })
})

describe("nodeServer: an answer's headers, its writes and its end", () => {
  let server: Server
  let base = ''
  /** Paths whose AnswerEnd ran, in order. */
  const ended: string[] = []
  /** Releases the rest of the body of the answer under way (the test's). */
  let release: () => void = () => {}

  beforeAll(async () => {
    server = nodeServer(createLogger({ quiet: true }), async (req, _res, _timeout, end) => {
      end.add(() => ended.push(req.url ?? ''))
      if (req.url === '/bad') throw new TypeError('a request the web Request cannot hold')
      // /silent has nothing ready; /stream has its first event ready at once, the rest when released.
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          if (req.url === '/stream') controller.enqueue(new TextEncoder().encode('event: message\ndata: first\n\n'))
          release = () => {
            controller.enqueue(new TextEncoder().encode('event: message\ndata: last\n\n'))
            controller.close()
          }
        },
      })
      return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  /** A GET of `path`: its response once the headers came, the body's text so far, and when it ended. */
  const get = (path: string) =>
    new Promise<{ req: ClientRequest; res: IncomingMessage; text: () => string; done: Promise<void> }>(
      (resolve, reject) => {
        const req = request(`${base}${path}`, (res) => {
          let text = ''
          res.setEncoding('utf8').on('data', (d: string) => (text += d))
          const done = new Promise<void>((ok) => res.once('end', () => ok()))
          resolve({ req, res, text: () => text, done })
        })
        req.on('error', reject)
        req.end()
      },
    )

  it('bad input first: an answer that throws is a 400, and its end still runs', async () => {
    ended.length = 0
    const bad = await get('/bad')
    await bad.done
    expect(bad.res.statusCode).toBe(400)
    expect(JSON.parse(bad.text())).toMatchObject({ error: { code: -32600, message: 'Bad Request' } })
    await waitFor(() => ended.includes('/bad'), 10_000, 'the end of the refused answer to run')
  })

  it('sends the headers at once though nothing of the body is ready, and runs the end once the client goes away', async () => {
    ended.length = 0
    const silent = await get('/silent')
    expect(silent.res.statusCode).toBe(200)
    expect(silent.res.headers['content-type']).toBe('text/event-stream')
    expect(ended).toEqual([])
    silent.req.destroy()
    await waitFor(() => ended.includes('/silent'), 10_000, 'the end of the abandoned answer to run')
  })

  it('sends the headers with what is ready, and runs the end only once the whole body has been written', async () => {
    ended.length = 0
    const stream = await get('/stream')
    await waitFor(() => stream.text().includes('data: first'), 10_000, 'the first event')
    expect(ended).toEqual([])
    release()
    await stream.done
    expect(stream.text()).toBe('event: message\ndata: first\n\nevent: message\ndata: last\n\n')
    await waitFor(() => ended.includes('/stream'), 10_000, 'the end of the answer to run')
  })
})

describe('the routes: a request in flight until the server says its answer is over', () => {
  let runtime: Runtime
  const faces: HttpFace[] = []
  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { echo: fixtureEntry('echo') } })
  }, 30_000)
  afterAll(async () => {
    await Promise.all(faces.map((f) => f.close(0)))
    await runtime?.close()
  })

  /** A POST to /mcp as the node bridge hands it to the face; with `end`, its answer's end is the server's to say. */
  const post = (body: string, headers: Record<string, string> = {}, end?: AnswerEnd): InboundRequest => {
    const request = new Request('http://127.0.0.1:8808/mcp', {
      method: 'POST',
      headers: { Host: '127.0.0.1:8808', ...mcpHeaders(headers) },
    })
    const inbound: InboundRequest = { request, readBody: async () => ({ tooLarge: false as const, text: body }) }
    if (end) inbound.answered = (done) => end.add(done)
    return inbound
  }
  const call = (id: number) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'echo__echo', arguments: { message: `call ${id}` } },
    })
  const onSession = (session: string) => ({ 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' })

  it('a session call: in flight on its session and its credential after its body was read, until its end runs', async () => {
    const face = new HttpFace(faceOptions(runtime, [], { maxInFlightPerCredential: 1 }))
    faces.push(face)
    // Served another way (no end): the answer's body is watched, and read to its end it is no longer in flight.
    const init = await face.handle(post(initializeBody))
    const session = init.headers.get('mcp-session-id')!
    expect(await init.text()).toContain('"protocolVersion"')
    expect(face.inFlight).toBe(0)
    const initialized = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })
    expect((await face.handle(post(initialized, onSession(session)))).status).toBe(202)

    const end = new AnswerEnd()
    const answer = await face.handle(post(call(2), onSession(session), end))
    expect(await answer.text()).toContain('call 2')
    expect(face.sessions.get(session)?.inFlight).toBe(1)
    expect(face.inFlight).toBe(1)
    // Its credential's one place is still taken.
    expect((await face.handle(post(call(3), onSession(session)))).status).toBe(429)
    end.run()
    expect(face.sessions.get(session)?.inFlight).toBe(0)
    expect(face.inFlight).toBe(0)
    const next = await face.handle(post(call(3), onSession(session)))
    expect(await next.text()).toContain('call 3')
  })

  it('a 2026 call: in flight after its body was read, until its end runs', async () => {
    const face = new HttpFace(faceOptions(runtime, []))
    faces.push(face)
    const end = new AnswerEnd()
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'echo__echo',
        arguments: { message: 'modern' },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    })
    const headers = { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'echo__echo' }
    const answer = await face.handle(post(body, headers, end))
    expect(await answer.text()).toContain('modern')
    expect(face.inFlight).toBe(1)
    end.run()
    expect(face.inFlight).toBe(0)
  })
})

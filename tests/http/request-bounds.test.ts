import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { ALICE, openRawSession, serveFace, type ServedFace } from '../helpers/http-face.js'
import { loadedConfig, fixtureEntry, startRuntime, waitFor } from '../helpers/runtime.js'

/**
 * What one peer can hold, at the connection: a body that does not arrive
 * in time is dropped; connections per client address are capped. In the
 * test process, behind the node:http server myc uses.
 */
describe('what one peer can hold', () => {
  let runtime: Runtime
  const served: ServedFace[] = []
  const serve = async (...args: Parameters<typeof serveFace> extends [unknown, ...infer R] ? R : never) => {
    const s = await serveFace(runtime, ...args)
    served.push(s)
    return s
  }
  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { echo: fixtureEntry('echo') } })
  }, 30_000)
  afterAll(async () => {
    await Promise.all(served.map((s) => s.close()))
    await runtime?.close()
  })

  it('bad config first: http.bodyTimeoutMs and http.maxConnectionsPerAddress default to 30 s and 512 and must be positive integers', () => {
    const http = loadedConfig({}).config.http
    expect([http.bodyTimeoutMs, http.maxConnectionsPerAddress]).toEqual([30_000, 512])
    expect(() => loadedConfig({ http: { bodyTimeoutMs: 10 } })).toThrow(/http\.bodyTimeoutMs/)
    expect(() => loadedConfig({ http: { maxConnectionsPerAddress: '4' } })).toThrow(/http\.maxConnectionsPerAddress/)
  })

  /** A raw connection to `base`'s port, its bytes as they come, and when it closes. */
  const rawSocket = async (base: string) => {
    const { port } = new URL(base)
    const socket: Socket = connect(Number(port), '127.0.0.1')
    let received = ''
    socket.setEncoding('utf8').on('data', (d: string) => (received += d))
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    socket.on('error', () => {})
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    return { socket, received: () => received, closed }
  }

  it('http.bodyTimeoutMs: a body that has not arrived in time gets 408 and its connection closed; a whole one is served', async () => {
    const { base, url } = await serve({}, { bodyTimeoutMs: 300, maxConnectionsPerAddress: 64 })
    const slow = await rawSocket(base)
    slow.socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ALICE}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n{"jsonrpc":`,
    )
    await slow.closed
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/)
    expect(slow.received()).toContain(
      '"message":"Request Timeout: the body did not arrive within 300 ms (http.bodyTimeoutMs)"',
    )
    expect((await openRawSession(url, ALICE)).status).toBe(200)
  })

  it('http.maxConnectionsPerAddress: one connection more from the address gets 429 and is closed; closing one makes room', async () => {
    const { base } = await serve({}, { bodyTimeoutMs: 30_000, maxConnectionsPerAddress: 2 })
    const held = [await rawSocket(base), await rawSocket(base)]
    const third = await rawSocket(base)
    await third.closed
    expect(third.received()).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/)
    expect(third.received()).toContain('Retry-After: 1\r\n')
    expect(third.received()).toContain(
      '"message":"Too Many Requests: this address has 2 connections open, the most one may (http.maxConnectionsPerAddress is 2); reuse or close one"',
    )
    held[0]!.socket.destroy()
    await held[0]!.closed
    await waitFor(
      async () =>
        (await fetch(`${base}/healthz`, { headers: { Connection: 'close' } }).catch(() => undefined))?.status === 200,
      10_000,
      'a new connection once one closed',
    )
    held[1]!.socket.destroy()
  })
})

import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BodyRefusedError, inboundOf, LEADING_BYTES, sendResponse } from '../../src/http/node-bridge.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * A large body whose id comes first is refused from its first bytes: the
 * rest is thrown away as it comes, never kept (forty 4 MB bodies with one
 * id held 160 MB at once, which the allocator kept). Over a real node:http
 * server; the refusal (what `refuse` decides) is the session route's.
 */
describe('node-bridge: a body refused for its leading id', () => {
  let server: Server
  let base = ''
  /** Ids `refuse` was asked about, in order. */
  const asked: unknown[] = []
  beforeAll(async () => {
    server = createServer((req, res) => {
      void (async () => {
        const inbound = inboundOf(req, base)
        const refused = await inbound.refusedLeadingId!(8_000_000, 64 * 1024, (id) => {
          asked.push(id)
          return id === 77
        })
        if (refused !== undefined) {
          const read = await inbound.readBody(8_000_000).catch((e: unknown) => e)
          return Response.json({ refused, readAfter: read instanceof BodyRefusedError })
        }
        const id = await inbound.requestId!(8_000_000)
        const body = await inbound.readBody(8_000_000)
        return Response.json({ id, chars: body.tooLarge ? -1 : body.text.length })
      })().then((response) => sendResponse(req, res, response))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve))
  })

  /** A POST whose body goes in two parts, the second once `between` resolves; the answer's JSON. */
  const post = (first: string, second: string, between: () => Promise<void>) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = request(
        base,
        { method: 'POST', headers: { 'Content-Length': Buffer.byteLength(first + second) } },
        (res) => {
          let text = ''
          res.setEncoding('utf8').on('data', (d: string) => (text += d))
          res.on('end', () => resolve(JSON.parse(text) as Record<string, unknown>))
        },
      )
      req.on('error', reject)
      req.write(first)
      void between().then(() => req.end(second), reject)
    })
  const value = 'x'.repeat(1_000_000)

  it('is decided from its first bytes, answered once the rest has come, and leaves no body to read', async () => {
    asked.length = 0
    const first = `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"arguments":{"v":"${'x'.repeat(LEADING_BYTES)}`
    let answered = false
    const answer = post(first, `${value}"}}}`, async () => {
      // The rest is not sent until the id was asked about: the decision needs no more of the body.
      await waitFor(() => asked.length === 1, 10_000, 'the leading id to be asked about')
      expect(answered).toBe(false)
    }).then((a) => ((answered = true), a))
    expect(await answer).toEqual({ refused: 77, readAfter: true })
    expect(asked).toEqual([77])
  })

  it('an id it does not refuse, or one after the large value, leaves the body read whole as before', async () => {
    asked.length = 0
    const refusedNot = `{"jsonrpc":"2.0","id":78,"params":{"v":"${value}"}}`
    expect(await post(refusedNot.slice(0, 100), refusedNot.slice(100), async () => {})).toEqual({
      id: 78,
      chars: refusedNot.length,
    })
    const idLast = `{"jsonrpc":"2.0","params":{"v":"${value}"},"id":77}`
    expect(await post(idLast.slice(0, 100), idLast.slice(100), async () => {})).toEqual({
      id: 77,
      chars: idLast.length,
    })
    expect(asked).toEqual([78])
  })
})

import { describe, expect, it } from 'vitest'
import { MODERN_PROTOCOL_VERSION } from '../../src/protocol/facts.js'
import { readForEra } from '../../src/http/era-body.js'

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

describe('readForEra: the body read once, and handed on', () => {
  const inbound = (
    body: string,
    headers: Record<string, string> = { 'content-type': 'application/json' },
    method = 'POST',
  ) => {
    let reads = 0
    const request = new Request('http://127.0.0.1:8808/mcp', {
      method,
      headers,
      ...(method === 'POST' ? { body } : {}),
    })
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
    expect((await readForEra(inbound('['.repeat(200) + ']'.repeat(200)).inbound, 10_000)).body).toEqual({
      parsed: false,
    })
    expect((await readForEra(inbound('{"jsonrpc":').inbound, 1_000)).body).toEqual({ parsed: false })
    const get = inbound('', {}, 'GET')
    expect((await readForEra(get.inbound, 1_000)).body).toEqual({ parsed: false })
    expect(get.reads()).toBe(0)
  })
})

import { describe, expect, it } from 'vitest'
import {
  checkParamHeaders,
  decodeParamHeader,
  paramHeaderRefusal,
  paramHeadersOf,
  toolCallOf,
  type ParamHeader,
} from '../../../src/eras/modern/param-headers.js'

const regionTool = {
  type: 'object',
  properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, note: { type: 'string' } },
  required: ['region'],
}
const b64 = (s: string) => `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`

describe('paramHeadersOf: the arguments a tool asks to be mirrored', () => {
  it('finds x-mcp-header through chains of properties, at any depth', () => {
    const schema = {
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        target: {
          type: 'object',
          properties: {
            shard: { type: 'integer', 'x-mcp-header': 'Shard' },
            dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
          },
        },
      },
    }
    expect(paramHeadersOf(schema)).toEqual([
      { path: ['region'], name: 'Region', type: 'string' },
      { path: ['target', 'shard'], name: 'Shard', type: 'integer' },
      { path: ['target', 'dry'], name: 'Dry-Run', type: 'boolean' },
    ])
  })

  it('none declared, or no schema: nothing to check', () => {
    expect(paramHeadersOf({ type: 'object', properties: { a: { type: 'string' } } })).toBeUndefined()
    expect(paramHeadersOf(undefined)).toBeUndefined()
    expect(paramHeadersOf({ type: 'object' })).toBeUndefined()
  })

  it('invalid declarations are not enforced: a name that is no token, a non-primitive, a case-insensitive repeat, one outside the properties chain, one on the root', () => {
    const one = (prop: Record<string, unknown>) => ({
      type: 'object',
      properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, other: prop },
    })
    expect(paramHeadersOf(one({ type: 'string', 'x-mcp-header': 'Bad Name' }))).toBeUndefined()
    expect(paramHeadersOf(one({ type: 'string', 'x-mcp-header': '' }))).toBeUndefined()
    expect(paramHeadersOf(one({ type: 'object', 'x-mcp-header': 'Obj' }))).toBeUndefined()
    expect(paramHeadersOf(one({ 'x-mcp-header': 'Untyped' }))).toBeUndefined()
    expect(paramHeadersOf(one({ type: 'string', 'x-mcp-header': 'REGION' }))).toBeUndefined()
    expect(paramHeadersOf(one({ type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } }))).toBeUndefined()
    expect(paramHeadersOf(one({ anyOf: [{ type: 'string', 'x-mcp-header': 'Either' }] }))).toBeUndefined()
    expect(paramHeadersOf({ ...regionTool, $defs: { x: { type: 'string', 'x-mcp-header': 'Def' } } })).toBeUndefined()
    expect(paramHeadersOf({ type: 'string', 'x-mcp-header': 'Root' })).toBeUndefined()
    // The valid tool itself is enforced.
    expect(paramHeadersOf(regionTool)).toEqual([{ path: ['region'], name: 'Region', type: 'string' }])
  })
})

describe('decodeParamHeader', () => {
  it('=?base64?…?= is the UTF-8 text of its payload; anything else is literal', () => {
    expect(decodeParamHeader(b64('Hello'))).toBe('Hello')
    expect(decodeParamHeader(b64('Zürich 東京'))).toBe('Zürich 東京')
    expect(decodeParamHeader('=?base64??=')).toBe('')
    expect(decodeParamHeader('SGVsbG8=')).toBe('SGVsbG8=')
    expect(decodeParamHeader('=?base64?SGVsbG8=')).toBe('=?base64?SGVsbG8=')
    expect(decodeParamHeader('SGVsbG8=?=')).toBe('SGVsbG8=?=')
    expect(decodeParamHeader('  eu-west-1 ')).toBe('eu-west-1')
  })

  it('a payload that is not canonical Base64 (padding, alphabet) or not UTF-8 is refused, and so is raw non-ASCII', () => {
    expect(decodeParamHeader('=?base64?SGVsbG8?=')).toBeUndefined()
    expect(decodeParamHeader('=?base64?SGVs!!!bG8=?=')).toBeUndefined()
    expect(decodeParamHeader('=?base64?SGVsbG8=====?=')).toBeUndefined()
    expect(decodeParamHeader('=?base64?SGVs bG8=?=')).toBeUndefined()
    expect(decodeParamHeader(`=?base64?${Buffer.from([0xff, 0xfe]).toString('base64')}?=`)).toBeUndefined()
    expect(decodeParamHeader('Z\u00fcrich')).toBeUndefined()
  })
})

describe('checkParamHeaders', () => {
  const region: ParamHeader[] = [{ path: ['region'], name: 'Region', type: 'string' }]
  const h = (init: Record<string, string>) => new Headers(init)

  it('a header that matches, literally or Base64-encoded, passes; the header name is case-insensitive', () => {
    expect(checkParamHeaders(region, { region: 'eu-west-1' }, h({ 'Mcp-Param-Region': 'eu-west-1' }))).toEqual({
      ok: true,
    })
    expect(checkParamHeaders(region, { region: 'eu-west-1' }, h({ 'mcp-param-region': 'eu-west-1' }))).toEqual({
      ok: true,
    })
    expect(checkParamHeaders(region, { region: 'Zürich' }, h({ 'Mcp-Param-Region': b64('Zürich') }))).toEqual({
      ok: true,
    })
    expect(checkParamHeaders(region, { region: 'SGVsbG8=' }, h({ 'Mcp-Param-Region': 'SGVsbG8=' }))).toEqual({
      ok: true,
    })
  })

  it('the argument set, its header missing: refused, naming the header, the argument and what to send', () => {
    expect(checkParamHeaders(region, { region: 'eu-west-1' }, h({}))).toEqual({
      ok: false,
      kind: 'missing',
      header: 'Mcp-Param-Region',
      argument: 'region',
      fix: 'send Mcp-Param-Region: eu-west-1',
    })
    // What cannot travel plain is said Base64-encoded.
    const check = checkParamHeaders(region, { region: 'Zürich' }, h({}))
    expect(check).toMatchObject({ ok: false, kind: 'missing', fix: `send Mcp-Param-Region: ${b64('Zürich')}` })
  })

  it('a header that says something else, or cannot be decoded: refused', () => {
    expect(checkParamHeaders(region, { region: 'eu-west-1' }, h({ 'Mcp-Param-Region': 'us-east-1' }))).toMatchObject({
      ok: false,
      kind: 'mismatch',
      header: 'Mcp-Param-Region',
      argument: 'region',
    })
    expect(
      checkParamHeaders(region, { region: 'Hello' }, h({ 'Mcp-Param-Region': '=?base64?SGVsbG8?=' })),
    ).toMatchObject({ ok: false, kind: 'invalid', header: 'Mcp-Param-Region' })
    expect(
      checkParamHeaders(region, { region: 'Hello' }, h({ 'Mcp-Param-Region': '=?base64?SGVs!!!bG8=?=' })),
    ).toMatchObject({ ok: false, kind: 'invalid' })
    // Values are case-sensitive.
    expect(checkParamHeaders(region, { region: 'EU' }, h({ 'Mcp-Param-Region': 'eu' }))).toMatchObject({
      ok: false,
      kind: 'mismatch',
    })
  })

  it('an argument absent or null expects no header, and one sent anyway is ignored', () => {
    expect(checkParamHeaders(region, {}, h({}))).toEqual({ ok: true })
    expect(checkParamHeaders(region, { region: null }, h({}))).toEqual({ ok: true })
    expect(checkParamHeaders(region, undefined, h({ 'Mcp-Param-Region': 'anything' }))).toEqual({ ok: true })
  })

  it('numbers compare as numbers (42.0 is 42), booleans as lowercase words, nested arguments by their path', () => {
    const decl: ParamHeader[] = [
      { path: ['n'], name: 'N', type: 'integer' },
      { path: ['flag'], name: 'Flag', type: 'boolean' },
      { path: ['target', 'shard'], name: 'Shard', type: 'string' },
    ]
    const args = { n: 42, flag: false, target: { shard: 's1' } }
    expect(
      checkParamHeaders(decl, args, h({ 'Mcp-Param-N': '42.0', 'Mcp-Param-Flag': 'false', 'Mcp-Param-Shard': 's1' })),
    ).toEqual({ ok: true })
    expect(
      checkParamHeaders(decl, args, h({ 'Mcp-Param-N': '43', 'Mcp-Param-Flag': 'false', 'Mcp-Param-Shard': 's1' })),
    ).toMatchObject({ ok: false, kind: 'mismatch', argument: 'n' })
    expect(
      checkParamHeaders(decl, args, h({ 'Mcp-Param-N': '42', 'Mcp-Param-Flag': 'False', 'Mcp-Param-Shard': 's1' })),
    ).toMatchObject({ ok: false, kind: 'mismatch', argument: 'flag' })
    expect(checkParamHeaders(decl, args, h({ 'Mcp-Param-N': '42', 'Mcp-Param-Flag': 'false' }))).toMatchObject({
      ok: false,
      kind: 'missing',
      header: 'Mcp-Param-Shard',
      argument: 'target.shard',
    })
  })

  it('a long value is not echoed back in the fix', () => {
    const long = 'x'.repeat(500)
    const check = checkParamHeaders(region, { region: long }, h({}))
    expect(check).toMatchObject({ ok: false, fix: 'send Mcp-Param-Region with the value of argument region' })
  })
})

describe('toolCallOf and paramHeaderRefusal', () => {
  it('only a tools/call request naming a tool is checked', () => {
    expect(
      toolCallOf({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 't', arguments: { a: 1 } } }),
    ).toEqual({ id: 7, name: 't', args: { a: 1 } })
    expect(toolCallOf({ jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 't' } })).toEqual({
      id: 'x',
      name: 't',
      args: undefined,
    })
    expect(toolCallOf({ jsonrpc: '2.0', method: 'tools/call', params: { name: 't' } })).toBeUndefined()
    expect(toolCallOf({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBeUndefined()
    expect(toolCallOf({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 3 } })).toBeUndefined()
    expect(toolCallOf([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't' } }])).toBeUndefined()
    expect(toolCallOf(null)).toBeUndefined()
  })

  it('the refusal: HTTP 400, -32020 with the request id, a message naming header, argument and fix, data.mismatch', async () => {
    const check = checkParamHeaders(
      [{ path: ['region'], name: 'Region', type: 'string' }],
      { region: 'eu' },
      new Headers({ 'Mcp-Param-Region': 'us' }),
    )
    if (check.ok) throw new Error('expected a refusal')
    const response = paramHeaderRefusal(check, 12)
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toBe('application/json')
    const body = (await response.json()) as { id: unknown; error: { code: number; message: string; data: unknown } }
    expect(body.id).toBe(12)
    expect(body.error.code).toBe(-32020)
    expect(body.error.message).toBe(
      'Bad Request: the request headers and body disagree: the Mcp-Param-Region header does not match argument region (tool input property "region" is marked x-mcp-header): send Mcp-Param-Region: eu',
    )
    expect(body.error.data).toEqual({ mismatch: { header: 'Mcp-Param-Region', body: 'arguments.region' } })
  })
})

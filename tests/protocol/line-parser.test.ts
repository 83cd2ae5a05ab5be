import { afterAll, describe, expect, it } from 'vitest'
import { LineBlocks } from '../../src/protocol/byte-lines.js'
import { LineParser, type ParsedLine } from '../../src/protocol/line-parser.js'
import { waitFor } from '../helpers/wait-for.js'

const blocksOf = (bytes: Buffer) => {
  const line = new LineBlocks()
  // In pieces, as a pipe brings them.
  for (let at = 0; at < bytes.length; at += 65536) line.append(bytes.subarray(at, at + 65536))
  return line
}

const parser = new LineParser()
afterAll(() => parser.close())
const parse = (bytes: Buffer | string) => parser.parse(blocksOf(typeof bytes === 'string' ? Buffer.from(bytes) : bytes))

describe('LineParser: large lines parsed on a worker thread', () => {
  it('gives what JSON.parse gives, the line’s bytes without its \\r, and where its last "id": is', async () => {
    const line = `{"result":{"content":[{"type":"text","text":"${'é'.repeat(600_000)}"}]},"jsonrpc":"2.0","id":"myc-1"}`
    const parsed = (await parse(`${line}\r`)) as Extract<ParsedLine, { kind: 'message' }>
    expect(parsed.kind).toBe('message')
    expect(parsed.message).toEqual(JSON.parse(line))
    expect(parsed.bytes!.equals(Buffer.from(line))).toBe(true)
    expect(parsed.lastIdAt).toBe(Buffer.from(line).lastIndexOf('"id":'))
  })

  it('keeps an own "__proto__" key an own key, as JSON.parse does (it never becomes the prototype)', async () => {
    const parsed = (await parse(
      `{"jsonrpc":"2.0","id":"myc-2","result":{"__proto__":{"isError":true},"pad":"${'x'.repeat(10_000)}"}}`,
    )) as Extract<ParsedLine, { kind: 'message' }>
    const result = (parsed.message as { result: Record<string, unknown> }).result
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype)
    expect(result.isError).toBeUndefined()
    expect(Object.keys(result)).toEqual(['__proto__', 'pad'])
  })

  it('says what is no message (its start), what is blank, and keeps no bytes of a line that is not UTF-8', async () => {
    expect(await parse(`{"jsonrpc":"2.0",${'x'.repeat(5000)}`)).toEqual({
      kind: 'invalid',
      start: `{"jsonrpc":"2.0",${'x'.repeat(183)}`,
    })
    expect(await parse(' '.repeat(5000))).toEqual({ kind: 'blank' })
    // JSON, but no message.
    expect(await parse(`"${'y'.repeat(5000)}"`)).toEqual({ kind: 'invalid', start: `"${'y'.repeat(199)}` })
    const latin1 = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":"a","result":{"t":"'),
      Buffer.from([0xe9]),
      Buffer.from('"}}'),
    ])
    const parsed = (await parse(latin1)) as Extract<ParsedLine, { kind: 'message' }>
    expect(parsed.message).toEqual({ jsonrpc: '2.0', id: 'a', result: { t: '\ufffd' } })
    expect(parsed.bytes).toBeUndefined()
  })

  it('hands back the bytes of a value it cannot hand over (nested deeper than a clone goes), to be parsed by the caller', async () => {
    const deep = `{"jsonrpc":"2.0","method":"m","params":{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`
    const parsed = await parse(deep)
    expect(parsed.kind).toBe('unread')
    expect((parsed as { bytes: Buffer }).bytes.toString()).toBe(deep)
  })

  it('stops its worker when it has had no line for a while, and starts another for the next line', async () => {
    const idle = new LineParser(10)
    expect(idle.running).toBe(false)
    expect((await idle.parse(blocksOf(Buffer.from('{"a":1}')))).kind).toBe('message')
    await waitFor(() => !idle.running)
    expect(await idle.parse(blocksOf(Buffer.from('{"a":2}')))).toMatchObject({ kind: 'message', message: { a: 2 } })
    idle.close()
    expect(idle.running).toBe(false)
    // The default keeps it between lines that come close together.
    await parse('{"a":3}')
    expect(parser.running).toBe(true)
  })

  it('once closed, leaves every line to the caller', async () => {
    const closed = new LineParser()
    expect((await closed.parse(blocksOf(Buffer.from('{"a":1}')))).kind).toBe('message')
    closed.close()
    const parsed = await closed.parse(blocksOf(Buffer.from('{"a":2}')))
    expect(parsed).toEqual({ kind: 'unread', bytes: Buffer.from('{"a":2}') })
  })
})

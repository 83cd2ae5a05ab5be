import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { humanSink, jsonLinesSink } from '../src/agent/event-stream.js'
import type { AgentEvent } from '../src/agent/events.js'
import { createLogger } from '../src/logger.js'
import { jsonText, logText, terminalText, terminalTextStream } from '../src/terminal-text.js'

const ESC = '\u001b'
const BEL = '\u0007'

/** No character a terminal acts on, but newline and tab. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/

describe('terminalText: control characters shown, never obeyed', () => {
  it.each([
    ['OSC 52 (clipboard write)', `${ESC}]52;c;ZWNobyBwd25lZA==${BEL}`, '\\x1b]52;c;ZWNobyBwd25lZA==\\x07'],
    ['OSC 0 (window title), ST-terminated', `${ESC}]0;pwned${ESC}\\`, '\\x1b]0;pwned\\x1b\\'],
    ['SGR 8 (conceal)', `shown ${ESC}[8mhidden${ESC}[0m`, 'shown \\x1b[8mhidden\\x1b[0m'],
    ['a cursor move (CSI)', `${ESC}[2J${ESC}[H`, '\\x1b[2J\\x1b[H'],
    ['DCS', `${ESC}P1$r${ESC}\\`, '\\x1bP1$r\\x1b\\'],
    ['a lone CR (overwrites the line)', 'rm -rf /\rls', 'rm -rf /\\x0dls'],
    ['backspace', 'safe\b\b\b\bevil', 'safe\\x08\\x08\\x08\\x08evil'],
    ['C1 CSI (U+009B)', '\u009b31mred', '\\x9b31mred'],
    ['C1 OSC (U+009D) and NEL (U+0085)', '\u009d0;t\u0007\u0085', '\\x9d0;t\\x07\\x85'],
    ['DEL', 'a\u007fb', 'a\\x7fb'],
    ['NUL, vertical tab and form feed', 'a\u0000b\u000bc\u000cd', 'a\\x00b\\x0bc\\x0cd'],
    ['a bidi override (RLO … PDF)', 'file\u202Etxt.exe\u202C', 'file\\u202etxt.exe\\u202c'],
    [
      'bidi embeddings and isolates',
      '\u202A\u202B\u202D\u2066\u2067\u2068\u2069',
      '\\u202a\\u202b\\u202d\\u2066\\u2067\\u2068\\u2069',
    ],
    ['bidi marks', '\u200E\u200F\u061C', '\\u200e\\u200f\\u061c'],
  ])('%s', (_name, input, shown) => {
    expect(terminalText(input)).toBe(shown)
    expect(terminalText(input)).not.toMatch(CONTROLS)
  })

  it('keeps newline, tab, CRLF (as a newline) and ordinary Unicode', () => {
    expect(terminalText('a\tb\nc\r\nd')).toBe('a\tb\nc\nd')
    expect(terminalText('héllo → ✓ 日本語 😀 ␛')).toBe('héllo → ✓ 日本語 😀 ␛')
  })

  it('in pieces: a CRLF split over two pieces is a newline, a CR alone still shown', () => {
    const s = terminalTextStream()
    expect(s.write('one\r') + s.write('\ntwo') + s.write(`${ESC}[8m`) + s.end()).toBe('one\ntwo\\x1b[8m')
    const t = terminalTextStream()
    expect(t.write('one\r') + t.write('two\r') + t.end()).toBe('one\\x0dtwo\\x0d')
  })
})

describe('jsonText: the exact text, JSON-escaped', () => {
  it('escapes C0, C1, DEL and bidi controls, and parses back to the same value', () => {
    const value = { text: `${ESC}]52;c;x${BEL} \u009b8m \u202Eevil \u007f \u2028`, nested: ['\r', '\b'] }
    const json = jsonText(value, 2)
    expect(json).not.toMatch(CONTROLS)
    expect(json).toContain('\\u009b')
    expect(json).toContain('\\u202e')
    expect(JSON.parse(json)).toEqual(value)
  })
})

describe('logText: SGR dropped, other controls shown', () => {
  it('drops colours and conceal, shows OSC and lone escapes', () => {
    expect(logText(`${ESC}[36m--format${ESC}[39m ${ESC}[8msecret`)).toBe('--format secret')
    expect(logText(`${ESC}]0;title${BEL}`)).toBe('\\x1b]0;title\\x07')
  })
})

/** Everything written to two streams, as text. */
function capture() {
  const out = new PassThrough()
  const err = new PassThrough()
  let stdout = ''
  let stderr = ''
  out.on('data', (c: Buffer) => (stdout += c.toString()))
  err.on('data', (c: Buffer) => (stderr += c.toString()))
  return { out, err, text: () => ({ stdout, stderr }) }
}

const stamp = { seq: 1, time: new Date().toISOString(), sessionId: 's' }

describe('the event renderings', () => {
  const hostile = `reply ${ESC}]52;c;cm0gLXJmIH4=${BEL}${ESC}]0;owned${BEL}${ESC}[8mhidden\u202E`

  it('humanSink shows the controls in text, streamed text, tool calls and errors', () => {
    const { out, err, text } = capture()
    const sink = humanSink(out, err)
    sink({ ...stamp, type: 'text', text: hostile } as AgentEvent)
    sink({ ...stamp, type: 'text_delta', text: `${ESC}]0;` } as AgentEvent)
    sink({ ...stamp, type: 'text_delta', text: `t${BEL}\r` } as AgentEvent)
    sink({ ...stamp, type: 'text', text: 'ignored: streamed' } as AgentEvent)
    sink({
      ...stamp,
      type: 'tool_call',
      id: '1',
      tool: `fs:${ESC}[2Jx`,
      input: { path: `\u009b8m${ESC}]52;c;x${BEL}` },
    } as AgentEvent)
    sink({ ...stamp, type: 'error', code: 'x', message: `child said ${ESC}]0;t${BEL}` } as AgentEvent)
    const { stdout, stderr } = text()
    expect(stdout).not.toMatch(CONTROLS)
    expect(stderr).not.toMatch(CONTROLS)
    expect(stdout).toBe(
      'reply \\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b]0;owned\\x07\\x1b[8mhidden\\u202e\n\\x1b]0;t\\x07\\x0d\n',
    )
    expect(stderr).toContain('→ fs:\\x1b[2Jx {"path":"\\u009b8m\\u001b]52;c;x\\u0007"}')
    expect(stderr).toContain('myc: child said \\x1b]0;t\\x07')
  })

  it('jsonLinesSink keeps the exact text, escaped', () => {
    const { out, err, text } = capture()
    jsonLinesSink(out)({ ...stamp, type: 'text', text: hostile } as AgentEvent)
    err.end()
    const { stdout } = text()
    expect(stdout).not.toMatch(CONTROLS)
    expect((JSON.parse(stdout) as { text: string }).text).toBe(hostile)
  })
})

describe('the logger', () => {
  it('shows controls and hides URL secrets in what it writes, tags and errors included', () => {
    const stream = new PassThrough() as unknown as NodeJS.WriteStream & PassThrough
    let written = ''
    stream.on('data', (c: Buffer) => (written += c.toString()))
    const logger = createLogger({ stream, env: { NO_COLOR: '1' } })
    logger
      .withTag(`srv${ESC}]0;t${BEL}`)
      .warn(`child stderr: ${ESC}]52;c;eA==${BEL} at http://u:p@127.0.0.1:1/mcp?token=abc`)
    logger.error(new Error(`failed ${ESC}[8m hidden \u202E at http://user:pass@h/x?key=s`))
    expect(written).not.toMatch(CONTROLS)
    expect(written).toContain('\\x1b]52;c;eA==\\x07')
    expect(written).toContain('srv\\x1b]0;t\\x07')
    expect(written).toContain('failed  hidden \\u202e')
    expect(written).toContain('http://***:***@127.0.0.1:1/mcp?token=***')
    expect(written).toContain('http://***:***@h/x?key=***')
    expect(written).not.toMatch(/abc|pass|key=s/)
  })
})

import { describe, expect, it } from 'vitest'
import { forStream, stripAnsi, useColour } from '../src/terminal-colour.js'

const tty = { isTTY: true }
const pipe = { isTTY: false }

describe('useColour: TTY × NO_COLOR × FORCE_COLOR', () => {
  it.each([
    // stream, NO_COLOR, FORCE_COLOR, colour?
    [tty, undefined, undefined, true],
    [pipe, undefined, undefined, false],
    [tty, '1', undefined, false],
    [pipe, '1', undefined, false],
    [tty, 'yes', undefined, false],
    [tty, '', undefined, true], // NO_COLOR counts only when non-empty
    [pipe, undefined, '1', true],
    [pipe, undefined, 'true', true],
    [pipe, undefined, '3', true],
    [tty, undefined, '1', true],
    [pipe, undefined, '', false], // empty FORCE_COLOR forces nothing
    [tty, undefined, '', true],
    [pipe, undefined, '0', false],
    [tty, undefined, '0', false], // FORCE_COLOR=0 turns colour off, as in Node
    [tty, undefined, 'false', false],
    [pipe, '1', '1', false], // NO_COLOR wins
    [tty, '1', '1', false],
  ] as const)('%o NO_COLOR=%s FORCE_COLOR=%s → %s', (stream, noColor, forceColor, expected) => {
    expect(useColour(stream, { NO_COLOR: noColor, FORCE_COLOR: forceColor })).toBe(expected)
  })

  it('a stream without isTTY is not a terminal; TERM=dumb is no colour unless forced', () => {
    expect(useColour({}, {})).toBe(false)
    expect(useColour(tty, { TERM: 'dumb' })).toBe(false)
    expect(useColour(pipe, { TERM: 'dumb', FORCE_COLOR: '1' })).toBe(true)
  })
})

describe('stripping escape codes', () => {
  const coloured =
    '\u001b[4m\u001b[1mUSAGE\u001b[22m\u001b[24m \u001b[36mmyc\u001b[39m \u001b]8;;https://x\u0007link\u001b]8;;\u0007'

  it('stripAnsi leaves only the text', () => {
    expect(stripAnsi(coloured)).toBe('USAGE myc link')
    expect(stripAnsi('plain – ✓ text')).toBe('plain – ✓ text')
  })

  it('forStream strips only when colour is off for the stream', () => {
    expect(forStream(pipe, coloured, {})).toBe('USAGE myc link')
    expect(forStream(tty, coloured, {})).toBe(coloured)
    expect(forStream(pipe, coloured, { FORCE_COLOR: '1' })).toBe(coloured)
    expect(forStream(tty, coloured, { NO_COLOR: '1' })).toBe('USAGE myc link')
  })
})

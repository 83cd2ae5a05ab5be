import { describe, expect, it } from 'vitest'
import { canonicalId, clientNameWarnings, SEPARATORS, toWireName } from '../../src/registry/wire-names.js'

const opts = { separator: '__', maxLength: 64 }

describe('toWireName', () => {
  it('joins server and tool with the separator', () => {
    expect(toWireName('fs', 'read_file', opts)).toBe('fs__read_file')
    for (const separator of SEPARATORS)
      expect(toWireName('fs', 'read_file', { separator, maxLength: 64 })).toBe(`fs${separator}read_file`)
  })

  it('keeps the canonical id separate from the wire name', () => {
    expect(canonicalId('fs', 'read_file')).toBe('fs:read_file')
  })

  it('shortens long names to maxLength with a deterministic hash suffix', () => {
    const long = 'x'.repeat(100)
    const a = toWireName('server', long, opts)
    expect(a).toHaveLength(64)
    expect(a.startsWith('server__xxx')).toBe(true)
    expect(a).toMatch(/_[0-9a-f]{8}$/)
    expect(toWireName('server', long, opts)).toBe(a)
    // Two names that share the first 64 characters still differ.
    expect(toWireName('server', `${long}a`, opts)).not.toBe(toWireName('server', `${long}b`, opts))
  })

  it('respects a small maxLength exactly', () => {
    for (const max of [16, 20, 33, 64, 128]) {
      const name = toWireName('myserver', 'a_really_long_tool_name_that_goes_on_and_on_and_on_forever', {
        separator: '__',
        maxLength: max,
      })
      expect(name.length).toBeLessThanOrEqual(max)
    }
  })

  it('leaves a name of exactly maxLength alone', () => {
    const name = 'a'.repeat(64 - 'fs__'.length)
    expect(toWireName('fs', name, opts)).toBe(`fs__${name}`)
  })

  it('replaces characters clients reject and adds a hash so look-alikes stay distinct', () => {
    const spaced = toWireName('fs', 'read file', opts)
    const slashed = toWireName('fs', 'read/file', opts)
    expect(spaced).toMatch(/^fs__read_file_[0-9a-f]{8}$/)
    expect(slashed).toMatch(/^fs__read_file_[0-9a-f]{8}$/)
    expect(spaced).not.toBe(slashed)
    expect(toWireName('fs', 'read_file', opts)).toBe('fs__read_file')
  })

  it('keeps ":" only when it is the separator', () => {
    expect(toWireName('fs', 'a:b', opts)).toMatch(/^fs__a_b_[0-9a-f]{8}$/)
    expect(toWireName('fs', 'read', { separator: ':', maxLength: 64 })).toBe('fs:read')
  })

  it('handles non-ASCII names', () => {
    const name = toWireName('fs', 'レビュー', opts)
    expect(name).toMatch(/^fs__[A-Za-z0-9_.-]+$/)
  })
})

describe('clientNameWarnings', () => {
  it('warns about names over the Claude Code limit with its prefix', () => {
    const name = `fs__${'a'.repeat(50)}`
    expect(clientNameWarnings(name).some((w) => w.startsWith('Claude Code'))).toBe(true)
    expect(clientNameWarnings('fs__read')).toEqual([])
  })

  it('warns about "." for Copilot CLI', () => {
    expect(clientNameWarnings('fs.read').some((w) => w.startsWith('Copilot CLI'))).toBe(true)
  })
})

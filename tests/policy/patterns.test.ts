import { describe, expect, it } from 'vitest'
import { parsePattern, patternMatches, PatternSet } from '../../src/policy/patterns.js'

const ctx = { separator: '__', servers: new Set(['fs', 'git', 'my-db', 'my', 'mycelium']) }
const p = (source: string, c = ctx) => {
  const r = parsePattern(source, c)
  if (!r.ok) throw new Error(r.error)
  return r.pattern
}

describe('parsePattern', () => {
  it.each([
    ['fs:read_file', 'fs', 'read_file', undefined],
    ['fs__read_file', 'fs', 'read_file', undefined],
    ['fs:*', 'fs', undefined, '^.*$'],
    ['fs__*', 'fs', undefined, '^.*$'],
    ['fs:read_*', 'fs', undefined, '^read_.*$'],
    ['my-db__drop_table', 'my-db', 'drop_table', undefined],
    ['my__x', 'my', 'x', undefined],
    ['git:log:oneline', 'git', 'log:oneline', undefined],
    ['mycelium:exec', 'mycelium', 'exec', undefined],
  ])('%s → server %s', (source, server, exact, glob) => {
    const pattern = p(source)
    expect(pattern.server).toBe(server)
    expect(pattern.exact).toBe(exact)
    expect(pattern.glob?.source).toBe(glob)
  })

  it('prefers the longest server key in the wire form', () => {
    expect(p('my-db__t').server).toBe('my-db')
    const c = { separator: '_', servers: new Set(['a', 'a_b']) }
    expect(p('a_b_c', c)).toMatchObject({ server: 'a_b', exact: 'c' })
  })

  it('takes * alone as every tool of every server', () => {
    const all = p('*')
    expect(all.server).toBe('*')
    expect(patternMatches(all, 'anything', 'at_all')).toBe(true)
  })

  it.each([
    ['', /empty pattern/],
    ['fs:', /names no tool after the server/],
    ['nothere__x', /names no configured server \("nothere" is not one\)/],
    ['read_file', /names no configured server/],
    ['*:read', /server wildcard/],
    ['bad key:x', /is not a server key/],
  ])('rejects %j', (source, message) => {
    const r = parsePattern(source, ctx)
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.error).toMatch(message)
  })

  it('escapes regex characters in globs', () => {
    const glob = p('fs:a.b*')
    expect(patternMatches(glob, 'fs', 'a.bc')).toBe(true)
    expect(patternMatches(glob, 'fs', 'axbc')).toBe(false)
    expect(patternMatches(p('fs:(x)*'), 'fs', '(x)y')).toBe(true)
  })
})

describe('PatternSet', () => {
  const set = new PatternSet([p('fs:read_*'), p('git:log'), p('my__*')])

  it('matches exact names, globs and whole servers', () => {
    expect(set.matches('fs', 'read_file')).toBe(true)
    expect(set.matches('fs', 'write_file')).toBe(false)
    expect(set.matches('git', 'log')).toBe(true)
    expect(set.matches('git', 'logs')).toBe(false)
    expect(set.matches('my', 'anything')).toBe(true)
    expect(set.matches('my-db', 'anything')).toBe(false)
  })

  it('knows which servers it touches', () => {
    expect(set.touches('fs')).toBe(true)
    expect(set.touches('my-db')).toBe(false)
    expect(new PatternSet([p('*')]).touches('whatever')).toBe(true)
  })

  it('is case-sensitive, as tool names are', () => {
    expect(set.matches('fs', 'Read_file')).toBe(false)
    expect(set.matches('FS', 'read_file')).toBe(false)
  })
})

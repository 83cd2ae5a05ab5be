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

describe('parsePattern: separators and edge names', () => {
  it.each(['__', '_', '-', '.', ':'])(
    'reads the wire form with separator %j for exact names, globs and tool names that contain it',
    (sep) => {
      const c = { separator: sep, servers: new Set(['fs', 'git']) }
      expect(p(`fs${sep}read_file`, c)).toMatchObject({ server: 'fs', exact: 'read_file' })
      expect(p(`git${sep}log${sep}oneline`, c)).toMatchObject({ server: 'git', exact: `log${sep}oneline` })
      expect(p(`fs${sep}*`, c)).toMatchObject({ server: 'fs', glob: /^.*$/ })
      expect(p(`fs${sep}read_*`, c).glob!.test('read_text_file')).toBe(true)
      // The canonical form reads the same whatever the separator.
      expect(p('fs:read-file.v2', c)).toMatchObject({ server: 'fs', exact: 'read-file.v2' })
    },
  )

  it('keeps a ":" inside the tool name of a wire-form pattern when the part before ":" is no server', () => {
    expect(p('fs__ns:tool')).toMatchObject({ server: 'fs', exact: 'ns:tool' })
    expect(p('fs:ns:tool')).toMatchObject({ server: 'fs', exact: 'ns:tool' })
  })

  it('takes the canonical form for an unknown server (strict loading then reports it)', () => {
    expect(p('slack:post')).toMatchObject({ server: 'slack', exact: 'post' })
  })

  it('trims surrounding whitespace but keeps the source as written', () => {
    const pattern = p('  fs:read_file ')
    expect(pattern).toMatchObject({ server: 'fs', exact: 'read_file', source: '  fs:read_file ' })
  })

  it('does not take a server key that is only a prefix of another word', () => {
    // "my" is a server but "my-db__x" belongs to "my-db"; "mycelium__exec" to "mycelium".
    expect(p('my-db__x').server).toBe('my-db')
    expect(p('mycelium__exec').server).toBe('mycelium')
    const r = parsePattern('myx__tool', ctx)
    expect(r.ok).toBe(false)
  })

  it('compiles globs with several stars, in any position', () => {
    const g = p('fs:*_file*')
    for (const t of ['read_file', 'write_file_v2', '_file']) expect(patternMatches(g, 'fs', t)).toBe(true)
    for (const t of ['read', 'file', 'readfile']) expect(patternMatches(g, 'fs', t)).toBe(false)
  })

  it('treats regex and glob look-alikes other than * literally', () => {
    for (const [pattern, yes, no] of [
      ['fs:a?c', 'a?c', 'abc'],
      ['fs:[ab]*', '[ab]x', 'ax'],
      ['fs:a+*', 'a+b', 'aab'],
      ['fs:^x$*', '^x$', 'x'],
      ['fs:a|b*', 'a|b', 'a'],
    ] as const) {
      expect(patternMatches(p(pattern), 'fs', yes)).toBe(true)
      expect(patternMatches(p(pattern), 'fs', no)).toBe(false)
    }
  })
})

describe('PatternSet: combined matching', () => {
  it('agrees with patternMatches on every pair of a small catalogue', () => {
    const patterns = ['fs:read_*', 'fs:write_file', 'git__*', 'my:a*b*', 'my-db:q'].map((s) => p(s))
    const set = new PatternSet(patterns)
    const cat: Array<[string, string]> = []
    for (const s of ['fs', 'git', 'my', 'my-db', 'other'])
      for (const t of ['read_file', 'write_file', 'ab', 'axxb', 'a', 'q', 'read_', 'Read_file', '']) cat.push([s, t])
    for (const [s, t] of cat) expect(set.matches(s, t), `${s}:${t}`).toBe(patterns.some((x) => patternMatches(x, s, t)))
  })

  it('"*" matches every server and tool, and says so', () => {
    const set = new PatternSet([p('*')])
    expect(set.matchesEverything).toBe(true)
    expect(set.matches('anything', 'at-all')).toBe(true)
    expect(new PatternSet([p('fs:*')]).matchesEverything).toBe(false)
  })

  it('an empty set matches nothing and touches no server', () => {
    const set = new PatternSet([])
    expect(set.matches('fs', 'read_file')).toBe(false)
    expect(set.touches('fs')).toBe(false)
  })

  it('does not let one server’s glob leak into another server', () => {
    const set = new PatternSet([p('fs:*'), p('git:lo*')])
    expect(set.matches('fs', 'log')).toBe(true)
    expect(set.matches('git', 'log')).toBe(true)
    expect(set.matches('git', 'diff')).toBe(false)
    expect(set.matches('fsx', 'log')).toBe(false)
  })
})

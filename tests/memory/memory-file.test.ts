import { describe, expect, it } from 'vitest'
import { handEntryId, parseMemoryFile, renderMemoryFile, type MemoryEntry } from '../../src/memory/memory-file.js'

const T = '2026-11-23T10:00:00.000Z'
const entry = (over: Partial<MemoryEntry>): MemoryEntry => ({
  id: 'mem_a1',
  role: 'dev',
  type: 'note',
  tags: [],
  createdAt: T,
  content: 'x',
  ...over,
})

describe('memory file: round trip', () => {
  it('renders title, last-modified, count and a section per type, and reads every field back', () => {
    const entries = [
      entry({ id: 'mem_p1', type: 'preference', content: 'Use pnpm, not npm.', tags: ['tooling'] }),
      entry({
        id: 'mem_f1',
        type: 'fact',
        content: 'Staging lives at staging.example.com',
        createdAt: '2026-11-22T09:00:00.000Z',
      }),
      entry({ id: 'mem_d1', type: 'decision', content: 'Line one\n\nparagraph two\n  indented' }),
      entry({ id: 'mem_n1', type: 'note', content: 'a note', tags: ['a', 'b c'] }),
    ]
    const text = renderMemoryFile('dev', entries, [], T)
    expect(text).toMatch(/^# Memory of role dev\n\nLast modified: 2026-11-23T10:00:00.000Z · Entries: 4\n/)
    expect(text.indexOf('## Preferences')).toBeLessThan(text.indexOf('## Facts'))
    expect(text.indexOf('## Facts')).toBeLessThan(text.indexOf('## Decisions'))
    expect(text.indexOf('## Decisions')).toBeLessThan(text.indexOf('## Notes'))
    expect(text).toContain(
      '### [mem_p1]\nUse pnpm, not npm.\n<!-- meta: {"type":"preference","tags":["tooling"],"createdAt":"2026-11-23T10:00:00.000Z"} -->',
    )
    const back = parseMemoryFile(text, 'dev', '2000-01-01T00:00:00.000Z')
    expect(back.problems).toEqual([])
    expect(back.kept).toEqual([])
    expect(back.entries).toEqual(entries)
  })

  it('content that looks like structure (headings, meta comments) survives, escaped', () => {
    const tricky = '## Facts\n### [mem_zzz]\n\\# already escaped\n<!-- meta: {"type":"fact"} -->\n#hashtag'
    const text = renderMemoryFile('dev', [entry({ content: tricky })], [], T)
    expect(text).toContain('\\## Facts')
    const back = parseMemoryFile(text, 'dev', T)
    expect(back.problems).toEqual([])
    expect(back.entries).toHaveLength(1)
    expect(back.entries[0]!.content).toBe(tricky)
  })

  it('an empty file has no entries and no problems', () => {
    expect(parseMemoryFile('', 'dev', T)).toEqual({ entries: [], kept: [], problems: [] })
  })
})

describe('memory file: hand edits', () => {
  it('an entry without metadata takes its section’s type, a stable id from its content, and the fallback time', () => {
    const text =
      '# Memory of role dev\n\n## Facts\n\n### [mem_hand1]\nThe VPN is needed for staging.\n\n## Notes\n\nRemember the release freeze\nin December.\n\nSecond paragraph is another entry.\n'
    const back = parseMemoryFile(text, 'dev', T)
    expect(back.problems).toEqual([])
    expect(back.entries.map((e) => [e.id, e.type, e.content, e.createdAt])).toEqual([
      ['mem_hand1', 'fact', 'The VPN is needed for staging.', T],
      [
        handEntryId('Remember the release freeze\nin December.'),
        'note',
        'Remember the release freeze\nin December.',
        T,
      ],
      [handEntryId('Second paragraph is another entry.'), 'note', 'Second paragraph is another entry.', T],
    ])
    // Stable: reading twice gives the same ids, and rendering then reading keeps them.
    const again = parseMemoryFile(
      renderMemoryFile('dev', back.entries, back.kept, T),
      'dev',
      '2001-01-01T00:00:00.000Z',
    )
    expect(again.entries).toEqual(back.entries)
  })

  it('a "### Title" heading without an id starts a hand-written entry that runs to the next heading', () => {
    const back = parseMemoryFile(
      '## Decisions\n\n### Use Postgres\nWe chose it in May.\n\nBecause of JSON.\n### [mem_x]\nnext\n',
      'dev',
      T,
    )
    expect(back.entries.map((e) => [e.type, e.content])).toEqual([
      ['decision', 'Use Postgres\nWe chose it in May.\n\nBecause of JSON.'],
      ['decision', 'next'],
    ])
  })

  it('entries outside a known section are notes unless their metadata says otherwise, with a problem for the section', () => {
    const back = parseMemoryFile(
      '## Misc\n\n### [mem_a]\nplain\n\n### [mem_b]\ntyped\n<!-- meta: {"type":"fact","tags":[],"createdAt":"2026-01-01T00:00:00.000Z"} -->\n',
      'dev',
      T,
    )
    expect(back.entries.map((e) => [e.id, e.type])).toEqual([
      ['mem_a', 'note'],
      ['mem_b', 'fact'],
    ])
    expect(back.problems).toEqual([{ line: 1, message: expect.stringContaining('unknown section "Misc"') }])
  })
})

describe('memory file: malformed parts are kept verbatim and reported', () => {
  const bad = [
    '# Memory of role dev',
    'stray text before any section',
    '',
    '## Notes',
    '',
    '### [mem_ok]',
    'fine',
    '',
    '### [mem_badjson]',
    'content',
    '<!-- meta: {"type": -->',
    '',
    '### [mem_badtype]',
    'content',
    '<!-- meta: {"type":"secret","tags":[],"createdAt":"2026-01-01T00:00:00.000Z"} -->',
    '',
    '### [not an id]',
    'whatever',
    '',
    '### [mem_ok]',
    'duplicate',
    '',
  ].join('\n')

  it('reads the good entry, keeps every bad block verbatim with its line, and a rewrite keeps them', () => {
    const back = parseMemoryFile(bad, 'dev', T)
    expect(back.entries.map((e) => e.id)).toEqual(['mem_ok'])
    expect(back.problems.map((p) => p.line)).toEqual([2, 9, 13, 17, 20])
    expect(back.problems[1]!.message).toMatch(/not a JSON object/)
    expect(back.problems[2]!.message).toMatch(/type "secret"/)
    expect(back.problems[3]!.message).toMatch(/not an entry id/)
    expect(back.problems[4]!.message).toMatch(/appears twice/)
    expect(back.kept).toContain('### [mem_badjson]\ncontent\n<!-- meta: {"type": -->')
    expect(back.kept).toContain('stray text before any section')
    const rewritten = renderMemoryFile('dev', back.entries, back.kept, T)
    for (const block of back.kept) expect(rewritten).toContain(block)
    // Read again: the kept blocks stay kept (not turned into entries), and are reported once more.
    const again = parseMemoryFile(rewritten, 'dev', T)
    expect(again.entries.map((e) => e.id)).toEqual(['mem_ok'])
    expect(again.kept.join('\n')).toContain('### [mem_badtype]')
    expect(again.problems).toHaveLength(1)
  })
})

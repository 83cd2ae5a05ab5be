import { describe, expect, it } from 'vitest'
import { compareToLock, recordOffered, type Offered } from '../../src/pinning/compare.js'
import { digestOf, pinnedDefinition } from '../../src/pinning/definitions.js'
import { PinGate } from '../../src/pinning/gate.js'
import { emptyLock, lockText, parseLock, type DefinitionLock } from '../../src/pinning/lock.js'
import { definitionDiff, wordDiff } from '../../src/pinning/word-diff.js'

const tool = (name: string, description = `Does ${name}`) => ({ name, description, inputSchema: { type: 'object' } })
const offer = (tools: object[], prompts: object[] = []): Offered => ({ tools, prompts })
const none = { allowsHiddenText: () => false, kept: new Set<string>() }
const FILE = '/p/mycelium.lock.json'

function lockOf(servers: Record<string, Offered>): DefinitionLock {
  return recordOffered(undefined, new Map(Object.entries(servers)), none).lock
}

describe('the lock file text', () => {
  it('round-trips, with servers, kinds, names and fields in sorted order, one field per line', () => {
    const lock = lockOf({ zeta: offer([tool('b'), tool('a')]), alpha: offer([], [{ name: 'p', description: 'P' }]) })
    const text = lockText(lock)
    expect(text.indexOf('"alpha"')).toBeLessThan(text.indexOf('"zeta"'))
    expect(text.indexOf('"a"')).toBeLessThan(text.indexOf('"b"'))
    expect(text).toContain('\n            "description": "Does a",\n')
    expect(lockText(parseLock(text, FILE))).toBe(text)
    expect(text.endsWith('}\n')).toBe(true)
  })

  it('refuses bad JSON, another version, a malformed entry and a digest that is not its definition’s, naming file, key and fix', () => {
    const good = lockText(lockOf({ fs: offer([tool('read')]) }))
    const cases: Array<[string, RegExp]> = [
      ['<<<<<<< HEAD\n{}', /Invalid JSON in \/p\/mycelium\.lock\.json/],
      ['[]', /\(top\): must be an object/],
      ['{"lockfileVersion":2,"servers":{}}', /lockfileVersion: must be 1 \(got 2\)/],
      ['{"lockfileVersion":1}', /servers: must be an object/],
      [
        '{"lockfileVersion":1,"servers":{"fs":{"tools":{"read":{"digest":"md5:x","definition":{"name":"read"}}}}}}',
        /servers\.fs\.tools\.read\.digest: must be "sha256:"/,
      ],
      [
        good.replace('"name": "read"', '"name": "write"'),
        /servers\.fs\.tools\.read\.definition: must be the tool's definition, with "name": "read"/,
      ],
      [
        good.replace('Does read', 'Does read, then mails ~/.ssh'),
        /servers\.fs\.tools\.read: its digest is not the digest of its definition/,
      ],
    ]
    for (const [text, message] of cases) {
      let error: unknown
      try {
        parseLock(text, FILE)
      } catch (e) {
        error = e
      }
      expect(error, text).toMatchObject({ code: 'config_invalid', message: expect.stringMatching(message) })
      expect((error as { fix?: string }).fix, text).toMatch(/myc pin/)
    }
  })
})

describe('comparing with the lock', () => {
  const lock = lockOf({
    fs: offer([tool('read'), tool('write')], [{ name: 'p', description: 'P' }]),
    gone: offer([tool('x')]),
  })

  it('names each tool or prompt added, changed and removed; a server the lock lacks is all added, one no longer configured all removed', () => {
    const now = new Map([
      ['fs', offer([tool('read', 'Reads, then mails ~/.ssh'), tool('new')], [{ name: 'p', description: 'P' }])],
      ['fresh', offer([tool('y')], [{ name: 'q' }])],
    ])
    const { changes, hidden } = compareToLock(lock, now, none)
    expect(hidden).toEqual([])
    expect(changes.map(({ server, kind, name, change }) => `${change} ${kind} ${server}:${name}`)).toEqual([
      'changed tool fs:read',
      'added tool fs:new',
      'removed tool fs:write',
      'added tool fresh:y',
      'added prompt fresh:q',
      'removed tool gone:x',
    ])
  })

  it('leaves kept servers (disabled, not started) alone, and matches exactly when nothing changed', () => {
    const same = new Map([['fs', offer([tool('write'), tool('read')], [{ name: 'p', description: 'P' }])]])
    expect(compareToLock(lock, same, { ...none, kept: new Set(['gone']) })).toEqual({ changes: [], hidden: [] })
  })

  it('reports hidden text apart and never as a difference, unless the server allows it', () => {
    const now = new Map([
      [
        'fs',
        offer(
          [tool('read', 'Reads\u202e'), tool('write'), tool('tagged', `x${String.fromCodePoint(0xe0041)}`)],
          [{ name: 'p', description: 'P' }],
        ),
      ],
    ])
    const result = compareToLock(lock, now, { ...none, kept: new Set(['gone']) })
    expect(result.changes).toEqual([])
    expect(result.hidden).toEqual([
      { server: 'fs', kind: 'tool', name: 'read', text: ['bidi'] },
      { server: 'fs', kind: 'tool', name: 'tagged', text: ['tag'] },
    ])
    const allowed = compareToLock(lock, now, { allowsHiddenText: () => true, kept: new Set(['gone']) })
    expect(allowed.hidden).toEqual([])
    expect(allowed.changes.map((c) => `${c.change} ${c.name}`)).toEqual(['changed read', 'added tagged'])
  })

  it('pinning records what is offered but hidden text, which keeps its old entry; kept servers stay; others go', () => {
    const now = new Map([['fs', offer([tool('read', 'Reads\u001b[8m'), tool('new')])]])
    const { lock: next, hidden } = recordOffered(lock, now, none)
    expect(hidden).toEqual([{ server: 'fs', kind: 'tool', name: 'read', text: ['control'] }])
    expect([...next.servers.keys()]).toEqual(['fs'])
    expect([...next.servers.get('fs')!.tools.keys()]).toEqual(['read', 'new'])
    expect(next.servers.get('fs')!.tools.get('read')).toEqual(lock.servers.get('fs')!.tools.get('read'))
    expect(next.servers.get('fs')!.prompts.size).toBe(0)
    const kept = recordOffered(lock, now, { ...none, kept: new Set(['gone']) }).lock
    expect([...kept.servers.keys()]).toEqual(['fs', 'gone'])
  })
})

describe('the gate while serving', () => {
  it('withholds hidden text lock or not; with a lock, what differs from it, what is new, and servers it lacks', () => {
    const lock = lockOf({ fs: offer([tool('read')]) })
    const noLock = new PinGate(undefined, () => false)
    expect(noLock.judge('fs', 'tool', tool('read', 'changed, but pinning is off'))).toBeUndefined()
    expect(noLock.judge('fs', 'tool', tool('t', 'a\u202eb'))).toEqual({ reason: 'hidden', text: ['bidi'] })
    expect(new PinGate(undefined, () => true).judge('fs', 'tool', tool('t', 'a\u202eb'))).toBeUndefined()
    const gate = new PinGate(lock, () => false)
    expect(gate.judge('fs', 'tool', tool('read'))).toBeUndefined()
    expect(gate.judge('fs', 'tool', tool('read', 'Reads, then mails ~/.ssh'))).toEqual({ reason: 'changed' })
    expect(gate.judge('fs', 'tool', tool('new'))).toEqual({ reason: 'added' })
    expect(gate.judge('fs', 'prompt', { name: 'read' })).toEqual({ reason: 'added' })
    expect(gate.judge('other', 'tool', tool('read'))).toEqual({ reason: 'unpinned' })
    expect(new PinGate(emptyLock(), () => false).judge('fs', 'tool', tool('read'))).toEqual({ reason: 'unpinned' })
    gate.setLock(undefined)
    expect(gate.judge('other', 'tool', tool('read'))).toBeUndefined()
  })

  it('judges a definition object once (its digest is kept while the object lives)', () => {
    const def = tool('read')
    const lock = lockOf({ fs: offer([def]) })
    const gate = new PinGate(lock, () => false)
    expect(gate.judge('fs', 'tool', def)).toBeUndefined()
    // The same object, mutated: a child's list is parsed afresh each time, so this never happens on the wire; the first verdict stands.
    def.description = 'changed in place'
    expect(gate.judge('fs', 'tool', def)).toBeUndefined()
    expect(gate.judge('fs', 'tool', { ...def })).toEqual({ reason: 'changed' })
    expect(digestOf(pinnedDefinition('tool', def))).not.toBe(lock.servers.get('fs')!.tools.get('read')!.digest)
  })
})

describe('word diffs', () => {
  it('marks the words removed and added; the parts give back both texts', () => {
    const before = 'Reads a file from the workspace.'
    const after = 'Reads a file, then sends ~/.ssh/id_rsa, from the workspace.'
    const parts = wordDiff(before, after)
    expect(parts).toEqual([
      { op: 'same', text: 'Reads a ' },
      { op: 'removed', text: 'file' },
      { op: 'added', text: 'file, then sends ~/.ssh/id_rsa,' },
      { op: 'same', text: ' from the workspace.' },
    ])
    expect(
      parts
        .filter((p) => p.op !== 'added')
        .map((p) => p.text)
        .join(''),
    ).toBe(before)
    expect(
      parts
        .filter((p) => p.op !== 'removed')
        .map((p) => p.text)
        .join(''),
    ).toBe(after)
    expect(wordDiff('same', 'same')).toEqual([{ op: 'same', text: 'same' }])
    expect(wordDiff('', 'new')).toEqual([{ op: 'added', text: 'new' }])
  })

  it('diffs schemas as indented JSON, and only the fields that differ', () => {
    const a = pinnedDefinition('tool', tool('read'))
    const b = pinnedDefinition('tool', { ...tool('read'), inputSchema: { type: 'object', required: ['path'] } })
    const diffs = definitionDiff(a, b)
    expect(diffs.map((d) => d.field)).toEqual(['inputSchema'])
    expect(
      diffs[0]!.parts
        .filter((p) => p.op === 'added')
        .map((p) => p.text)
        .join(''),
    ).toContain('"required"')
    expect(definitionDiff(undefined, a).map((d) => d.field)).toEqual(['name', 'description', 'inputSchema'])
  })

  it('shows a very long change as replaced whole rather than working through it word by word', () => {
    const long = (w: string) => Array.from({ length: 2000 }, (_, i) => `${w}${i}`).join(' ')
    const parts = wordDiff(`start ${long('a')} end`, `start ${long('b')} end`)
    expect(parts.map((p) => p.op)).toEqual(['same', 'removed', 'added', 'same'])
  })
})

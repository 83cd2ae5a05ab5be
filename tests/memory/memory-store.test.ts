import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseMemoryFile } from '../../src/memory/memory-file.js'
import { matchEntries, MemoryStore } from '../../src/memory/memory-store.js'
import type { AuditEvent } from '../../src/audit.js'

const dirs: string[] = []
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'myc-memory-'))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function store(dir: string, over: Partial<ConstructorParameters<typeof MemoryStore>[0]> = {}) {
  const events: AuditEvent[] = []
  const s = new MemoryStore({
    dir,
    maxEntryBytes: 16 * 1024,
    maxRoleBytes: 2 * 1024 * 1024,
    audit: { write: (e) => events.push(e), flush: async () => {} },
    ...over,
  })
  return { s, events }
}

describe('MemoryStore', () => {
  it('saves, reads back from the Markdown file, forgets; audit has ids and sizes, never content', async () => {
    const dir = tempDir()
    const { s, events } = store(dir)
    const a = await s.save('dev', { content: 'Use pnpm', type: 'preference', tags: ['tooling'] }, 'agent')
    const b = await s.save('dev', { content: 'Secret-ish detail', type: 'fact', tags: [] }, 'agent')
    expect(a.ok && b.ok).toBe(true)
    const file = path.join(dir, 'dev.memory.md')
    expect(readFileSync(file, 'utf8')).toContain('Use pnpm')
    const fresh = new MemoryStore({ dir, maxEntryBytes: 1e6, maxRoleBytes: 1e7 })
    expect((await fresh.read('dev')).entries.map((e) => e.content)).toEqual(['Use pnpm', 'Secret-ish detail'])
    expect(await s.forget('dev', a.ok ? a.entry.id : '', 'operator')).toBe(true)
    expect(await s.forget('dev', 'mem_nope', 'operator')).toBe(false)
    expect((await fresh.read('dev')).entries.map((e) => e.content)).toEqual(['Secret-ish detail'])
    expect(events.map((e) => e.event)).toEqual(['memory_saved', 'memory_saved', 'memory_forgotten'])
    expect(JSON.stringify(events)).not.toContain('pnpm')
    expect(events[0]).toMatchObject({ role: 'dev', type: 'preference', bytes: 8, by: 'agent' })
    expect(events[2]).toMatchObject({ by: 'operator' })
    expect(readdirSync(dir).sort()).toEqual(['dev.memory.md']) // no temp or lock files left
  })

  it('refuses an entry over the entry cap and a save that would pass the role cap, naming the setting; nothing is truncated', async () => {
    const dir = tempDir()
    const { s } = store(dir, { maxEntryBytes: 100, maxRoleBytes: 2048 })
    const big = await s.save('dev', { content: 'x'.repeat(101), type: 'note', tags: [] }, 'agent')
    expect(big).toEqual({ ok: false, error: expect.stringContaining('memory.maxEntryBytes') })
    let last: Awaited<ReturnType<MemoryStore['save']>> | undefined
    for (let i = 0; i < 40; i++) {
      last = await s.save('dev', { content: `entry ${i} ${'y'.repeat(80)}`, type: 'note', tags: [] }, 'agent')
      if (!last.ok) break
    }
    expect(last).toEqual({ ok: false, error: expect.stringContaining('memory.maxRoleBytes') })
    const saved = (await s.read('dev')).entries
    expect(saved.length).toBeGreaterThan(5)
    expect(saved.every((e) => e.content.endsWith('y'.repeat(80)))).toBe(true)
    expect(readFileSync(path.join(dir, 'dev.memory.md')).length).toBeLessThanOrEqual(2048)
  })

  it('200 saves at once in one process lose nothing', async () => {
    const { s } = store(tempDir())
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => s.save('dev', { content: `n${i}`, type: 'note', tags: [] }, 'agent')),
    )
    expect(results.every((r) => r.ok)).toBe(true)
    expect(new Set((await s.read('dev')).entries.map((e) => e.content)).size).toBe(200)
  })

  it('refuses role names that could leave the folder', async () => {
    const { s } = store(tempDir())
    for (const bad of ['../x', 'a/b', '..', 'a.b', '', 'a b'])
      await expect(s.save(bad, { content: 'x', type: 'note', tags: [] }, 'agent')).rejects.toThrow(/not a role name/)
    await expect(s.read('../../etc/passwd')).rejects.toThrow(/not a role name/)
  })

  it('takes over a lock left by a process that died', async () => {
    const dir = tempDir()
    const { s } = store(dir)
    writeFileSync(
      path.join(dir, 'dev.memory.md.lock'),
      JSON.stringify({
        pid: 2 ** 22 + 12345,
        host: (await import('node:os')).hostname(),
        time: new Date().toISOString(),
      }),
    )
    const r = await s.save('dev', { content: 'after a crash', type: 'note', tags: [] }, 'agent')
    expect(r.ok).toBe(true)
  })

  it('a process killed mid-write leaves a whole file (the old or the new), never a torn one', async () => {
    const dir = tempDir()
    const script = path.join(dir, 'saver.mts')
    writeFileSync(
      script,
      `import { MemoryStore } from ${JSON.stringify(path.resolve('src/memory/memory-store.ts'))}
const s = new MemoryStore({ dir: ${JSON.stringify(dir)}, maxEntryBytes: 1e6, maxRoleBytes: 1e8 })
process.stdout.write('ready\\n')
void (async () => {
  for (let i = 0; ; i++) await s.save('dev', { content: 'entry ' + i + ' ' + 'z'.repeat(4000), type: 'note', tags: [] }, 'agent')
})()
`,
    )
    for (let round = 0; round < 3; round++) {
      const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] })
      const started = await new Promise<boolean>((resolve) => {
        child.stdout.once('data', () => resolve(true))
        child.once('exit', () => resolve(false))
      })
      expect(started).toBe(true)
      await new Promise((r) => setTimeout(r, 150 + Math.random() * 150))
      child.kill('SIGKILL')
      await new Promise((r) => child.once('exit', r))
      const text = readFileSync(path.join(dir, 'dev.memory.md'), 'utf8')
      const parsed = parseMemoryFile(text, 'dev', new Date().toISOString())
      expect(parsed.problems).toEqual([])
      expect(text).toMatch(new RegExp(`Entries: ${parsed.entries.length}\\n`))
      expect(parsed.entries.length).toBeGreaterThan(0)
      // The killed process's lock is taken over by the next round (its pid is gone).
    }
  }, 60_000)
})

describe('matchEntries', () => {
  const e = (content: string, createdAt: string, tags: string[] = [], type: 'note' | 'fact' = 'note') => ({
    id: `mem_${createdAt.slice(0, 4)}`,
    role: 'dev',
    type,
    tags,
    createdAt,
    content,
  })
  const all = [
    e('We deploy to Staging on Fridays', '2026-01-01T00:00:00.000Z', ['ops']),
    e('Redeploy after migrations', '2026-02-01T00:00:00.000Z'),
    e('Use pnpm', '2026-03-01T00:00:00.000Z', ['tooling'], 'fact'),
  ]
  it('every query word must begin a word (case-insensitive, any order); newest first; empty lists all', () => {
    expect(matchEntries(all, { query: 'staging DEPLOY' }).map((x) => x.content)).toEqual([
      'We deploy to Staging on Fridays',
    ])
    expect(matchEntries(all, { query: 'deploy' }).map((x) => x.content)).toEqual(['We deploy to Staging on Fridays'])
    expect(matchEntries(all, { query: 'deploy friday' }).map((x) => x.content)).toEqual([
      'We deploy to Staging on Fridays',
    ])
    expect(matchEntries(all, { query: 'deploy monday' })).toEqual([])
    expect(matchEntries(all, {}).map((x) => x.content)).toEqual([
      'Use pnpm',
      'Redeploy after migrations',
      'We deploy to Staging on Fridays',
    ])
  })
  it('filters by type and by every tag, matches tags as words, and limits', () => {
    expect(matchEntries(all, { type: 'fact' }).map((x) => x.content)).toEqual(['Use pnpm'])
    expect(matchEntries(all, { tags: ['OPS'] }).map((x) => x.content)).toEqual(['We deploy to Staging on Fridays'])
    expect(matchEntries(all, { query: 'tooling' }).map((x) => x.content)).toEqual(['Use pnpm'])
    expect(matchEntries(all, { limit: 1 })).toHaveLength(1)
  })
})

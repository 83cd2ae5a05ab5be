import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from './helpers/fixtures.js'

const loader = path.join(repoRoot, 'tests', 'fixtures', 'servers', '_cached-require.cjs')

/** Loads `file` through the fixtures' cached loader in a Node of its own: what its export answers. */
function load(file: string): string {
  const r = spawnSync(
    process.execPath,
    ['-e', `process.stdout.write(require(${JSON.stringify(loader)})(${JSON.stringify(file)}).answer())`],
    {
      encoding: 'utf8',
    },
  )
  expect(r.status, r.stderr).toBe(0)
  return r.stdout
}

const caches = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.v8'))

/** The fixture servers load the SDK's bundle with V8's code cache of it (tests/fixtures/servers/_cached-require.cjs). */
describe("the fixture servers' cached loader", () => {
  it('writes a cache for the file, uses it, and never runs a stale or broken one', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-cached-require-'))
    const file = path.join(dir, 'lib.cjs')
    writeFileSync(file, "exports.answer = () => 'one:' + require('node:path').basename(__filename)\n")
    expect(load(file)).toBe('one:lib.cjs')
    const [cache, ...more] = caches(dir)
    expect(more).toEqual([])
    const { ino } = statSync(path.join(dir, cache!))
    expect(load(file)).toBe('one:lib.cjs')
    expect(statSync(path.join(dir, cache!)).ino).toBe(ino)
    // Same length, other code: a cache of its own, so the old code never runs.
    writeFileSync(file, "exports.answer = () => 'two:' + require('node:path').basename(__filename)\n")
    expect(load(file)).toBe('two:lib.cjs')
    expect(caches(dir)).toHaveLength(2)
    // Garbage under the current name is refused and written again.
    const current = caches(dir).find((f) => f !== cache)!
    writeFileSync(path.join(dir, current), Buffer.alloc(512, 1))
    expect(load(file)).toBe('two:lib.cjs')
    expect(readFileSync(path.join(dir, current)).equals(Buffer.alloc(512, 1))).toBe(false)
  })
})

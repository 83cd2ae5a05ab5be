import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from './helpers/fixtures.js'

/** SECURITY.md names, for each promise, the tests that probe it: they must exist, so no promise is left unprobed by a rename. */
describe('SECURITY.md', () => {
  const text = readFileSync(path.join(repoRoot, 'SECURITY.md'), 'utf8')

  it('is linked from the README', () => {
    expect(readFileSync(path.join(repoRoot, 'README.md'), 'utf8')).toContain('(SECURITY.md)')
  })

  it('names only probe files that exist, and every section names some', () => {
    const named = [...text.matchAll(/`(tests\/[^`]+)`/g)].map((m) => m[1]!)
    expect(named.length).toBeGreaterThanOrEqual(10)
    for (const probe of named) {
      if (probe.includes('*')) {
        const dir = path.dirname(probe)
        const re = new RegExp(`^${path.basename(probe).replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`)
        expect(readdirSync(path.join(repoRoot, dir)).filter((f) => re.test(f)).length, probe).toBeGreaterThan(0)
      } else expect(existsSync(path.join(repoRoot, probe)), probe).toBe(true)
    }
    for (const section of text.split('\n## ').slice(3))
      expect(section, section.split('\n')[0]).toMatch(/Probes:|probes:/)
  })

  it.each(['Commands a role runs', 'One process per person'])('names the probes of each promise: %s', (title) => {
    const section = text.split('\n## ').find((s) => s.startsWith(title))!
    // The bold bullets before "What to review still" are promises; each names the tests that try to break it.
    const promises = section
      .split('\n### ')[0]!
      .split(/\n(?=- \*\*)/)
      .slice(1)
    expect(promises.length).toBeGreaterThanOrEqual(3)
    for (const promise of promises) expect(promise, promise.split('\n')[0]).toMatch(/Probes:\s+`tests\//)
  })
})

import { describe, expect, it } from 'vitest'
import { longestFirst } from './helpers/sequencer.js'

/** The order a fresh clone's run starts its files in (tests/helpers/sequencer.ts). */
describe('the recorded-durations sequencer', () => {
  const name = (f: string) => f

  it('starts the longest recorded files first, whatever their size or name', () => {
    const durations = { 'tests/a.test.ts': 0.1, 'tests/e2e/b.test.ts': 9.5, 'tests/c.test.ts': 3 }
    expect(longestFirst(['tests/a.test.ts', 'tests/c.test.ts', 'tests/e2e/b.test.ts'], name, durations)).toEqual([
      'tests/e2e/b.test.ts',
      'tests/c.test.ts',
      'tests/a.test.ts',
    ])
  })

  it('counts a file not recorded (a new one) as the median, and keeps the given order among equals', () => {
    const durations = { 'tests/a.test.ts': 1, 'tests/b.test.ts': 2, 'tests/c.test.ts': 8 }
    expect(
      longestFirst(['tests/new.test.ts', 'tests/a.test.ts', 'tests/c.test.ts', 'tests/b.test.ts'], name, durations),
    ).toEqual(['tests/c.test.ts', 'tests/new.test.ts', 'tests/b.test.ts', 'tests/a.test.ts'])
  })

  it('records every file of the suite (npm run test:durations after adding many)', async () => {
    const { readFileSync } = await import('node:fs')
    const recorded = JSON.parse(readFileSync(new URL('durations.json', import.meta.url), 'utf8')) as Record<
      string,
      number
    >
    expect(Object.keys(recorded).length).toBeGreaterThan(100)
    for (const [file, seconds] of Object.entries(recorded)) {
      expect(file).toMatch(/^tests\/.+\.test\.ts$/)
      expect(seconds).toBeGreaterThanOrEqual(0)
    }
  })
})

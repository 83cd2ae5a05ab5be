import { readFileSync } from 'node:fs'
import path from 'node:path'
import semver from 'semver'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../helpers/fixtures.js'

interface LockFile {
  packages: Record<string, { version?: string; engines?: unknown }>
}

/** The Node releases of the lowest major package.json's `engines.node` allows: `>=20` gives every 20.x. */
function lowestMajor(range: string): string {
  const lowest = semver.minVersion(range)
  if (!lowest) throw new Error(`package.json's engines.node "${range}" allows no Node version`)
  return `>=${lowest.version} <${lowest.major + 1}.0.0-0`
}

/**
 * Every package of the lock file whose `engines.node` no release of the
 * given line satisfies (npm ci prints EBADENGINE for such a package), as
 * `name@version wants range`.
 */
function refusals(lock: LockFile, line: string): string[] {
  const out: string[] = []
  for (const [where, entry] of Object.entries(lock.packages)) {
    const node = (entry.engines as { node?: unknown } | undefined)?.node
    // npm reads a range it cannot parse as one no Node satisfies.
    if (typeof node !== 'string' || (semver.validRange(node) !== null && semver.intersects(node, line))) continue
    out.push(`${where.replace(/^.*node_modules\//, '')}@${entry.version ?? '?'} wants node ${node}`)
  }
  return out
}

const read = (file: string) => JSON.parse(readFileSync(path.join(repoRoot, file), 'utf8'))

describe("the lock file's packages and package.json's engines.node", () => {
  const lowest = lowestMajor((read('package.json') as { engines: { node: string } }).engines.node)

  it('names what refuses the lowest Node line, and reads a bad range as a refusal', () => {
    const lock: LockFile = {
      packages: {
        '': { engines: { node: '>=20' } },
        'node_modules/old-line': { version: '1.0.0', engines: { node: '^18.19.0 || >=20.6.0' } },
        'node_modules/a/node_modules/new-only': { version: '3.1.1', engines: { node: '>=22.15.0' } },
        'node_modules/listed': { version: '1.0.0', engines: ['node >= 0.4'] },
        'node_modules/nonsense': { version: '0.1.0', engines: { node: 'soon' } },
      },
    }
    expect(refusals(lock, lowestMajor('>=20'))).toEqual([
      'new-only@3.1.1 wants node >=22.15.0',
      'nonsense@0.1.0 wants node soon',
    ])
    expect(() => lowestMajor('<0.0.0')).toThrow(/allows no Node version/)
  })

  it(`has no package that refuses the lowest Node line package.json allows (${lowest}): npm ci prints no EBADENGINE there`, () => {
    expect(refusals(read('package-lock.json') as LockFile, lowest)).toEqual([])
  })
})

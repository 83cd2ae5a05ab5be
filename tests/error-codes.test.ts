import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from './helpers/fixtures.js'

/** Every string literal used as an error code in src/ (MycError codes, `code: '…'` of results and events). */
function codesInSource(): Set<string> {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
    )
  const codes = new Set<string>()
  for (const file of files(path.join(repoRoot, 'src'))) {
    // The shell guard's tables use `code` for interpreter snippets, not error codes.
    if (file.includes(`${path.sep}guard${path.sep}`)) continue
    const text = readFileSync(file, 'utf8')
    for (const m of text.matchAll(/new MycError\('([^']+)'|code: '([^']+)'|'(api_error)'/g))
      codes.add(m[1] ?? m[2] ?? m[3]!)
    const union = /export type MycErrorCode =([^;]+?)\n\n/.exec(text)?.[1]
    for (const m of union?.matchAll(/'([^']+)'/g) ?? []) codes.add(m[1]!)
  }
  return codes
}

describe('error codes', () => {
  const codes = codesInSource()
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8')
  const table = readme.slice(
    readme.indexOf('Error codes (lower snake case'),
    readme.indexOf('## ', readme.indexOf('Error codes (lower snake case')),
  )

  it('are found in the source (the scan itself works)', () => {
    expect([...codes]).toEqual(
      expect.arrayContaining(['usage', 'config_invalid', 'guard_blocked', 'api_unreachable', 'unknown_skill']),
    )
  })

  it('are all lower snake case', () => {
    for (const code of codes) expect(code, code).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/)
  })

  it('are all in the README’s one table', () => {
    for (const code of codes) expect(table, code).toContain(`\`${code}\``)
  })
})

#!/usr/bin/env node
// The function-size check of `npm run lint`: no function in src/ over 80 lines
// (oxlint's max-lines-per-function, set for src/ in .oxlintrc.json, counts
// every line from the opening line to the closing brace, comments and blank
// lines included). The functions that were longer when the rule came were
// listed here and shrank into named steps until none was left: no file may be
// exempted from the rule in .oxlintrc.json either.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { src } from './lint-src.mjs'

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const MAX = 80
const RULE = 'max-lines-per-function'

/** Every function of src/ over MAX lines, as `file name` -> lines (oxlint's count); `(anonymous)` is a function without a name (the longest one of its file). */
function longFunctions() {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-functions-'))
  const config = path.join(dir, 'oxlintrc.json')
  writeFileSync(config, JSON.stringify({ categories: {}, rules: { [RULE]: ['error', { max: MAX }] } }))
  const run = spawnSync(path.join(repo, 'node_modules', '.bin', 'oxlint'), ['-c', config, '--format', 'json', 'src'], {
    cwd: path.dirname(src),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  rmSync(dir, { recursive: true, force: true })
  if (run.error || !run.stdout) {
    console.error(`check-functions: oxlint did not run: ${run.error?.message ?? run.stderr}`)
    process.exit(2)
  }
  const found = new Map()
  for (const d of JSON.parse(run.stdout).diagnostics) {
    if (!d.code?.includes(RULE)) continue
    const m = /`([^`]+)` has too many lines \((\d+)\)|has too many lines \((\d+)\)/.exec(d.message)
    const file = `src/${path
      .relative(src, path.resolve(path.dirname(src), d.filename))
      .split(path.sep)
      .join('/')}`
    const key = `${file} ${m?.[1] ?? '(anonymous)'}`
    const lines = Number(m?.[2] ?? m?.[3])
    found.set(key, Math.max(found.get(key) ?? 0, lines))
  }
  return found
}

/** The files .oxlintrc.json exempts from the rule (an override that turns it off). */
function exemptFiles() {
  const rc = JSON.parse(readFileSync(path.join(repo, '.oxlintrc.json'), 'utf8'))
  return new Set((rc.overrides ?? []).filter((o) => o.rules?.[RULE] === 'off').flatMap((o) => o.files ?? []))
}

const problems = []
for (const [key, lines] of longFunctions()) {
  const [file, name] = key.split(' ')
  problems.push(`${file}: ${name} has ${lines} lines (at most ${MAX}): split it into named steps`)
}
// A test's own tree is checked for its functions alone.
if (!process.env.MYC_LINT_ROOT)
  for (const f of exemptFiles())
    problems.push(
      `.oxlintrc.json exempts ${f} from ${RULE}: no file is exempt; split its long functions into named steps`,
    )
for (const p of problems) console.error(`check-functions: ${p}`)
if (problems.length) process.exit(1)
console.log(`check-functions: no function in src/ over ${MAX} lines`)

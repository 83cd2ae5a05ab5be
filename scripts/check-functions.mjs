#!/usr/bin/env node
// The function-size check of `npm run lint`: no function in src/ over 80 lines
// (oxlint's max-lines-per-function, set for src/ in .oxlintrc.json, counts
// every line from the opening line to the closing brace, comments and blank
// lines included). The functions that were longer when the rule came are
// listed below with the length they had: each may shrink, never grow, and the
// check fails once one is short and still listed. .oxlintrc.json turns the
// rule off for exactly the files of this list; the check keeps the two the same.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { src } from './lint-src.mjs'

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const MAX = 80
const RULE = 'max-lines-per-function'
/** `file function` -> the lines it had; `(anonymous)` is a function without a name (the longest one of its file). */
const SHRINKING = new Map([])

/** Every function of src/ over MAX lines, as `file name` -> lines (oxlint's count). */
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
const found = longFunctions()
for (const [key, lines] of found) {
  const allowed = SHRINKING.get(key)
  const [file, name] = key.split(' ')
  if (allowed === undefined)
    problems.push(`${file}: ${name} has ${lines} lines (at most ${MAX}): split it into named steps`)
  else if (lines > allowed)
    problems.push(`${file}: ${name} has ${lines} lines (it may only shrink from ${allowed}): split it into named steps`)
}
for (const key of SHRINKING.keys()) {
  const [file, name] = key.split(' ')
  // A tree of a test's own holds only some of the listed files.
  if (!existsSync(path.join(path.dirname(src), file))) {
    if (!process.env.MYC_LINT_ROOT) problems.push(`${file} is gone: take its functions off the SHRINKING list`)
  } else if (!found.has(key))
    problems.push(
      `${file}: ${name} is back under ${MAX} lines: take it off the SHRINKING list of scripts/check-functions.mjs`,
    )
}
if (!process.env.MYC_LINT_ROOT) {
  const listed = new Set([...SHRINKING.keys()].map((k) => k.split(' ')[0]))
  const exempt = exemptFiles()
  for (const f of exempt)
    if (!listed.has(f)) problems.push(`.oxlintrc.json exempts ${f} from ${RULE}, but no function of it is listed here`)
  for (const f of listed)
    if (!exempt.has(f)) problems.push(`${f} has a listed function: exempt it from ${RULE} in .oxlintrc.json`)
}
for (const p of problems) console.error(`check-functions: ${p}`)
if (problems.length) process.exit(1)
console.log(`check-functions: no function in src/ over ${MAX} lines (${SHRINKING.size} shrinking towards it)`)

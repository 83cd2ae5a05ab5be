#!/usr/bin/env node
// The wall-clock check of `npm run lint`: no test asserts how long something
// took. A duration measured with the clock (Date.now(), performance.now(),
// process.hrtime) and compared with toBeLessThan, toBeGreaterThan and the
// like passes on an idle machine and fails on a busy one (two suites at once
// on two cores): a test waits on events and asserts states or counts
// instead, and speed is measured in `npm run bench` (CONTRIBUTING.md). A
// test that only bounds a wait (waitFor's deadline) asserts nothing about
// time and is not caught.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { root, tsFiles } from './lint-src.mjs'

const tests = path.join(root, 'tests')

/** A read of the clock. */
const CLOCK = /\b(?:Date\.now|performance\.now)\(\)|\bprocess\.hrtime(?:\.bigint)?\(/
/** The matchers that compare a number with a bound. */
const COMPARE =
  /^\s*(?:\.not\s*)?\.(toBeLessThan|toBeLessThanOrEqual|toBeGreaterThan|toBeGreaterThanOrEqual|toBeCloseTo)\b/

/** The text without string literals and comments, each blanked out with its line breaks kept (offsets still give line numbers). */
function codeOnly(text) {
  const blank = (m) => m.replace(/[^\n]/g, ' ')
  return text
    .replace(
      /'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\[\s\S])*`/g,
      (m) => m[0] + blank(m.slice(1, -1)) + m[0],
    )
    .replace(/\/\*[\s\S]*?\*\//g, blank)
    .replace(/\/\/.*$/gm, blank)
}

/** The text of the balanced parentheses that open at `open` (exclusive), and where they close. */
function balanced(text, open) {
  let depth = 0
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++
    else if (text[i] === ')' && --depth === 0) return { inner: text.slice(open + 1, i), end: i + 1 }
  }
  return { inner: text.slice(open + 1), end: text.length }
}

/** `name` as a word of `text` (a property `.name` counts). */
const mentions = (text, name) => new RegExp(`(?:^|[^\\w$])${name.replace(/\$/g, '\\$')}\\b`).test(text)

/** Every `name = value`, `name: value` and `name.push(value)` of a statement. */
function bindingsOf(statement) {
  const found = []
  const declared = /(?:\b(?:const|let|var)\s+|^\s*(?:[\w$]+\.)*)([A-Za-z_$][\w$]*)\s*=(?!=)\s*(.*)$/.exec(statement)
  if (declared) found.push({ name: declared[1], value: declared[2] })
  for (const m of statement.matchAll(/[{,]\s*([A-Za-z_$][\w$]*)\s*:\s*([^,}]*)/g))
    found.push({ name: m[1], value: m[2] })
  for (const m of statement.matchAll(/\b([A-Za-z_$][\w$]*)\.push\((.*)$/g)) found.push({ name: m[1], value: m[2] })
  return found
}

/** Whether `text` takes one point in time from another: a difference of two clock reads or start marks. */
function elapsed(text, marks) {
  if (!/-/.test(text)) return false
  const reads = [...text.matchAll(new RegExp(CLOCK.source, 'g'))].length
  return reads + [...marks].filter((n) => mentions(text, n)).length >= 2
}

/**
 * What a file binds to the clock: start marks (`const t0 = Date.now()`) and
 * durations (`ms: Date.now() - started`, `times.push(performance.now() - t0)`,
 * and what is computed from a duration).
 */
function clockNames(code) {
  const bindings = code.split(/[;\n]/).flatMap(bindingsOf)
  const mark = new RegExp(`^(?:${CLOCK.source})\\)?$`)
  const marks = new Set(bindings.filter((b) => mark.test(b.value.trim())).map((b) => b.name))
  const durations = new Set()
  for (let grew = true; grew;) {
    grew = false
    for (const { name, value } of bindings) {
      if (durations.has(name) || marks.has(name)) continue
      if (elapsed(value, marks) || [...durations].some((n) => mentions(value, n))) {
        durations.add(name)
        grew = true
      }
    }
  }
  return { marks, durations }
}

/** Whether an expect's subject is a duration: a difference of clock reads or start marks, or a duration's name. */
function measuresTime(subject, { marks, durations }) {
  return elapsed(subject, marks) || [...durations].some((n) => mentions(subject, n))
}

const problems = []
for (const file of tsFiles(tests)) {
  const code = codeOnly(readFileSync(file, 'utf8'))
  const names = clockNames(code)
  for (const m of code.matchAll(/\bexpect\s*\(/g)) {
    const { inner, end } = balanced(code, m.index + m[0].length - 1)
    const matcher = COMPARE.exec(code.slice(end))
    if (!matcher || !measuresTime(inner, names)) continue
    const line = code.slice(0, m.index).split('\n').length
    problems.push(
      `${path.relative(root, file)}:${line} compares a wall-clock duration (${matcher[1]}): wait on an event and assert a state or a count; measure speed in npm run bench`,
    )
  }
}
for (const p of problems) console.error(`check-test-timing: ${p}`)
if (problems.length) process.exit(1)
console.log('check-test-timing: no test asserts a wall-clock duration')

#!/usr/bin/env node
// The size check of `npm run lint`: no file in src/ over 500 lines (a file that
// long holds more than one job: split it by job).
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

const LIMIT = 500
const root = process.env.MYC_LINT_ROOT ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const src = path.join(root, 'src')

const files = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []))
const problems = []
for (const file of files(src)) {
  const lines = readFileSync(file, 'utf8').split('\n').length - 1
  if (lines > LIMIT) problems.push(`src/${path.relative(src, file)} has ${lines} lines (at most ${LIMIT}): split it by job`)
}
for (const p of problems) console.error(`check-sizes: ${p}`)
if (problems.length) process.exit(1)
console.log(`check-sizes: no file in src/ over ${LIMIT} lines`)

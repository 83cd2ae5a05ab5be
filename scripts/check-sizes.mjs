#!/usr/bin/env node
// The size check of `npm run lint`: no file in src/ over 500 lines (a file that
// long holds more than one job: split it by job).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { src, tsFiles } from './lint-src.mjs'

const LIMIT = 500
const problems = []
for (const file of tsFiles(src)) {
  const name = `src/${path.relative(src, file).split(path.sep).join('/')}`
  const lines = readFileSync(file, 'utf8').split('\n').length - 1
  if (lines > LIMIT) problems.push(`${name} has ${lines} lines (at most ${LIMIT}): split it by job`)
}
for (const p of problems) console.error(`check-sizes: ${p}`)
if (problems.length) process.exit(1)
console.log(`check-sizes: no file in src/ over ${LIMIT} lines`)

#!/usr/bin/env node
// The error-code check of `npm run lint`: a JSON-RPC error code in src/ is
// written by name (`RpcCode.invalidParams`), never as a bare number, outside
// the one table that defines them (src/protocol/facts.ts). Comments may
// mention the numbers.
import path from 'node:path'
import { codeLines, src, tsFiles } from './lint-src.mjs'

const TABLE = path.join('protocol', 'facts.ts')
const CODE = /(?<![\w.$])-32\d{3}\b/

const problems = []
for (const file of tsFiles(src)) {
  const rel = path.relative(src, file)
  if (rel === TABLE) continue
  for (const { number, code } of codeLines(file)) {
    const m = CODE.exec(code)
    if (m)
      problems.push(
        `src/${rel}:${number} writes the JSON-RPC code ${m[0]} as a number: use RpcCode from src/protocol/facts.ts (add it there if it is new)`,
      )
  }
}
for (const p of problems) console.error(`check-codes: ${p}`)
if (problems.length) process.exit(1)
console.log('check-codes: every JSON-RPC error code in src/ is named')

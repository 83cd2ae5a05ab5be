#!/usr/bin/env node
// The error-code check of `npm run lint`: a JSON-RPC error code in src/ is
// written by name (`RpcCode.invalidParams`), never as a bare number, outside
// the one table that defines them (src/protocol/facts.ts). Comments may
// mention the numbers.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

const root = process.env.MYC_LINT_ROOT ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const src = path.join(root, 'src')
const TABLE = path.join('protocol', 'facts.ts')
const CODE = /(?<![\w.$])-32\d{3}\b/

const files = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  )
const problems = []
for (const file of files(src)) {
  const rel = path.relative(src, file)
  if (rel === TABLE) continue
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      const trimmed = line.trimStart()
      if (trimmed.startsWith('//') || trimmed.startsWith('*') || trimmed.startsWith('/*')) return
      const code = line.replace(/\s\/\/\s.*$/, '')
      const m = CODE.exec(code)
      if (m)
        problems.push(
          `src/${rel}:${i + 1} writes the JSON-RPC code ${m[0]} as a number: use RpcCode from src/protocol/facts.ts (add it there if it is new)`,
        )
    })
}
for (const p of problems) console.error(`check-codes: ${p}`)
if (problems.length) process.exit(1)
console.log('check-codes: every JSON-RPC error code in src/ is named')

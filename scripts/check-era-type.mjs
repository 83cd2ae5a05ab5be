#!/usr/bin/env node
// The era-type check of `npm run lint`: the protocol era is written as the
// `Era` type of src/protocol/facts.ts (`Era`, or `'auto' | Era`), never as a
// union of its string literals (`'legacy' | 'modern'`) outside that one
// definition, in src/, tests/ and bench/. Comments may spell it out.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { codeLines, root, src, tsFiles } from './lint-src.mjs'

const DEFINITION = 'src/protocol/facts.ts'
/** This check's own test writes the spellings it must refuse. */
const OWN_TEST = 'tests/lint-checks.test.ts'
/** A union of two or more string literals, over lines too (`| 'a'\n | 'b'`). */
const UNION = /(['"])[\w-]+\1(?:\s*\|\s*(['"])[\w-]+\2)+/g
const ERAS = ['legacy', 'modern']

const problems = []
for (const dir of [src, path.join(root, 'tests'), path.join(root, 'bench')].filter((d) => existsSync(d)))
  for (const file of tsFiles(dir)) {
    const rel = path.relative(root, file).split(path.sep).join('/')
    if (rel === DEFINITION || rel === OWN_TEST) continue
    const lines = codeLines(file)
    const text = lines.map((l) => l.code).join('\n')
    for (const m of text.matchAll(UNION)) {
      const literals = [...m[0].matchAll(/(['"])([\w-]+)\1/g)].map((l) => l[2])
      if (!ERAS.every((era) => literals.includes(era))) continue
      const line = lines[text.slice(0, m.index).split('\n').length - 1].number
      problems.push(`${rel}:${line} spells the era as ${m[0].replace(/\s+/g, ' ')}: use Era from ${DEFINITION}`)
    }
  }
for (const p of problems) console.error(`check-era-type: ${p}`)
if (problems.length) process.exit(1)
console.log('check-era-type: the protocol era is the Era type everywhere')

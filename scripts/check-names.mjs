#!/usr/bin/env node
// The file-name check of `npm run lint`: no two files in src/ share a name
// (`load.ts` here and there, doing different jobs) unless listed below with
// the reason. A command's file is named by its command (`myc doctor` is
// commands/doctor.ts), so it may share the name of the room's file it faces
// when both do one job; a pair doing two jobs is renamed, or listed with
// why not yet.
//
// And no name declared in src/agent/ says "session": the agent's recorded
// conversation is a chat record in code (ChatRecord, chatId), an MCP or
// HTTP session is the protocol's (docs/architecture.md#vocabulary). The
// public names that keep the word (`myc sessions`, the events' `sessionId`,
// `session_end`) are strings, fields and commands, never declared names.
import path from 'node:path'
import { codeLines, src, tsFiles } from './lint-src.mjs'

/** name -> why its files may share it. */
const ALLOWED = new Map([
  ['chat.ts', 'commands/chat.ts is `myc chat`, the command of agent/chat.ts'],
  [
    'child-session.ts',
    "children/child-session.ts is the interface of a child's session, eras/legacy/ and eras/modern/ each era's",
  ],
  ['face.ts', "eras/legacy/face.ts and eras/modern/face.ts: each era's face, behind one interface"],
  ['doctor.ts', 'commands/doctor.ts is `myc doctor`, the command of inspect/doctor.ts'],
  ['explain.ts', 'commands/explain.ts is `myc explain`, the command of policy/explain.ts'],
  ['pin.ts', 'commands/pin.ts is `myc pin`, the command of install/pin.ts'],
  ['policy.ts', 'commands/policy.ts is `myc policy`, the command of policy/policy.ts'],
  ['roles.ts', 'commands/roles.ts is `myc roles`, the command of policy/roles.ts'],
  ['sandbox.ts', 'commands/sandbox.ts is `myc sandbox`, the command of sandbox/sandbox.ts'],
  ['search.ts', 'commands/search.ts is `myc search`, the command of install/search.ts'],
])

const byName = new Map()
for (const file of tsFiles(src)) {
  const name = path.basename(file)
  byName.set(name, [...(byName.get(name) ?? []), `src/${path.relative(src, file).split(path.sep).join('/')}`])
}
const problems = []
for (const [name, files] of byName)
  if (files.length > 1 && !ALLOWED.has(name))
    problems.push(
      `${files.join(', ')} share the name ${name}: name each by its job (or list the name in scripts/check-names.mjs with why)`,
    )
if (!process.env.MYC_LINT_ROOT)
  for (const name of ALLOWED.keys())
    if ((byName.get(name)?.length ?? 0) < 2)
      problems.push(`${name} is no longer repeated: take it off the list of scripts/check-names.mjs`)
/** A declaration's name: a function, class, interface, type, enum or variable (destructured ones too: `{ key: name }` declares name). */
const DECLARED = /\b(?:function\*?|class|interface|type|enum|const|let|var)\s+(\{[^}]*\}|\[[^\]]*\]|[\w$]+)/g
/** An import (over lines too): it declares nothing of the file's own, and may name another room's sessions. */
const IMPORT = /\bimport\s[^;]*?\bfrom\s*""/g
const agent = path.join(src, 'agent')
for (const file of tsFiles(src).filter((f) => f.startsWith(`${agent}${path.sep}`))) {
  const lines = codeLines(file)
  const text = lines
    .map((l) => l.code.replace(/(['"`])(?:\\.|(?!\1).)*\1/g, '""'))
    .join('\n')
    .replace(IMPORT, (statement) => statement.replace(/[^\n]/g, ' '))
  for (const m of text.matchAll(DECLARED))
    for (const name of m[1].replace(/[\w$]+\s*:(?!:)/g, '').match(/[\w$]+/g) ?? [])
      if (/session/i.test(name))
        problems.push(
          `src/${path.relative(src, file).split(path.sep).join('/')}:${lines[text.slice(0, m.index).split('\n').length - 1].number} declares ${name}: in the agent a recorded conversation is a chat record (ChatRecord, chatId; docs/architecture.md#vocabulary)`,
        )
}
for (const p of problems) console.error(`check-names: ${p}`)
if (problems.length) process.exit(1)
console.log(
  `check-names: no two files in src/ share a name (${ALLOWED.size} listed, each with its reason), and no name in src/agent/ says session`,
)

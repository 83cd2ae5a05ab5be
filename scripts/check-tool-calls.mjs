#!/usr/bin/env node
// The tool-call check of `npm run lint`: the agent (src/agent/, and the
// commands above it) reaches a tool only through its one door,
// src/agent/tool-call.ts, where every call is decided when it is made.
// Anywhere else there, a call around the door is refused: callVisibleTool,
// a view's callBuiltin, a child's forward, or a source's `ungated` call
// (a source may define `ungated`, as a method, but never call it).
// Comment lines may name them.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { codeLines, src, tsFiles } from './lint-src.mjs'

const DOOR = 'agent/tool-call.ts'
const ROOMS = ['agent', 'commands']
const AROUND = [
  [/\bcallVisibleTool\b/, 'uses callVisibleTool'],
  [/\bcallBuiltin\b/, "uses a view's callBuiltin"],
  [/\.forward\s*\(/, "calls a child's forward"],
]
const UNGATED = /\bungated\b/
const DEFINES_UNGATED = /^\s*(async\s+)?ungated\s*\(/

const problems = []
for (const room of ROOMS.map((r) => path.join(src, r)).filter((dir) => existsSync(dir)))
  for (const file of tsFiles(room)) {
    const rel = path.relative(src, file).split(path.sep).join('/')
    if (rel === DOOR) continue
    for (const { number, code } of codeLines(file)) {
      const where = `src/${rel}:${number}`
      for (const [pattern, what] of AROUND)
        if (pattern.test(code)) problems.push(`${where} ${what}: call tools through ToolDoor (src/${DOOR})`)
      if (UNGATED.test(code) && !DEFINES_UNGATED.test(code))
        problems.push(`${where} uses a source's ungated call: only ToolDoor (src/${DOOR}) may call it`)
    }
  }
for (const p of problems) console.error(`check-tool-calls: ${p}`)
if (problems.length) process.exit(1)
console.log(`check-tool-calls: the agent calls tools only through src/${DOOR}`)

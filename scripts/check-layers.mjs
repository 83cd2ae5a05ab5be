#!/usr/bin/env node
// The layer check of `npm run lint`: reads every import of src/ (type imports
// included, dynamic import() too), and fails on an import cycle between
// files, an import cycle between folders, or an import from a lower layer to a
// higher one. The layer order is written in docs/architecture.md; LAYERS below
// is its machine form.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

const root = process.env.MYC_LINT_ROOT ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const src = path.join(root, 'src')

/** Lowest first: a folder may import its own layer's files and any folder below it, never one above. */
export const LAYERS = [
  ['(root)', 'protocol', 'assets'],
  ['config', 'sandbox', 'telemetry', 'oauth'],
  ['policy', 'skills', 'code'],
  ['memory'],
  ['pinning'],
  ['children'],
  ['registry'],
  ['principal'],
  ['runtime'],
  ['server'],
  ['http'],
  ['eras'],
  ['agent', 'inspect', 'install'],
  ['commands'],
]
const ROOT_TOP = new Set(['cli.ts', 'cli-args.ts'])

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  )
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g

function folderOf(file) {
  const rel = path.relative(src, file)
  const parts = rel.split(path.sep)
  if (parts.length === 1) return ROOT_TOP.has(parts[0]) ? '(top)' : '(root)'
  // A folder is one room, its sub-folders included: a cycle through a sub-folder is a cycle of the room.
  return parts[0]
}

function layerOf(folder) {
  if (folder === '(top)') return LAYERS.length
  const i = LAYERS.findIndex((l) => l.includes(folder))
  return i === -1 ? undefined : i
}

const graph = new Map()
for (const file of files(src)) {
  const text = readFileSync(file, 'utf8')
  const targets = new Set()
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2]
    const target = path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts'))
    targets.add(target)
  }
  graph.set(
    file,
    [...targets].filter((t) => t.startsWith(src)),
  )
}

const rel = (f) => path.relative(src, f)
const problems = []
const unknown = new Set()

// Every file's folder has a layer, imported or not.
for (const file of graph.keys()) if (layerOf(folderOf(file)) === undefined) unknown.add(folderOf(file))

// Upward edges between folders.
const edges = []
for (const [from, tos] of graph) {
  for (const to of tos) {
    const a = folderOf(from)
    const b = folderOf(to)
    if (a === b) continue
    const la = layerOf(a)
    const lb = layerOf(b)
    if (la === undefined) unknown.add(a)
    if (lb === undefined) unknown.add(b)
    if (la !== undefined && lb !== undefined && lb > la) edges.push(`${rel(from)} -> ${rel(to)}`)
  }
}
for (const f of unknown)
  problems.push(`src/${f}/ has no layer: add it to LAYERS in scripts/check-layers.mjs and to docs/architecture.md`)

// File cycles (Tarjan's strongly connected components).
function components(nodes, next) {
  let index = 0
  const idx = new Map()
  const low = new Map()
  const stack = []
  const on = new Set()
  const out = []
  const visit = (v) => {
    idx.set(v, index)
    low.set(v, index++)
    stack.push(v)
    on.add(v)
    for (const w of next(v)) {
      if (!idx.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)))
    }
    if (low.get(v) === idx.get(v)) {
      const c = []
      let w
      do {
        w = stack.pop()
        on.delete(w)
        c.push(w)
      } while (w !== v)
      if (c.length > 1) out.push(c.sort())
    }
  }
  for (const n of nodes) if (!idx.has(n)) visit(n)
  return out
}
const fileCycles = components([...graph.keys()], (v) => (graph.get(v) ?? []).filter((t) => graph.has(t))).map(
  (c) => `file cycle: ${c.map(rel).join(', ')}`,
)
const folderGraph = new Map()
for (const [from, tos] of graph)
  for (const to of tos)
    if (folderOf(from) !== folderOf(to))
      folderGraph.set(folderOf(from), new Set([...(folderGraph.get(folderOf(from)) ?? []), folderOf(to)]))
const folderCycles = components([...folderGraph.keys()], (v) => [...(folderGraph.get(v) ?? [])]).map(
  (c) => `folder cycle: ${c.join(', ')}`,
)

for (const f of [...edges.map((e) => `upward import: ${e}`), ...fileCycles, ...folderCycles].sort())
  problems.push(`${f} (layers only point down; see docs/architecture.md)`)
if (problems.length) {
  for (const p of problems) console.error(`check-layers: ${p}`)
  process.exit(1)
}
console.log(`check-layers: ${graph.size} files, layers hold`)

// Bundles src/cli.ts into build/myc.cjs: one CommonJS file (the form a single
// executable needs) that runs with plain `node`. Data the program reads at run
// time (the skill templates) is embedded with `define`.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const root = path.dirname(new URL(import.meta.url).pathname)
const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'))

async function readTemplates(dir) {
  const out = {}
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue
    const files = {}
    const walk = async (sub) => {
      for (const f of await readdir(path.join(dir, entry.name, sub), { withFileTypes: true })) {
        const rel = sub ? `${sub}/${f.name}` : f.name
        if (f.isDirectory()) await walk(rel)
        else files[rel] = await readFile(path.join(dir, entry.name, rel), 'utf8')
      }
    }
    await walk('')
    out[entry.name] = files
  }
  return out
}

// Gzipped, the grammar is a third of the size: less for every start to scan.
const wasm = async (file) => gzipSync(await readFile(path.join(root, 'node_modules', file)), { level: 9 }).toString('base64')

await build({
  entryPoints: [path.join(root, 'src/cli.ts')],
  outfile: path.join(root, 'build/myc.cjs'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  keepNames: true,
  sourcemap: 'linked',
  banner: { js: '#!/usr/bin/env node' },
  define: {
    __MYC_VERSION__: JSON.stringify(pkg.version),
    __MYC_TEMPLATES__: JSON.stringify(await readTemplates(path.join(root, 'skills'))),
    // The shell guard's grammar travels inside the bundle (and so the executable).
    __MYC_WASM__: JSON.stringify({ runtime: await wasm('web-tree-sitter/tree-sitter.wasm'), bash: await wasm('tree-sitter-bash/tree-sitter-bash.wasm') }),
  },
  // web-tree-sitter's ESM build breaks in a CommonJS bundle (TOOLCHAIN.md).
  alias: { 'web-tree-sitter': path.join(root, 'node_modules/web-tree-sitter/tree-sitter.cjs') },
  logLevel: 'warning',
  // src/assets/templates.ts reads import.meta.url only when run from source; the bundle has the embedded copy.
  logOverride: { 'empty-import-meta': 'silent' },
})

// Bundles src/cli.ts into build/myc.cjs: one CommonJS file (the form a single
// executable needs) that runs with plain `node`. Data the program reads at run
// time (the skill templates) is embedded with `define`.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
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
  },
  logLevel: 'warning',
  // src/assets/templates.ts reads import.meta.url only when run from source; the bundle has the embedded copy.
  logOverride: { 'empty-import-meta': 'silent' },
})

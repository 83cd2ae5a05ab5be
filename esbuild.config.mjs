// Bundles src/cli.ts into build/myc-main.cjs: one CommonJS file (the form a single
// executable needs) that runs with plain `node`; build/myc.cjs is the launcher
// `myc` and `npx mycelium-agg` run (see the end of this file). Data the program reads at run
// time (the skill templates) is embedded with `define`.
import { copyFile, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
// The same reader the program uses from source (run with `node --import tsx`).
import { readTemplateDir } from './src/assets/templates.ts'
import { embed } from './build/embed.ts'
import { EMBEDDED_DATA, EMBEDDED_LIBRARIES } from './build/embedded-libraries.mjs'

const root = path.dirname(new URL(import.meta.url).pathname)
const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'))

// The libraries few runs use: files beside the bundle, compiled on first use (build/embedded-libraries.mjs says why).
for (const [name, contents] of Object.entries(EMBEDDED_LIBRARIES))
  await embed(name, contents, { root, outdir: path.join(root, 'build') })
// The shell guard's grammar likewise, gzipped (a third of the size).
for (const [name, file] of Object.entries(EMBEDDED_DATA))
  await writeFile(path.join(root, 'build', name), gzipSync(await readFile(path.join(root, 'node_modules', file)), { level: 9 }))

await build({
  entryPoints: [path.join(root, 'src/cli.ts')],
  outfile: path.join(root, 'build/myc-main.cjs'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  // No keepNames: its __name() wrapper runs on every closure made on the hot path (a per-call cost in profiles).
  keepNames: false,
  // Whitespace and syntax only (names stay, for stack traces): a smaller file is faster to compile at every start.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  // import() becomes require(): code compiled from a V8 code cache (build/launcher.cjs on Node 20) loses the
  // host options a dynamic import needs ("A dynamic import callback was not specified"), and what the bundle
  // imports at run time is Node's own modules and its own chunks.
  supported: { 'dynamic-import': false },
  // The embedded libraries are files of their own (above), compiled on first use; the `fromSource` branch that
  // imports them by name runs only from source, so in the bundle it reaches a module that says so, and the bundle
  // never names them (the npm package has no dependencies to find them in).
  plugins: [
    {
      name: 'embedded-only',
      setup(b) {
        b.onResolve({ filter: /^(@anthropic-ai\/sdk|jose|redis|@opentelemetry\/|marked)/ }, () => ({
          path: 'embedded-only',
          namespace: 'embedded-only',
        }))
        b.onLoad({ filter: /.*/, namespace: 'embedded-only' }, () => ({
          contents: "throw new Error('an embedded library is loaded through src/embedded-module.ts in the bundle')",
        }))
      },
    },
  ],
  define: {
    __MYC_VERSION__: JSON.stringify(pkg.version),
    // src/embedded-module.ts: the embedded libraries and the grammar are read from their files (or the executable's assets).
    __MYC_EMBEDDED__: 'true',
    __MYC_TEMPLATES__: JSON.stringify(await readTemplateDir(path.join(root, 'skills'))),
  },
  // web-tree-sitter's ESM build breaks in a CommonJS bundle (measured on the development machine).
  alias: { 'web-tree-sitter': path.join(root, 'node_modules/web-tree-sitter/tree-sitter.cjs') },
  logLevel: 'warning',
  // src/assets/templates.ts reads import.meta.url only when run from source; the bundle has the embedded copy.
  logOverride: { 'empty-import-meta': 'silent' },
})

// The launcher, build/myc.cjs: loads the bundle and keeps its compiled code
// between runs (build/launcher.cjs says how and where). A file of its own,
// because a compile cache covers only code loaded after it is turned on.
await copyFile(path.join(root, 'build/launcher.cjs'), path.join(root, 'build/myc.cjs'))

// Bundles src/cli.ts into build/myc.cjs: one CommonJS file (the form a single
// executable needs) that runs with plain `node`.
import { readFile } from 'node:fs/promises'
import { build } from 'esbuild'

const pkg = JSON.parse(await readFile(new URL('./package.json', import.meta.url), 'utf8'))

await build({
  entryPoints: ['src/cli.ts'],
  outfile: 'build/myc.cjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  keepNames: true,
  sourcemap: 'linked',
  banner: { js: '#!/usr/bin/env node' },
  define: { __MYC_VERSION__: JSON.stringify(pkg.version) },
  // import.meta.url has no meaning in CJS; code that needs its own location
  // reads it through src/assets.ts, which handles both forms.
  logLevel: 'warning',
})

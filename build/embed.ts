import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

/**
 * Bundles `contents` (an ES module's text, its imports resolved from `root`)
 * on its own as CommonJS, for src/embedded-module.ts to compile as
 * `<outdir>/<name>.cjs`: writes it gzipped as `<outdir>/<name>.cjs.gz` (the
 * file the npm package carries and the single executable's asset) and its
 * source map beside, as `<outdir>/<name>.cjs.map` (the text ends by naming
 * it; the map names the libraries' files in node_modules, without their
 * contents). Returns the gzipped file's path.
 */
export async function embed(
  name: string,
  contents: string,
  options: { root: string; outdir: string },
): Promise<string> {
  const out = await build({
    stdin: { contents, resolveDir: options.root, loader: 'js', sourcefile: `${name}.entry.js` },
    outfile: path.join(options.outdir, `${name}.cjs`),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: 'linked',
    sourcesContent: false,
    write: false,
    logLevel: 'warning',
  })
  const file = (ext: string) => out.outputFiles.find((f) => f.path.endsWith(ext))!
  await mkdir(options.outdir, { recursive: true })
  await writeFile(file('.cjs.map').path, file('.cjs.map').contents)
  const gzipped = path.join(options.outdir, `${name}.cjs.gz`)
  await writeFile(gzipped, gzipSync(file('.cjs').contents, { level: 9 }))
  return gzipped
}

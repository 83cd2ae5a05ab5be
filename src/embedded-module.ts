import { Module } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The folder of build/myc-main.cjs (the bundle is CommonJS), of this file when run from source, else of the executable. */
const bundleDir = () =>
  typeof __dirname === 'string'
    ? __dirname
    : import.meta.url
      ? path.dirname(fileURLToPath(import.meta.url))
      : path.dirname(process.execPath)

/**
 * Compiles a CommonJS module body that travels gzipped and base64-encoded
 * inside build/myc-main.cjs (esbuild.config.mjs embeds heavy libraries so, and
 * only the runs that use one pay for parsing it). It is compiled as the file
 * `<dir>/<name>.cjs` (beside the bundle), so that its stack frames name it and
 * its `//# sourceMappingURL` finds `<name>.cjs.map` there: with source maps on
 * (`node --enable-source-maps`), a frame names the library's own file. The
 * body may require Node's own modules only.
 */
export async function compileEmbedded<T>(name: string, base64: string, dir = bundleDir()): Promise<T> {
  const { gunzipSync } = await import('node:zlib')
  const filename = path.join(dir, `${name}.cjs`)
  const mod = new Module(filename) as Module & { _compile(code: string, filename: string): void }
  mod.filename = filename
  mod._compile(gunzipSync(Buffer.from(base64, 'base64')).toString('utf8'), filename)
  return mod.exports as T
}

/**
 * The one loader of an embedded library: in the bundle, its gzipped text
 * (`embedded`, a `define` of esbuild.config.mjs) compiled on first use; run
 * from source, `fromSource` imports it from node_modules. Either way once.
 */
export function lazyEmbedded<T>(
  name: string,
  embedded: string | undefined,
  fromSource: () => Promise<T>,
): () => Promise<T> {
  let loading: Promise<T> | undefined
  return () => (loading ??= embedded === undefined ? fromSource() : compileEmbedded<T>(name, embedded))
}

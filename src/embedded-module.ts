import { Module } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { MycError } from './errors.js'
import { singleExecutable } from './single-executable.js'

/** Set in build/myc-main.cjs (esbuild.config.mjs): the embedded libraries are read from their files there; absent when run from source. */
declare const __MYC_EMBEDDED__: boolean | undefined

/** The folder of build/myc-main.cjs (the bundle is CommonJS), of this file when run from source, else of the executable. */
const bundleDir = () =>
  typeof __dirname === 'string'
    ? __dirname
    : import.meta.url
      ? path.dirname(fileURLToPath(import.meta.url))
      : path.dirname(process.execPath)

/**
 * Compiles the gzipped CommonJS body of an embedded library (a file of
 * build/embedded-libraries.mjs, bundled by build/embed.ts). It is compiled
 * as the file `<dir>/<name>.cjs` (beside the bundle), so that its stack
 * frames name it and its `//# sourceMappingURL` finds `<name>.cjs.map`
 * there: with source maps on (`node --enable-source-maps`), a frame names
 * the library's own file. The body may require Node's own modules only.
 */
export async function compileEmbedded<T>(name: string, gzipped: Uint8Array, dir = bundleDir()): Promise<T> {
  const { gunzipSync } = await import('node:zlib')
  const filename = path.join(dir, `${name}.cjs`)
  const mod = new Module(filename) as Module & { _compile(code: string, filename: string): void }
  mod.filename = filename
  mod._compile(gunzipSync(gzipped).toString('utf8'), filename)
  return mod.exports as T
}

/**
 * The gzipped library, `<name>.cjs.gz`: an asset of the single executable,
 * else the file beside the bundle (the npm package carries it). Read only
 * here, so a process that never uses the library never holds its bytes.
 */
async function readEmbedded(name: string, dir = bundleDir()): Promise<Uint8Array> {
  const key = `${name}.cjs.gz`
  const sea = singleExecutable()
  try {
    if (sea) return new Uint8Array(sea.getAsset(key))
    const { readFile } = await import('node:fs/promises')
    return await readFile(path.join(dir, key))
  } catch (error) {
    const where = sea ? `the asset ${key} of ${process.execPath}` : path.join(dir, key)
    throw new MycError('runtime', `myc's ${name} library is missing: ${where} cannot be read`, {
      cause: error,
      fix: 'reinstall myc: the npm package and the executable carry it',
    })
  }
}

/** An embedded library read from `<dir>/<name>.cjs.gz` (or the executable's asset) and compiled. */
export async function loadEmbedded<T>(name: string, dir = bundleDir()): Promise<T> {
  return compileEmbedded<T>(name, await readEmbedded(name, dir), dir)
}

/**
 * The one loader of an embedded library: in the bundle, its gzipped file
 * (or the executable's asset) read and compiled on first use; run from
 * source, `fromSource` imports it from node_modules. Either way once.
 */
export function lazyEmbedded<T>(name: string, fromSource: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined
  const embedded = typeof __MYC_EMBEDDED__ === 'boolean' && __MYC_EMBEDDED__
  return () => (loading ??= embedded ? loadEmbedded<T>(name) : fromSource())
}

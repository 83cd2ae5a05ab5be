import { Module } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { MycError } from './errors.js'
import { singleExecutable } from './single-executable.js'

/** Set in build/myc-main.cjs (esbuild.config.mjs): the embedded libraries and data are read from their files there; absent when run from source. */
declare const __MYC_EMBEDDED__: boolean | undefined

/** Whether this is the bundle (or the executable), which reads its embedded files, rather than the source. */
export const embeddedBuild = (): boolean => typeof __MYC_EMBEDDED__ === 'boolean' && __MYC_EMBEDDED__

/** The folder of build/myc-main.cjs (the bundle is CommonJS), of this file when run from source, else of the executable. */
const bundleDir = () =>
  typeof __dirname === 'string'
    ? __dirname
    : import.meta.url
      ? path.dirname(fileURLToPath(import.meta.url))
      : path.dirname(process.execPath)

/**
 * Compiles the CommonJS body of an embedded library (one of
 * build/embedded-libraries.mjs, bundled by build/embed.ts). It is compiled
 * as the file `<dir>/<name>.cjs` (beside the bundle), so that its stack
 * frames name it and its `//# sourceMappingURL` finds `<name>.cjs.map`
 * there: with source maps on (`node --enable-source-maps`), a frame names
 * the library's own file. The body may require Node's own modules only.
 */
export function compileEmbedded<T>(name: string, body: Buffer, dir = bundleDir()): T {
  const filename = path.join(dir, `${name}.cjs`)
  const mod = new Module(filename) as Module & { _compile(code: string, filename: string): void }
  mod.filename = filename
  mod._compile(body.toString('utf8'), filename)
  return mod.exports as T
}

/**
 * A gzipped file of the build (build/embedded-libraries.mjs), gunzipped: an
 * asset of the single executable, else the file beside the bundle (the npm
 * package carries it). Read only here, so a process that never uses it
 * never holds its bytes. `what` names it in the error when it is missing.
 */
export async function readEmbedded(file: string, what: string, dir = bundleDir()): Promise<Buffer> {
  const sea = singleExecutable()
  let gzipped: Uint8Array
  try {
    if (sea) gzipped = new Uint8Array(sea.getAsset(file))
    else gzipped = await (await import('node:fs/promises')).readFile(path.join(dir, file))
  } catch (error) {
    const where = sea ? `the asset ${file} of ${process.execPath}` : path.join(dir, file)
    throw new MycError('runtime', `myc's ${what} is missing: ${where} cannot be read`, {
      cause: error,
      fix: 'reinstall myc: the npm package and the executable carry it',
    })
  }
  return (await import('node:zlib')).gunzipSync(gzipped)
}

/** An embedded library read from `<dir>/<name>.cjs.gz` (or the executable's asset) and compiled. */
export async function loadEmbedded<T>(name: string, dir = bundleDir()): Promise<T> {
  return compileEmbedded<T>(name, await readEmbedded(`${name}.cjs.gz`, `${name} library`, dir), dir)
}

/**
 * The one loader of an embedded library: in the bundle, its gzipped file
 * (or the executable's asset) read and compiled on first use; run from
 * source, `fromSource` imports it from node_modules. Either way once.
 */
export function lazyEmbedded<T>(name: string, fromSource: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined
  return () => (loading ??= embeddedBuild() ? loadEmbedded<T>(name) : fromSource())
}

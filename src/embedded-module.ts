import { createRequire } from 'node:module'

/**
 * Compiles a CommonJS module body that travels gzipped and base64-encoded
 * inside build/myc-main.cjs (esbuild.config.mjs embeds heavy libraries so, and
 * only the runs that use one pay for parsing it). The body may require
 * Node's own modules only.
 */
export async function compileEmbedded<T>(base64: string): Promise<T> {
  const { gunzipSync } = await import('node:zlib')
  const mod = { exports: {} as T }
  const load = typeof require === 'function' ? require : createRequire(import.meta.url)
  new Function('module', 'exports', 'require', gunzipSync(Buffer.from(base64, 'base64')).toString('utf8'))(
    mod,
    mod.exports,
    load,
  )
  return mod.exports
}

import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { Parser as TsParser } from 'web-tree-sitter'

/**
 * Gzipped and base64 (esbuild.config.mjs), absent when run from source. Two strings, not one object:
 * esbuild hoists an object `define` into a module every other module initialises, which would
 * make each start hold both strings (350 KB) whether the guard runs or not.
 */
declare const __MYC_WASM_RUNTIME__: string | undefined
declare const __MYC_WASM_BASH__: string | undefined

/** A bash parser: tree-sitter-bash on web-tree-sitter, loaded on first use. */
export type BashParser = TsParser

/**
 * The two wasm files: embedded gzipped in the bundle and the executable
 * (esbuild `define`), read from node_modules when run from source.
 */
async function wasmBytes(): Promise<{ runtime: Uint8Array; bash: Uint8Array }> {
  if (typeof __MYC_WASM_RUNTIME__ === 'string' && typeof __MYC_WASM_BASH__ === 'string') {
    const { gunzipSync } = await import('node:zlib')
    return {
      runtime: gunzipSync(Buffer.from(__MYC_WASM_RUNTIME__, 'base64')),
      bash: gunzipSync(Buffer.from(__MYC_WASM_BASH__, 'base64')),
    }
  }
  const require = createRequire(import.meta.url)
  const [runtime, bash] = await Promise.all([
    readFile(require.resolve('web-tree-sitter/tree-sitter.wasm')),
    readFile(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm')),
  ])
  return { runtime, bash }
}

/** Loads the grammar (about 10 ms); call once per process and keep the parser. */
export async function loadBashParser(): Promise<BashParser> {
  // Optimising the grammar's wasm makes short-lived processes (`myc sandbox guard`) linger ~0.5 s at exit.
  try {
    ;(await import('node:v8')).setFlagsFromString('--liftoff-only')
  } catch {
    // A runtime without the flag runs the grammar as it is, only slower to exit.
  }
  const { Parser, Language } = await import('web-tree-sitter')
  const bytes = await wasmBytes()
  await Parser.init({ wasmBinary: bytes.runtime } as object)
  const parser = new Parser()
  parser.setLanguage(await Language.load(bytes.bash))
  return parser
}

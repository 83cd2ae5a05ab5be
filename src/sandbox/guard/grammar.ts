import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { Parser as TsParser } from 'web-tree-sitter'
import { embeddedBuild, readEmbedded } from '../../embedded-module.js'

/** A bash parser: tree-sitter-bash on web-tree-sitter, loaded on first use. */
export type BashParser = TsParser

/**
 * The two wasm files: built, gzipped files beside the bundle and assets of
 * the executable (build/embedded-libraries.mjs), read when the guard first
 * runs; from source, read from node_modules.
 */
async function wasmBytes(): Promise<{ runtime: Uint8Array; bash: Uint8Array }> {
  if (embeddedBuild()) {
    const [runtime, bash] = await Promise.all([
      readEmbedded('tree-sitter.wasm.gz', 'shell grammar runtime'),
      readEmbedded('tree-sitter-bash.wasm.gz', 'bash grammar'),
    ])
    return { runtime, bash }
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

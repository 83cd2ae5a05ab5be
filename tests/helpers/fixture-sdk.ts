import { mkdirSync, renameSync } from 'node:fs'
import path from 'node:path'
import { build } from 'esbuild'
import { repoRoot } from './fixtures.js'

/**
 * vitest global setup: bundles the MCP SDK exports the fixture servers use
 * (tests/fixtures/servers/_sdk.mjs) into build/.cache/fixture-sdk.cjs, which
 * _sdk.mjs loads with V8's code cache of it. One file of the same code: a
 * fixture starts in 0.10 s of CPU against 0.30-0.36 s from the packages'
 * modules, and `npm test` starts a few hundred on two cores. Built afresh on every run (half a second), so it never lags
 * behind node_modules; written beside and renamed, so two runs never read
 * half a file.
 */
export default async function fixtureSdk(): Promise<void> {
  const out = path.join(repoRoot, 'build', '.cache', 'fixture-sdk.cjs')
  mkdirSync(path.dirname(out), { recursive: true })
  const partial = `${out}.${process.pid}.tmp`
  await build({
    stdin: {
      contents: [
        "export * from '@modelcontextprotocol/server'",
        "export * from '@modelcontextprotocol/server/stdio'",
        "export * from '@modelcontextprotocol/server/ext/skills'",
      ].join('\n'),
      resolveDir: repoRoot,
      loader: 'js',
    },
    bundle: true,
    minify: true,
    platform: 'node',
    format: 'cjs',
    // import() becomes require(): code compiled from a V8 code cache cannot run a dynamic import on Node 20.
    supported: { 'dynamic-import': false },
    outfile: partial,
    logLevel: 'warning',
  })
  renameSync(partial, out)
}

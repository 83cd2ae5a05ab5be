import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { embed } from '../../build/embed.js'
import { loadEmbedded } from '../../src/embedded-module.js'
import { MycError } from '../../src/errors.js'
import { requireBundle } from '../helpers/e2e.js'
import { repoRoot } from '../helpers/fixtures.js'

const { EMBEDDED_LIBRARIES, embeddedFiles } = (await import(
  path.join(repoRoot, 'build', 'embedded-libraries.mjs')
)) as {
  EMBEDDED_LIBRARIES: Record<string, string>
  embeddedFiles: () => string[]
}
const { seaConfig } = (await import(path.join(repoRoot, 'build', 'build-bin.mjs'))) as {
  seaConfig: (output: string, useCodeCache: boolean, buildDir?: string) => { assets: Record<string, string> }
}
const names = Object.keys(EMBEDDED_LIBRARIES).sort()
const files = embeddedFiles().sort()

/** Every file below src/, with its text. */
function sources(dir = path.join(repoRoot, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(path.join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [readFileSync(path.join(dir, e.name), 'utf8')]
        : [],
  )
}

/**
 * The libraries and the grammar only a few runs use travel beside the
 * bundle, not in it (build/embedded-libraries.mjs): the npm package must
 * carry each one's file and the single executable each one's asset, or the
 * run that first uses it fails.
 */
describe('the embedded libraries: files of the npm package, assets of the executable', () => {
  it('are the ones src/ loads with lazyEmbedded, no more, no fewer', () => {
    const loaded = sources().flatMap((text) =>
      [...text.matchAll(/lazyEmbedded(?:<[^>]*>)?\(\s*'([^']+)'/g)].map((m) => m[1]),
    )
    expect([...new Set(loaded)].sort()).toEqual(names)
  })

  it('each is a file the npm package lists, beside the bundle', () => {
    const listed = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { files: string[] }).files
    expect(files).toEqual(expect.arrayContaining(names.map((n) => `${n}.cjs.gz`)))
    expect(files).toEqual(expect.arrayContaining(['tree-sitter.wasm.gz', 'tree-sitter-bash.wasm.gz']))
    for (const file of files) expect(listed, file).toContain(`build/${file}`)
  })

  it('each is an asset of the executable, from its built file; a missing file stops the build', () => {
    requireBundle()
    const { assets } = seaConfig('blob', true)
    expect(Object.keys(assets).sort()).toEqual(files)
    for (const name of files) {
      expect(assets[name]).toBe(path.join(repoRoot, 'build', name))
      expect(gunzipSync(readFileSync(assets[name]!)).length, name).toBeGreaterThan(10_000)
    }
    const empty = mkdtempSync(path.join(tmpdir(), 'myc-no-assets-'))
    expect(() => seaConfig('blob', true, empty)).toThrow(/anthropic-sdk\.cjs\.gz is missing: run `npm run build` first/)
    rmSync(empty, { recursive: true })
  })

  it('one that cannot be read is an error naming its file and the fix; one that can is compiled once read', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-embedded-'))
    const missing = loadEmbedded('thrower', dir)
    await expect(missing).rejects.toBeInstanceOf(MycError)
    await expect(missing).rejects.toThrow(`myc's thrower library is missing: ${path.join(dir, 'thrower.cjs.gz')}`)
    await expect(missing).rejects.toMatchObject({ code: 'runtime', fix: expect.stringMatching(/reinstall myc/) })
    await embed('thrower', "export { fail } from './tests/fixtures/embedded/thrower.mjs'", {
      root: repoRoot,
      outdir: dir,
    })
    const { fail } = await loadEmbedded<{ fail(): never }>('thrower', dir)
    expect(fail).toThrow('thrown inside an embedded module')
  })
})

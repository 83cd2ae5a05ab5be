import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { embed } from '../../build/embed.js'
import { compileEmbedded, lazyEmbedded } from '../../src/embedded-module.js'
import { repoRoot } from '../helpers/fixtures.js'

type Thrower = { fail(): never }

/** The stack of what the embedded fixture throws. */
async function stackOfEmbedded(): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-embedded-'))
  const file = await embed('thrower', "export { fail } from './tests/fixtures/embedded/thrower.mjs'", {
    root: repoRoot,
    outdir: dir,
  })
  const { fail } = compileEmbedded<Thrower>('thrower', gunzipSync(readFileSync(file)), dir)
  try {
    fail()
  } catch (error) {
    return (error as Error).stack ?? ''
  }
  return ''
}

describe('the embedded modules: one loader, and source maps', () => {
  it('a stack from inside an embedded module names its own file, and with source maps on, the original one', async () => {
    const wasEnabled = process.sourceMapsEnabled
    // Node's own stack traces, as myc has them (vitest writes stacks its own way).
    const prepare = Error.prepareStackTrace
    delete (Error as { prepareStackTrace?: unknown }).prepareStackTrace
    process.setSourceMapsEnabled(false)
    try {
      // Compiled as <dir>/thrower.cjs: the frame names that file, not an anonymous function.
      expect(await stackOfEmbedded()).toMatch(/thrower\.cjs:\d+:\d+/)
      process.setSourceMapsEnabled(true)
      const mapped = await stackOfEmbedded()
      expect(mapped).toContain('thrown inside an embedded module')
      expect(mapped).toMatch(/tests\/fixtures\/embedded\/thrower\.mjs:4:\d+/)
    } finally {
      process.setSourceMapsEnabled(wasEnabled)
      Error.prepareStackTrace = prepare
    }
  })

  it('loads once, from source (in the bundle, from its file)', async () => {
    let imports = 0
    const fromSource = lazyEmbedded('none', async () => ({ n: ++imports }))
    expect(await fromSource()).toEqual({ n: 1 })
    expect(await fromSource()).toEqual({ n: 1 })
  })

  it('the bundle carries the map of each embedded library beside it, naming the files in node_modules', () => {
    for (const name of ['anthropic-sdk', 'http-deps', 'telemetry-deps', 'marked']) {
      const map = path.join(repoRoot, 'build', `${name}.cjs.map`)
      expect(existsSync(map), map).toBe(true)
      const sources = (JSON.parse(readFileSync(map, 'utf8')) as { sources: string[] }).sources
      expect(
        // ../node_modules/… in a clone; further up when node_modules is a link to another checkout's (a git worktree).
        sources.some((s) => s.startsWith('../') && s.includes('/node_modules/')),
        name,
      ).toBe(true)
    }
  })
})

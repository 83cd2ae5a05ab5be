import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { node22 } from '../conformance/run.js'
import { hasBwrap, runOnce, tamper } from '../helpers/code-mode.js'
import { cacheOf, filesBelow, installed, version } from '../helpers/launcher.js'

/**
 * The launcher on Node 22.1+ (build/launcher.cjs): Node's own compile cache,
 * kept beside the bundle. Slow on a fresh clone: it first fetches a Node 22
 * from npm (tests/conformance/run.ts).
 */
describe('the build/myc.cjs launcher on Node 22', () => {
  it('keeps the compile cache beside the bundle, not in the shared temp folder, and uses it', async () => {
    const node = await node22()
    const launcher = installed()
    const tmp = mkdtempSync(path.join(tmpdir(), 'myc-launcher-tmp-'))
    const env = { TMPDIR: tmp, TMP: tmp, TEMP: tmp }
    const first = version(launcher, node, env)
    expect(filesBelow(cacheOf(launcher)).length).toBeGreaterThan(0)
    expect(filesBelow(tmp)).toEqual([])
    // The second run reads it (NODE_DEBUG_NATIVE=COMPILE_CACHE says so).
    const second = version(launcher, node, { ...env, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' })
    expect(second).toContain(first.trim())
    expect(second).toMatch(/myc-main\.cjs[^\n]*(cache hit|was accepted)|(cache hit|accepted)[^\n]*myc-main\.cjs/i)
  }, 120_000)

  it.runIf(hasBwrap)(
    'as code mode’s runner, reads the compile cache in its sandbox, which the code cannot change',
    async () => {
      const node = await node22()
      const launcher = installed()
      version(launcher, node)
      const dir = cacheOf(launcher)
      const [file, ...more] = filesBelow(dir)
      expect(more).toEqual([])
      const before = readFileSync(file!)
      const bundle = path.join(path.dirname(launcher), 'myc-main.cjs')
      const launch = { argv: [node, launcher], files: [launcher, bundle], typescript: true, codeCache: dir }
      const out = await runOnce(launch, tamper(path.dirname(file!), file!))
      expect(out).toMatchObject({ kind: 'done', ok: true, codeCache: 'compile-cache' })
      expect(JSON.parse((out as { value: string }).value)).toEqual(Array(6).fill('EROFS'))
      expect(filesBelow(dir)).toEqual([file])
      expect(readFileSync(file!).equals(before)).toBe(true)
    },
    120_000,
  )
})

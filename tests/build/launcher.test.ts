import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { node22 } from '../conformance/run.js'
import { bundle, requireBundle } from '../helpers/e2e.js'

/** Every file below `dir`. */
function filesBelow(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
}

/**
 * build/myc.cjs is a launcher: it turns on Node's compile cache (22.1+) and
 * loads the bundle, build/myc-main.cjs, so the bundle's compiled code is kept
 * between runs; on older Nodes it just loads the bundle.
 */
describe('the build/myc.cjs launcher', () => {
  it('runs myc on this Node', () => {
    requireBundle()
    const r = spawnSync(process.execPath, [bundle, '--version'], { encoding: 'utf8' })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  })

  it('keeps the compiled bundle in the OS temp folder on Node 22, and uses it on the next run', async () => {
    requireBundle()
    const node = await node22()
    const tmp = mkdtempSync(path.join(tmpdir(), 'myc-launcher-'))
    const env = { ...process.env, TMPDIR: tmp, TMP: tmp, TEMP: tmp, NODE_COMPILE_CACHE: undefined }
    const first = spawnSync(node, [bundle, '--version'], { encoding: 'utf8', env })
    expect(first.status, first.stderr).toBe(0)
    const cached = filesBelow(path.join(tmp, 'node-compile-cache'))
    expect(cached.length).toBeGreaterThan(0)
    // The second run reads it (NODE_DEBUG_NATIVE=COMPILE_CACHE says so).
    const second = spawnSync(node, [bundle, '--version'], {
      encoding: 'utf8',
      env: { ...env, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
    })
    expect(second.status, second.stderr).toBe(0)
    expect(second.stdout.trim()).toBe(first.stdout.trim())
    expect(`${second.stdout}${second.stderr}`).toMatch(
      /myc-main\.cjs[^\n]*(cache hit|was accepted)|(cache hit|accepted)[^\n]*myc-main\.cjs/i,
    )
  }, 120_000)
})

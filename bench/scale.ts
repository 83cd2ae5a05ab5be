/**
 * Sessions and instances at scale (`npm run bench`, or `--only scale`):
 * the resident memory of one `myc serve --http` before and after N
 * sessions each made one call (KiB a session, against the target), and
 * before and after 100 people each started one instance of a scoped child
 * (KiB in myc a person's instance costs, beside the child's own size).
 * Linux only (it reads /proc).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

/** Issue 38's targets: sessions on one process, and KiB each. */
export const SESSIONS_TARGET = 10_000
export const SESSION_TARGET_KIB = 32
/** People each with one instance of a scoped child. */
const PRINCIPALS = 100

interface SessionsFigures {
  sessions: number
  beforeMiB: number
  afterMiB: number
  perSessionKiB: number
  /** Wall-clock seconds the sessions took to open (each: initialize, initialized, one call). */
  openSeconds: number
  met: boolean
}

interface PrincipalsFigures {
  principals: number
  beforeMiB: number
  afterMiB: number
  /** What one person's instance costs inside myc (its connection, its lists, its session). */
  perInstanceKiB: number
  /** The child's own resident memory, the median of the instances'. */
  childKiB: number
}

export type ScaleFigures = { sessions: SessionsFigures; principals: PrincipalsFigures } | { absent: string }

/** How long after the last session opened its memory is read (after a full collection: settledKiB), so that the sessions' own work is done. */
const SETTLE_MS = 5_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** VmRSS of a process, in KiB, after a full garbage collection in it (gc-on-signal.mjs). */
async function settledKiB(pid: number): Promise<number> {
  process.kill(pid, 'SIGUSR2')
  await sleep(2_000)
  return rssKiB(pid)
}

/** VmRSS of a process, in KiB. */
function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN)
}

/** `myc serve --http` on a free loopback port: its MCP URL, its pid, and how to stop it. */
async function serve(
  bundle: string,
  config: string,
  env: Record<string, string>,
): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const gcOnSignal = ['--expose-gc', '--import', new URL('gc-on-signal.mjs', import.meta.url).href]
  const args = [...gcOnSignal, bundle, 'serve', '--http', '127.0.0.1:0', '--config', config]
  const proc: ChildProcess = spawn(process.execPath, args, {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  let err = ''
  const url = await new Promise<string>((resolve, reject) => {
    proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk
      const m = /serving MCP over Streamable HTTP at (http:\S+)/.exec(err)
      if (m) resolve(m[1]!)
    })
    proc.once('exit', (code) => reject(new Error(`myc serve --http exited with ${code}:\n${err}`)))
  })
  return {
    url,
    pid: proc.pid!,
    stop: async () => {
      proc.kill('SIGTERM')
      await exited
    },
  }
}

const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }

/** One 2025 session, as a client opens it: initialize, initialized, one tools/call (`echo` of the bench's children). Resolves with its id. */
async function openSession(url: string, tool: string, token?: string): Promise<string> {
  const auth: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {}
  const init = await fetch(url, {
    method: 'POST',
    headers: { ...HEADERS, ...auth },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench-scale', version: '1' } },
    }),
  })
  await init.text()
  const id = init.headers.get('mcp-session-id')
  if (!id) throw new Error(`initialize answered ${init.status} without a session`)
  const session = { ...HEADERS, ...auth, 'Mcp-Session-Id': id, 'MCP-Protocol-Version': '2025-11-25' }
  await (
    await fetch(url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
  ).text()
  const call = await fetch(url, {
    method: 'POST',
    headers: session,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      // The echo fixture takes `message`, the tiny child `m`: each ignores the other.
      params: { name: tool, arguments: { message: 'hi', m: 'hi' } },
    }),
  })
  const text = await call.text()
  if (!text.includes('"result"') || text.includes('"isError":true'))
    throw new Error(`the call of session ${id} failed: ${text.slice(0, 200)}`)
  return id
}

/** Runs `task(i)` for i < n, `concurrency` at a time. */
async function inParallel(n: number, concurrency: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await task(next++)
    }),
  )
}

function configFile(config: Record<string, unknown>): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'myc-bench-scale-')), 'mycelium.config.json')
  writeFileSync(file, JSON.stringify(config))
  return file
}

/**
 * N sessions of one credential (no tokens: loopback), each initialized and
 * one call made, kept open: myc's VmRSS after start and a few warm-up
 * sessions, and after the N, once settled.
 */
async function sessionsFigures(bundle: string, echo: string, env: Record<string, string>, n: number) {
  const config = configFile({
    mcpServers: { echo: { command: process.execPath, args: [echo] } },
    http: { maxSessions: n + 200, maxSessionsPerCredential: n + 200, sessionIdleMs: 3_600_000, metrics: false },
  })
  const myc = await serve(bundle, config, env)
  try {
    await inParallel(100, 20, () => openSession(myc.url, 'echo__echo'))
    await sleep(3_000)
    const before = await settledKiB(myc.pid)
    const started = performance.now()
    await inParallel(n, 32, () => openSession(myc.url, 'echo__echo'))
    const openSeconds = (performance.now() - started) / 1000
    // Once V8's memory reducer has given back what opening them left (it runs a while after allocation stops).
    await sleep(SETTLE_MS)
    const after = await settledKiB(myc.pid)
    const perSessionKiB = (after - before) / n
    return {
      sessions: n,
      beforeMiB: before / 1024,
      afterMiB: after / 1024,
      perSessionKiB,
      openSeconds,
      met: n >= SESSIONS_TARGET && perSessionKiB <= SESSION_TARGET_KIB,
    }
  } finally {
    await myc.stop()
  }
}

/**
 * `PRINCIPALS` people, each with a token of their own, each opening one
 * session and making one call of a scoped child (`scope: "principal"`):
 * myc's VmRSS before and after (less the sessions' own share, measured
 * above), and the instances' own (GET /instances gives their pids).
 */
async function principalsFigures(
  bundle: string,
  tiny: string,
  env: Record<string, string>,
  people: number,
  perSessionKiB: number,
) {
  const tokens = Array.from({ length: people }, () => randomBytes(24).toString('hex'))
  const scraper = randomBytes(24).toString('hex')
  const tokenEnv = Object.fromEntries(tokens.map((t, i) => [`MYC_BENCH_P${i}`, t]))
  const config = configFile({
    mcpServers: { tiny: { command: process.execPath, args: [tiny], scope: 'principal', maxInstances: people } },
    http: {
      tokens: tokens.map((_, i) => ({ env: `MYC_BENCH_P${i}`, role: 'bench', name: `p${i}` })),
      maxSessions: people + 50,
      metricsToken: { env: 'MYC_BENCH_SCRAPER' },
    },
  })
  const myc = await serve(bundle, config, { ...env, ...tokenEnv, MYC_BENCH_SCRAPER: scraper })
  try {
    await sleep(3_000)
    const before = await settledKiB(myc.pid)
    await inParallel(people, 10, (i) => openSession(myc.url, 'tiny__echo', tokens[i]))
    await sleep(5_000)
    const after = await settledKiB(myc.pid)
    const listed = (await (
      await fetch(new URL('/instances', myc.url), { headers: { Authorization: `Bearer ${scraper}` } })
    ).json()) as { instances: Array<{ pid: number | null }> }
    const children = listed.instances.flatMap((i) => (i.pid === null ? [] : [rssKiB(i.pid)])).sort((a, b) => a - b)
    return {
      principals: listed.instances.length,
      beforeMiB: before / 1024,
      afterMiB: after / 1024,
      perInstanceKiB: (after - before) / people - perSessionKiB,
      childKiB: children[Math.floor(children.length / 2)] ?? NaN,
    }
  } finally {
    await myc.stop()
  }
}

export async function scale(options: {
  root: string
  bundle: string
  env: Record<string, string>
  quick: boolean
}): Promise<ScaleFigures> {
  if (process.platform !== 'linux') return { absent: 'resident memory is read from /proc (Linux only)' }
  const echo = path.join(options.root, 'tests', 'fixtures', 'servers', 'echo.mjs')
  const tiny = path.join(options.root, 'bench', 'tiny-child.mjs')
  const sessions = await sessionsFigures(options.bundle, echo, options.env, options.quick ? 2_000 : SESSIONS_TARGET)
  const principals = await principalsFigures(
    options.bundle,
    tiny,
    options.env,
    options.quick ? 20 : PRINCIPALS,
    sessions.perSessionKiB,
  )
  return { sessions, principals }
}

/** The rows of the bench table. */
export function scaleRows(f: ScaleFigures): string[][] {
  if ('absent' in f) return [['sessions and instances at scale', '', f.absent, '', '']]
  const { sessions: s, principals: p } = f
  return [
    [
      `myc serve --http, ${s.sessions} sessions, one call each: VmRSS before / after (MiB)`,
      '',
      `${s.beforeMiB.toFixed(1)} / ${s.afterMiB.toFixed(1)}`,
      '',
      '',
    ],
    [
      'memory per session (KiB)',
      '',
      s.perSessionKiB.toFixed(1),
      '',
      `≤ ${SESSION_TARGET_KIB} KiB at ${SESSIONS_TARGET} ${s.met ? 'met' : 'MISSED'}`,
    ],
    [
      `${p.principals} people, one scoped instance each: memory per instance in myc (KiB), beside the child's own`,
      `${p.childKiB.toFixed(0)} (child)`,
      p.perInstanceKiB.toFixed(1),
      '',
      '',
    ],
  ]
}

import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client, ProtocolError } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { fixtureServer, repoRoot } from './fixtures.js'
import { OtlpReceiver } from './otlp-receiver.js'

/** The bundle the end-to-end tests run (`npm run build` makes it; `npm test` builds first). */
export const bundle = path.join(repoRoot, 'build', 'myc.cjs')

export function requireBundle(): void {
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run \`npm run build\` first (npm test does)`)
}

/** Runs `node build/myc.cjs <args>` to the end: its exit code, stdout and stderr. */
export function runMyc(
  args: string[],
  input?: string,
  options: { cwd?: string; env?: Record<string, string> } = {},
): { code: number | null; stdout: string; stderr: string } {
  requireBundle()
  const result = spawnSync(process.execPath, [bundle, ...args], {
    encoding: 'utf8',
    input: input ?? '',
    timeout: 60_000,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/**
 * {@link runMyc} without blocking this process: for a test whose myc talks to
 * a server in the test's own process (a registry, an OAuth server).
 * `command` runs another myc (the executable, an installed package's bin).
 */
export function runMycAsync(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; command?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  if (!options.command) requireBundle()
  const argv = options.command ? [options.command, ...args] : [process.execPath, bundle, ...args]
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/**
 * Runs `<command> tools --config <config>` with OTLP metrics sent to a
 * receiver in this process, which they reach only if OpenTelemetry, an
 * embedded library (build/embedded-libraries.mjs), was read and loaded:
 * the run, and the paths the receiver was sent.
 */
export async function toolsWithTelemetry(
  command: string,
  config: string,
): Promise<{ code: number | null; stderr: string; paths: string[] }> {
  const receiver = new OtlpReceiver()
  await receiver.start()
  try {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }
    const r = await runMycAsync(['tools', '--config', config], { command, env })
    return { code: r.code, stderr: r.stderr, paths: receiver.requests.map((q) => q.path) }
  } finally {
    await receiver.close()
  }
}

/** A fixture server over Streamable HTTP on a free port (FIXTURE_HTTP): its /mcp URL, and stop(). */
export async function startHttpFixture(name: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [fixtureServer(name)], {
    env: { ...process.env, FIXTURE_HTTP: '127.0.0.1:0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const url = await new Promise<string>((resolve, reject) => {
    let said = ''
    child.stderr.on('data', (chunk: Buffer) => {
      said += chunk.toString()
      const m = /listening on (http:\S+)/.exec(said)
      if (m) resolve(m[1]!)
    })
    child.once('exit', (code) => reject(new Error(`the HTTP fixture ${name} exited (${code}): ${said}`)))
  })
  return { url, stop: () => void child.kill() }
}

/** Absolute path of an npm MCP server's entry script. */
export function npmServer(name: 'server-everything' | 'server-memory' | 'server-filesystem'): string {
  return path.join(repoRoot, 'node_modules', '@modelcontextprotocol', name, 'dist', 'index.js')
}

/** Writes a config file into a new temp dir and returns its path. */
export function writeConfig(config: unknown, name = 'mycelium.config.json'): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-e2e-'))
  const file = path.join(dir, name)
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config, null, 2))
  return file
}

/** Connects an SDK client to `node build/myc.cjs <args>` over real stdio. */
export async function connectToMyc(
  args: string[],
  options: {
    capabilities?: Record<string, unknown>
    env?: Record<string, string>
    cwd?: string
    setup?: (c: Client) => void
  } = {},
): Promise<{ client: Client; transport: StdioClientTransport }> {
  requireBundle()
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bundle, ...args],
    env: { ...(process.env as Record<string, string>), ...options.env },
    stderr: 'pipe',
    ...(options.cwd ? { cwd: options.cwd } : {}),
  })
  const client = new Client({ name: 'e2e', version: '1.0.0' }, { capabilities: options.capabilities ?? {} })
  options.setup?.(client)
  await client.connect(transport)
  return { client, transport }
}

/**
 * Every process below `pid` (children, grandchildren…). On Linux from each
 * thread's `children` list in /proc: tests poll this every few milliseconds
 * while a tree starts, and a `ps` per look cost more CPU than the tree itself.
 */
export function descendants(pid: number): number[] {
  const childrenOf = existsSync('/proc/self/task') ? childrenInProc : childrenFromPs()
  const result: number[] = []
  const queue = [pid]
  while (queue.length > 0) {
    for (const c of childrenOf(queue.shift()!)) {
      result.push(c)
      queue.push(c)
    }
  }
  return result
}

/** The children of `pid` as /proc lists them, by each of its threads. */
function childrenInProc(pid: number): number[] {
  let threads: string[]
  try {
    threads = readdirSync(`/proc/${pid}/task`)
  } catch {
    // The process is gone (ENOENT): it has no children.
    return []
  }
  return threads.flatMap((tid) => {
    try {
      return readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number)
    } catch {
      // The thread or the process ended since the listing (ENOENT, ESRCH): no children of it.
      return []
    }
  })
}

/** Where there is no /proc (macOS): every process's children, from one `ps`. */
function childrenFromPs(): (pid: number) => number[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
  const children = new Map<number, number[]>()
  for (const line of out.trim().split('\n')) {
    const [p, pp] = line.trim().split(/\s+/).map(Number)
    if (p === undefined || pp === undefined) continue
    children.set(pp, [...(children.get(pp) ?? []), p])
  }
  return (pid) => children.get(pid) ?? []
}

/**
 * Whether `pid` runs. A process that exited but is not reaped yet (a zombie:
 * its parent went first, and the machine's init may reap orphans only every
 * second or so) does not: it holds nothing but its number.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    // ESRCH: no such process (or EPERM, another user's: not one a test started).
    return false
  }
  return !isZombie(pid)
}

/** Whether /proc says `pid` is a zombie (false where there is no /proc, or the process is gone). */
function isZombie(pid: number): boolean {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    // No /proc (macOS), or the process was reaped since: no zombie to see.
    return false
  }
  // "pid (name) state …": the name may hold spaces and parentheses, the state follows the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z'
}

/** A call's JSON-RPC error as "code message" ("answered" when it succeeded), to compare nonexistence answers. */
export async function protocolErrorOf(call: () => Promise<unknown>): Promise<string> {
  try {
    await call()
    return 'answered'
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error
    return `${error.code} ${error.message}`
  }
}

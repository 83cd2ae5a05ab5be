/**
 * Where the CPU of a relayed call goes (a profiling aid beside `npm run
 * bench`): the client (this process), the relay and the child, each in CPU
 * microseconds per call read from /proc (Linux), for calls straight to the
 * echo child and through `build/myc.cjs serve`.
 *
 *   node --import tsx bench/cpu-split.ts
 *
 * Environment: ROUNDS (3), TOTAL calls per round (20000), CONC calls in
 * flight (32), SKIP_DIRECT=1 (myc only), BARE=<script> (a relay script run
 * as `node <script> node echo.mjs` in place of myc, e.g. bench/bare-relay.mjs),
 * MYC_ARGS (node flags for myc, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`),
 * MYC_WRAP (a command myc runs under, e.g. `perf record -g -o /tmp/perf.data`;
 * then the first figure is the wrapper's), THREADS=1 (each thread's ticks).
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { passthrough } from '../src/protocol/passthrough.js'
import { callsInFlight } from './in-flight.js'

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)))
const bundle = path.join(root, 'build', 'myc.cjs')
const echo = path.join(root, 'tests', 'fixtures', 'servers', 'echo.mjs')
const env = { ...(process.env as Record<string, string>) }
delete env.NODE_EXTRA_CA_CERTS
const words = (name: string) => (process.env[name] ? process.env[name]!.split(' ') : [])

/** A process's user + system CPU so far, in microseconds (USER_HZ is 100). */
function cpuOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

function relayCommand(config: string): { command: string; args: string[] } {
  if (process.env.BARE) return { command: process.execPath, args: [process.env.BARE, process.execPath, echo] }
  const wrap = words('MYC_WRAP')
  const node = [...words('MYC_ARGS'), bundle, 'serve', '--config', config]
  return wrap.length > 0
    ? { command: wrap[0]!, args: [...wrap.slice(1), process.execPath, ...node] }
    : { command: process.execPath, args: node }
}

async function run(target: 'direct' | 'relay', total: number, concurrency: number) {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-cpu-'))
  const config = path.join(dir, 'mycelium.config.json')
  writeFileSync(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [echo] } } }))
  const transport =
    target === 'direct'
      ? new StdioClientTransport({ command: process.execPath, args: [echo], env })
      : new StdioClientTransport({ ...relayCommand(config), env, stderr: 'ignore' })
  const client = new Client({ name: 'cpu-split', version: '1' })
  await client.connect(transport)
  const name = target === 'direct' ? 'echo' : 'echo__echo'
  const call = () =>
    client.request({ method: 'tools/call', params: { name, arguments: { message: 'ping' } } }, passthrough)
  for (let i = 0; i < 2_000; i++) await call()
  const pids = [transport.pid!, ...childrenOf(transport.pid!)]
  const before = pids.map(cpuOf)
  const self = process.cpuUsage()
  const t0 = performance.now()
  await callsInFlight(total, concurrency, call)
  const ms = performance.now() - t0
  const client_ = process.cpuUsage(self)
  const after = pids.map(cpuOf)
  if (process.env.THREADS) {
    for (const pid of pids) {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
        const fields = stat.split(') ')[1]!.split(' ')
        console.log(
          `  ${pid}/${tid} ${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}: user ${fields[11]} sys ${fields[12]} ticks`,
        )
      }
    }
  }
  await client.close()
  const perCall = (us: number) => Number((us / total).toFixed(1))
  return {
    target,
    callsPerSecond: Math.round(total / (ms / 1000)),
    clientUs: perCall(client_.user + client_.system),
    processUs: pids.map((pid, i) => perCall(after[i]! - before[i]!)),
  }
}

const rounds = Number(process.env.ROUNDS ?? 3)
const total = Number(process.env.TOTAL ?? 20_000)
const concurrency = Number(process.env.CONC ?? 32)
for (let i = 0; i < rounds; i++) {
  if (!process.env.SKIP_DIRECT) console.log(JSON.stringify(await run('direct', total, concurrency)))
  console.log(JSON.stringify(await run('relay', total, concurrency)))
}

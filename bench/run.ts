/**
 * `npm run bench`: calls through myc (build/myc.cjs) against the same calls
 * made straight to the child, in one run, so the ratios hold on a noisy
 * machine. Prints a table and writes bench/results/latest.json.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { passthrough } from '../src/protocol/passthrough.js'

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)))
const bundle = path.join(root, 'build', 'myc.cjs')
const echoFixture = path.join(root, 'tests', 'fixtures', 'servers', 'echo.mjs')
const quick = process.argv.includes('--quick')
// NODE_EXTRA_CA_CERTS slows every Node start here (TOOLCHAIN.md); keep it out of start-up figures.
const env = { ...(process.env as Record<string, string>) }
delete env.NODE_EXTRA_CA_CERTS

function tmpConfig(servers: Record<string, unknown>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-bench-'))
  const file = path.join(dir, 'mycelium.config.json')
  writeFileSync(file, JSON.stringify({ mcpServers: servers }))
  return file
}

const echoEntry = (extraEnv: Record<string, string> = {}) => ({ command: process.execPath, args: [echoFixture], env: extraEnv })

async function connect(target: 'direct' | 'myc', options: { children?: number; echoTools?: number } = {}): Promise<Client> {
  const extraEnv: Record<string, string> = options.echoTools ? { ECHO_TOOLS: String(options.echoTools) } : {}
  const transport =
    target === 'direct'
      ? new StdioClientTransport({ command: process.execPath, args: [echoFixture], env: { ...env, ...extraEnv } })
      : new StdioClientTransport({
          command: process.execPath,
          args: [bundle, 'serve', '--config', tmpConfig(Object.fromEntries(Array.from({ length: options.children ?? 1 }, (_, i) => [i === 0 ? 'echo' : `echo${i}`, echoEntry(extraEnv)])))],
          env,
          stderr: 'ignore',
        })
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(transport)
  return client
}

const call = (client: Client, name: string) => client.request({ method: 'tools/call', params: { name, arguments: { message: 'ping' } } }, passthrough)

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50)

async function sequential(direct: Client, myc: Client) {
  const blocks = quick ? 4 : 10
  const perBlock = quick ? 100 : 300
  for (let i = 0; i < 300; i++) {
    await call(direct, 'echo')
    await call(myc, 'echo__echo')
  }
  const times = { direct: [] as number[], myc: [] as number[] }
  for (let b = 0; b < blocks; b++) {
    // Interleaved A/B blocks: drift on the machine hits both sides alike.
    for (const side of b % 2 === 0 ? (['direct', 'myc'] as const) : (['myc', 'direct'] as const)) {
      const client = side === 'direct' ? direct : myc
      const name = side === 'direct' ? 'echo' : 'echo__echo'
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
  return { direct: stats(times.direct), myc: stats(times.myc) }
}

async function throughput(client: Client, name: string, total: number, concurrency: number): Promise<number> {
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++
        await call(client, name)
      }
    }),
  )
  return total / ((performance.now() - t0) / 1000)
}

async function timeToFirstList(target: 'direct' | 'myc', children: number): Promise<number> {
  const t0 = performance.now()
  const client = await connect(target, { children })
  await client.listTools()
  const elapsed = performance.now() - t0
  await client.close()
  return elapsed
}

async function main() {
  const results: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, quick }
  const direct = await connect('direct')
  const myc = await connect('myc')

  const seq = await sequential(direct, myc)
  results.sequential = { ...seq, p50Ratio: seq.myc.p50 / seq.direct.p50, p99Ratio: seq.myc.p99 / seq.direct.p99 }

  const total = quick ? 2_000 : 6_000
  await throughput(direct, 'echo', 500, 32)
  await throughput(myc, 'echo__echo', 500, 32)
  const tp = { direct: [] as number[], myc: [] as number[] }
  for (let i = 0; i < 3; i++) {
    tp.direct.push(await throughput(direct, 'echo', total, 32))
    tp.myc.push(await throughput(myc, 'echo__echo', total, 32))
  }
  results.throughput32 = { direct: median(tp.direct), myc: median(tp.myc), ratio: median(tp.myc) / median(tp.direct) }
  await direct.close()
  await myc.close()

  const runs = quick ? 3 : 5
  const startup = { oneChildDirect: [] as number[], twentyChildrenMyc: [] as number[] }
  for (let i = 0; i < runs; i++) {
    startup.oneChildDirect.push(await timeToFirstList('direct', 1))
    startup.twentyChildrenMyc.push(await timeToFirstList('myc', 20))
  }
  results.startup = { oneChildDirectMs: median(startup.oneChildDirect), twentyChildrenMycMs: median(startup.twentyChildrenMyc), ratio: median(startup.twentyChildrenMyc) / median(startup.oneChildDirect) }

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

  const targets = {
    sequentialP50Ratio: { value: (results.sequential as { p50Ratio: number }).p50Ratio, target: '≤ 1.6', met: (results.sequential as { p50Ratio: number }).p50Ratio <= 1.6 },
    throughputRatio: { value: (results.throughput32 as { ratio: number }).ratio, target: '≥ 0.8', met: (results.throughput32 as { ratio: number }).ratio >= 0.8 },
    startupRatio: { value: (results.startup as { ratio: number }).ratio, target: '≤ 1.2', met: (results.startup as { ratio: number }).ratio <= 1.2 },
    toolsList2000Ms: { value: (results.toolsList2000 as { medianMs: number }).medianMs, target: '≤ 5 ms', met: (results.toolsList2000 as { medianMs: number }).medianMs <= 5 },
  }
  results.targets = targets

  const s = results.sequential as { direct: { p50: number; p99: number }; myc: { p50: number; p99: number } }
  const t = results.throughput32 as { direct: number; myc: number }
  const st = results.startup as { oneChildDirectMs: number; twentyChildrenMycMs: number }
  const rows = [
    ['measure', 'direct', 'through myc', 'ratio', 'target'],
    ['sequential p50 (ms)', s.direct.p50.toFixed(3), s.myc.p50.toFixed(3), targets.sequentialP50Ratio.value.toFixed(2), `${targets.sequentialP50Ratio.target} ${targets.sequentialP50Ratio.met ? 'met' : 'MISSED'}`],
    ['sequential p99 (ms)', s.direct.p99.toFixed(3), s.myc.p99.toFixed(3), (s.myc.p99 / s.direct.p99).toFixed(2), ''],
    ['throughput @32 (calls/s)', t.direct.toFixed(0), t.myc.toFixed(0), targets.throughputRatio.value.toFixed(2), `${targets.throughputRatio.target} ${targets.throughputRatio.met ? 'met' : 'MISSED'}`],
    ['first tools/list (ms): 1 child direct vs 20 via myc', st.oneChildDirectMs.toFixed(0), st.twentyChildrenMycMs.toFixed(0), targets.startupRatio.value.toFixed(2), `${targets.startupRatio.target} ${targets.startupRatio.met ? 'met' : 'MISSED'}`],
    ['tools/list, 2,000 tools (ms)', '', targets.toolsList2000Ms.value.toFixed(2), '', `${targets.toolsList2000Ms.target} ${targets.toolsList2000Ms.met ? 'met' : 'MISSED'}`],
  ]
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  process.stdout.write(`${rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')).join('\n')}\n`)
  mkdirSync(path.join(root, 'bench', 'results'), { recursive: true })
  writeFileSync(path.join(root, 'bench', 'results', 'latest.json'), `${JSON.stringify(results, null, 2)}\n`)
  process.stdout.write('wrote bench/results/latest.json\n')
}

await main()

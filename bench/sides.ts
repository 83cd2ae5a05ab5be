/**
 * The sides of the benchmark page, measured in one run: small calls and
 * large messages (64 KiB and 1 MiB each way) over stdio (the child direct,
 * the copy relay, myc, 1MCP) and over HTTP (the SDK's own HTTP server serving
 * the tool, myc with metrics on and off and with tracing, 1MCP, mcp-hub),
 * and a 10 MiB answer beside small calls through one myc. Latency comes from
 * interleaved blocks (drift on the machine hits every side alike), so only
 * the ratios of one run mean anything on a busy machine.
 */
import { createServer } from 'node:http'
import { performance } from 'node:perf_hooks'
import { existsSync, readFileSync } from 'node:fs'
import { passthrough } from '../src/protocol/passthrough.js'
import { callsInFlight } from './in-flight.js'
import { isAbsent, mcpHubHttp, oneMcpHttp, oneMcpStdio, startPeer, type Connected, type PeerSide } from './peers.js'

/** How the bench starts its own sides (run.ts knows the bundle and the fixtures). */
export interface SideMakers {
  env: Record<string, string>
  echo: { command: string; args: string[] }
  stdio: (target: 'direct' | 'copy' | 'myc') => Promise<Connected>
  http: (target: 'direct' | 'copy' | 'myc' | 'mycNoMetrics' | 'mycTraced', traceSink: string) => Promise<Connected>
  /** A myc with two echo children (`echo`, and `bulk` with its `big` tool), for the 10 MiB case; it measures its event loop (bench/loop-delay.mjs) into `loopFile`. */
  mycTwoChildren: () => Promise<Connected & { pid: number | undefined; loopFile: string }>
}

export interface SideFigures {
  p50Ms?: number
  p99Ms?: number
  callsPerSecond?: number
  /** p50 (ms) of a call whose message (and so its answer) is this many bytes. */
  large?: Record<string, number>
  /** Why a large message did not go through this side (the first size it failed at). */
  largeRefused?: string
  absent?: string
}

export const LARGE_SIZES = { '64 KiB': 64 * 1024, '1 MiB': 1024 * 1024 } as const

const call = (side: Connected, message: string) =>
  side.client.request({ method: 'tools/call', params: { name: side.tool, arguments: { message } } }, passthrough)

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

/** p50 and p99 of each side, `blocks` interleaved blocks of `perBlock` calls after `warm` calls each. */
async function latencies(
  sides: Record<string, Connected>,
  message: string,
  plan: { warm: number; blocks: number; perBlock: number },
): Promise<Record<string, { p50: number; p99: number }>> {
  const names = Object.keys(sides)
  for (let i = 0; i < plan.warm; i++) for (const name of names) await call(sides[name]!, message)
  const times = Object.fromEntries(names.map((n) => [n, [] as number[]]))
  for (let b = 0; b < plan.blocks; b++) {
    for (const name of b % 2 === 0 ? names : [...names].reverse()) {
      for (let i = 0; i < plan.perBlock; i++) {
        const t0 = performance.now()
        await call(sides[name]!, message)
        times[name]!.push(performance.now() - t0)
      }
    }
  }
  return Object.fromEntries(
    names.map((n) => {
      const s = times[n]!.sort((a, b) => a - b)
      return [n, { p50: percentile(s, 50), p99: percentile(s, 99) }]
    }),
  )
}

/** Calls per second of each side with 32 in flight: the median of three interleaved rounds. */
async function throughputs(sides: Record<string, Connected>, total: number): Promise<Record<string, number>> {
  const rounds = Object.fromEntries(Object.keys(sides).map((n) => [n, [] as number[]]))
  for (const side of Object.values(sides)) await callsInFlight(200, 32, () => call(side, 'ping'))
  for (let r = 0; r < 3; r++) {
    for (const [name, side] of Object.entries(sides)) {
      const t0 = performance.now()
      await callsInFlight(total, 32, () => call(side, 'ping'))
      rounds[name]!.push(total / ((performance.now() - t0) / 1000))
    }
  }
  return Object.fromEntries(Object.entries(rounds).map(([n, xs]) => [n, xs.sort((a, b) => a - b)[1]!]))
}

/** Small calls and large messages over every present side of one transport. */
async function measure(sides: Record<string, PeerSide>, quick: boolean): Promise<Record<string, SideFigures>> {
  const present = Object.fromEntries(Object.entries(sides).filter(([, s]) => !isAbsent(s))) as Record<string, Connected>
  const small = await latencies(present, 'ping', { warm: 200, blocks: quick ? 4 : 8, perBlock: quick ? 100 : 250 })
  const rates = await throughputs(present, quick ? 1_000 : 3_000)
  const large: Record<string, Record<string, number>> = Object.fromEntries(Object.keys(present).map((n) => [n, {}]))
  const refused: Record<string, string> = {}
  for (const [label, bytes] of Object.entries(LARGE_SIZES)) {
    const message = 'x'.repeat(bytes)
    // A side that cannot carry the message (a body limit) is reported so, and measured no further at that size.
    const able: Record<string, Connected> = {}
    for (const [name, side] of Object.entries(present)) {
      const failure = await call(side, message).then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 120),
      )
      if (failure === undefined) able[name] = side
      else refused[name] = `${label}: ${failure}`
    }
    const perBlock = Math.max(5, Math.round((quick ? 400 : 1_200) / (bytes / 4096)))
    const big = await latencies(able, message, { warm: 5, blocks: 4, perBlock })
    for (const name of Object.keys(able)) large[name]![label] = big[name]!.p50
  }
  return Object.fromEntries(
    Object.entries(sides).map(([name, side]) =>
      isAbsent(side)
        ? [name, { absent: side.absent }]
        : [
            name,
            {
              p50Ms: small[name]!.p50,
              p99Ms: small[name]!.p99,
              callsPerSecond: rates[name]!,
              large: large[name]!,
              ...(refused[name] ? { largeRefused: refused[name] } : {}),
            },
          ],
    ),
  )
}

/** p50, p99 and the longest of sequential small calls to `side`, made until `done()` says so. */
async function smallCallsUntil(side: Connected, done: () => boolean) {
  const times: number[] = []
  while (!done()) {
    const t0 = performance.now()
    await call(side, 'ping')
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 50), p99: percentile(times, 99), max: times.at(-1)!, calls: times.length }
}

/**
 * What 10 MiB answers do to small calls beside them through one myc (to
 * another child): small calls one after another alone, then while a fixed
 * number of 10 MiB calls go through one after another (so that every run
 * covers as many big answers, however fast the small calls are); myc's
 * peak memory, and how long its event loop was held meanwhile.
 */
export async function tenMiB(makers: Pick<SideMakers, 'mycTwoChildren'>, quick: boolean) {
  const myc = await makers.mycTwoChildren()
  const bulk: Connected = { ...myc, tool: 'bulk__big' }
  const bytes = 10 * 1024 * 1024
  const bigAnswers = quick ? 3 : 10
  try {
    for (let i = 0; i < 100; i++) await call(myc, 'ping')
    let alone = 0
    const aloneFigures = await smallCallsUntil(myc, () => ++alone > (quick ? 200 : 600))
    if (myc.pid) process.kill(myc.pid, 'SIGUSR2')
    let answers = 0
    const big = (async () => {
      for (; answers < bigAnswers; answers++) {
        const r = await bulk.client.request(
          { method: 'tools/call', params: { name: bulk.tool, arguments: { bytes } } },
          passthrough,
        )
        const text = (r.content as Array<{ text: string }>)[0]!.text
        if (text.length !== bytes) throw new Error(`bench 10 MiB: an answer of ${text.length} characters`)
      }
    })()
    let failed = false
    big.catch(() => (failed = true))
    const beside = await smallCallsUntil(myc, () => failed || answers === bigAnswers)
    await big
    const status = myc.pid ? readFileSync(`/proc/${myc.pid}/status`, 'utf8') : ''
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status)
    return {
      alone: aloneFigures,
      beside,
      p50Ratio: beside.p50 / aloneFigures.p50,
      bigAnswers,
      peakRssMiB: hwm ? Number(hwm[1]) / 1024 : undefined,
      loop: await loopDelay(myc.pid, myc.loopFile),
    }
  } finally {
    await myc.close()
  }
}

/** How long myc's event loop was held while the big answers went through (bench/loop-delay.mjs): asked with a second SIGUSR2. */
async function loopDelay(pid: number | undefined, file: string): Promise<{ p99Ms: number; maxMs: number } | undefined> {
  if (!pid) return undefined
  process.kill(pid, 'SIGUSR2')
  for (let i = 0; i < 250 && !existsSync(file); i++) await new Promise((resolve) => setTimeout(resolve, 20))
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { p99Ms: number; maxMs: number }) : undefined
}

/** Every side of the page, stdio then HTTP, then the 10 MiB case. */
export async function sidesBench(makers: SideMakers, quick: boolean) {
  const peer = { env: makers.env, echo: makers.echo }
  const stdio: Record<string, PeerSide> = {
    direct: await makers.stdio('direct'),
    'copy relay': await makers.stdio('copy'),
    myc: await makers.stdio('myc'),
    '1MCP': await startPeer(oneMcpStdio, peer),
    'mcp-hub': { absent: 'no stdio face (HTTP only)' },
  }
  const stdioFigures = await closeAfter(stdio, () => measure(stdio, quick))
  const sink = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end())
  })
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve))
  const traceSink = `http://127.0.0.1:${(sink.address() as { port: number }).port}`
  const http: Record<string, PeerSide> = {
    direct: await makers.http('direct', traceSink),
    'copy relay': await makers.http('copy', traceSink),
    myc: await makers.http('myc', traceSink),
    'myc, metrics off': await makers.http('mycNoMetrics', traceSink),
    'myc, traced': await makers.http('mycTraced', traceSink),
    '1MCP': await startPeer(oneMcpHttp, peer),
    'mcp-hub': await startPeer(mcpHubHttp, peer),
  }
  const httpFigures = await closeAfter(http, () => measure(http, quick))
  sink.close()
  return { stdio: stdioFigures, http: httpFigures, tenMiB: await tenMiB(makers, quick) }
}

async function closeAfter<T>(sides: Record<string, PeerSide>, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } finally {
    await Promise.all(Object.values(sides).map((s) => (isAbsent(s) ? undefined : s.close().catch(() => {}))))
  }
}

export type SidesResult = Awaited<ReturnType<typeof sidesBench>>

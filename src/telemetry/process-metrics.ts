import { readdir, readFile } from 'node:fs/promises'
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
import { getHeapSpaceStatistics } from 'node:v8'
import type { PrometheusRegistry } from './prometheus.js'

/**
 * The process and Node.js metrics of `GET /metrics`, by the names and help
 * texts Prometheus' Node.js client gives them (`process_*`, `nodejs_*`), so
 * that dashboards made for those read these. Returns what stops the two
 * that watch between scrapes (event loop delay, garbage collections).
 */
export function observeProcess(registry: PrometheusRegistry): () => void {
  observeCpuAndMemory(registry)
  observeHeap(registry)
  observeActive(registry)
  const stopLag = observeEventLoop(registry)
  const stopGc = observeGc(registry)
  registry.gauge('nodejs_version_info', 'Node.js version info.', (set) => {
    const [major, minor, patch] = process.versions.node.split('.')
    set(1, { version: process.version, major: major!, minor: minor!, patch: patch! })
  })
  return () => {
    stopLag()
    stopGc()
  }
}

/** Linux's own figures for this process (VmRSS, VmSize, VmData), in bytes; undefined elsewhere. */
async function procStatus(): Promise<{ rss: number; size: number; data: number } | undefined> {
  if (process.platform !== 'linux') return undefined
  const text = await readFile('/proc/self/status', 'utf8')
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024
  return { rss: kib('VmRSS'), size: kib('VmSize'), data: kib('VmData') }
}

function observeCpuAndMemory(registry: PrometheusRegistry): void {
  const cpu: Array<[string, string, (u: NodeJS.CpuUsage) => number]> = [
    ['process_cpu_user_seconds_total', 'Total user CPU time spent in seconds.', (u) => u.user],
    ['process_cpu_system_seconds_total', 'Total system CPU time spent in seconds.', (u) => u.system],
    ['process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.', (u) => u.user + u.system],
  ]
  for (const [name, help, pick] of cpu)
    registry.observedCounter(name, help, (set) => set(pick(process.cpuUsage()) / 1e6))
  const started = Math.round(Date.now() / 1000 - process.uptime())
  registry.gauge('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', (set) =>
    set(started),
  )
  registry.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', async (set) =>
    set((await procStatus())?.rss ?? process.memoryUsage().rss),
  )
  if (process.platform !== 'linux') return
  registry.gauge('process_virtual_memory_bytes', 'Virtual memory size in bytes.', async (set) =>
    set((await procStatus())!.size),
  )
  registry.gauge('process_heap_bytes', 'Process heap size in bytes.', async (set) => set((await procStatus())!.data))
  registry.gauge('process_open_fds', 'Number of open file descriptors.', async (set) =>
    // The listing's own descriptor is among them.
    set((await readdir('/proc/self/fd')).length - 1),
  )
  registry.gauge('process_max_fds', 'Maximum number of open file descriptors.', async (set) => {
    const limit = /Max open files\s+(\d+)/.exec(await readFile('/proc/self/limits', 'utf8'))?.[1]
    if (limit !== undefined) set(Number(limit))
  })
}

function observeHeap(registry: PrometheusRegistry): void {
  const memory: Array<[string, string, (m: NodeJS.MemoryUsage) => number]> = [
    ['nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', (m) => m.heapTotal],
    ['nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', (m) => m.heapUsed],
    ['nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', (m) => m.external],
  ]
  for (const [name, help, pick] of memory) registry.gauge(name, help, (set) => set(pick(process.memoryUsage())))
  const spaces = (what: 'total' | 'used' | 'available', help: string) =>
    registry.gauge(`nodejs_heap_space_size_${what}_bytes`, help, (set) => {
      for (const s of getHeapSpaceStatistics()) {
        const value = what === 'total' ? s.space_size : what === 'used' ? s.space_used_size : s.space_available_size
        set(value, { space: s.space_name.replace(/_space$/, '') })
      }
    })
  spaces('total', 'Process heap space size total from Node.js in bytes.')
  spaces('used', 'Process heap space size used from Node.js in bytes.')
  spaces('available', 'Process heap space size available from Node.js in bytes.')
}

/** What keeps the event loop alive, by type, and in all. */
function observeActive(registry: PrometheusRegistry): void {
  const byType = (name: string, help: string, totalHelp: string, types: () => string[]): void => {
    registry.gauge(name, help, (set) => {
      const counts = new Map<string, number>()
      for (const type of types()) counts.set(type, (counts.get(type) ?? 0) + 1)
      for (const [type, count] of counts) set(count, { type })
    })
    registry.gauge(`${name}_total`, totalHelp, (set) => set(types().length))
  }
  const internal = process as unknown as { _getActiveHandles(): object[]; _getActiveRequests(): object[] }
  const classNames = (list: object[]) => list.map((o) => o.constructor?.name ?? 'Object')
  byType(
    'nodejs_active_resources',
    'Number of active resources that are currently keeping the event loop alive, grouped by async resource type.',
    'Total number of active resources.',
    () => process.getActiveResourcesInfo(),
  )
  byType(
    'nodejs_active_handles',
    'Number of active libuv handles grouped by handle type. Every handle type is C++ class name.',
    'Total number of active handles.',
    () => classNames(internal._getActiveHandles()),
  )
  byType(
    'nodejs_active_requests',
    'Number of active libuv requests grouped by request type. Every request type is C++ class name.',
    'Total number of active requests.',
    () => classNames(internal._getActiveRequests()),
  )
}

/** The event loop's delay: one measured at the scrape, and the statistics of the delays since the last one. */
function observeEventLoop(registry: PrometheusRegistry): () => void {
  const delays = monitorEventLoopDelay()
  delays.enable()
  registry.gauge('nodejs_eventloop_lag_seconds', 'Lag of event loop in seconds.', async (set) => {
    const start = process.hrtime.bigint()
    await new Promise((resolve) => setImmediate(resolve))
    set(Number(process.hrtime.bigint() - start) / 1e9)
  })
  const stats: Array<[string, string, () => number]> = [
    ['min', 'The minimum recorded event loop delay.', () => delays.min],
    ['max', 'The maximum recorded event loop delay.', () => delays.max],
    ['mean', 'The mean of the recorded event loop delays.', () => delays.mean],
    ['stddev', 'The standard deviation of the recorded event loop delays.', () => delays.stddev],
    ['p50', 'The 50th percentile of the recorded event loop delays.', () => delays.percentile(50)],
    ['p90', 'The 90th percentile of the recorded event loop delays.', () => delays.percentile(90)],
    ['p99', 'The 99th percentile of the recorded event loop delays.', () => delays.percentile(99)],
  ]
  for (const [stat, help, value] of stats)
    registry.gauge(`nodejs_eventloop_lag_${stat}_seconds`, help, (set) => set(value() / 1e9))
  // Each scrape sees the delays since the one before.
  registry.afterScrape(() => delays.reset())
  return () => delays.disable()
}

const GC_KINDS = new Map([
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weakcb'],
])

function observeGc(registry: PrometheusRegistry): () => void {
  const durations = registry.histogram(
    'nodejs_gc_duration_seconds',
    'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    [0.001, 0.01, 0.1, 1, 2, 5],
  )
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = GC_KINDS.get((entry as { detail?: { kind?: number } }).detail?.kind ?? -1)
      if (kind) durations.record(entry.duration / 1000, { kind })
    }
  })
  observer.observe({ entryTypes: ['gc'] })
  return () => observer.disconnect()
}

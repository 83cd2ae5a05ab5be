import { describe, expect, it } from 'vitest'
import { observeProcess } from '../../src/telemetry/process-metrics.js'
import { createPrometheusRegistry } from '../../src/telemetry/prometheus.js'
import { loadTelemetryDeps } from '../../src/telemetry/telemetry-deps.js'

/** The names of a text's samples, without the histogram suffixes. */
const typed = (text: string) => [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`)

describe('the Prometheus registry of /metrics, on OpenTelemetry', () => {
  it('writes counters, gauges and histograms by their Prometheus names, HELP and TYPE even before a first value', async () => {
    const registry = createPrometheusRegistry(await loadTelemetryDeps())
    const calls = registry.counter('x_calls_total', 'Calls.')
    const seconds = registry.histogram('x_duration_seconds', 'How long.', [0.1, 1])
    registry.gauge('x_open', 'Open now.', (set) => set(2))
    let text = await registry.text()
    expect(typed(text)).toEqual(['x_open gauge', 'x_calls_total counter', 'x_duration_seconds histogram'])
    expect(text).toContain('# HELP x_calls_total Calls.\n')
    expect(text).toContain('\nx_open 2\n')
    expect(text).not.toMatch(/otel_scope|target_info|no registered metrics/)

    calls.add(1, { server: 'a' })
    seconds.record(0.5, { server: 'a' })
    text = await registry.text()
    expect(text).toContain('x_calls_total{server="a"} 1\n')
    expect(text).toContain('x_duration_seconds_bucket{server="a",le="0.1"} 0\n')
    expect(text).toContain('x_duration_seconds_bucket{server="a",le="+Inf"} 1\n')
    expect(text).toContain('x_duration_seconds_count{server="a"} 1\n')
  })

  it('shows only the series a gauge reports at this scrape (a server a reload removed leaves none)', async () => {
    const registry = createPrometheusRegistry(await loadTelemetryDeps())
    let servers = ['a', 'b']
    registry.gauge('x_state', 'State.', (set) => {
      for (const server of servers) set(1, { server })
    })
    registry.observedCounter('x_restarts_total', 'Restarts.', (set) => {
      for (const server of servers) set(3, { server })
    })
    expect(await registry.text()).toMatch(/x_state\{server="b"\} 1\n/)
    servers = ['a']
    const text = await registry.text()
    expect(text).toContain('x_state{server="a"} 1\n')
    expect(text).not.toContain('server="b"')
    servers = []
    expect(typed(await registry.text())).toEqual(['x_state gauge', 'x_restarts_total counter'])
  })

  it("has the process and Node.js metrics of Prometheus' Node.js client, by the same names and types", async () => {
    const registry = createPrometheusRegistry(await loadTelemetryDeps())
    const stop = observeProcess(registry)
    try {
      const text = await registry.text()
      expect(typed(text).sort()).toEqual(
        [
          'process_cpu_user_seconds_total counter',
          'process_cpu_system_seconds_total counter',
          'process_cpu_seconds_total counter',
          'process_start_time_seconds gauge',
          'process_resident_memory_bytes gauge',
          'process_virtual_memory_bytes gauge',
          'process_heap_bytes gauge',
          'process_open_fds gauge',
          'process_max_fds gauge',
          'nodejs_eventloop_lag_seconds gauge',
          'nodejs_eventloop_lag_min_seconds gauge',
          'nodejs_eventloop_lag_max_seconds gauge',
          'nodejs_eventloop_lag_mean_seconds gauge',
          'nodejs_eventloop_lag_stddev_seconds gauge',
          'nodejs_eventloop_lag_p50_seconds gauge',
          'nodejs_eventloop_lag_p90_seconds gauge',
          'nodejs_eventloop_lag_p99_seconds gauge',
          'nodejs_active_resources gauge',
          'nodejs_active_resources_total gauge',
          'nodejs_active_handles gauge',
          'nodejs_active_handles_total gauge',
          'nodejs_active_requests gauge',
          'nodejs_active_requests_total gauge',
          'nodejs_heap_size_total_bytes gauge',
          'nodejs_heap_size_used_bytes gauge',
          'nodejs_external_memory_bytes gauge',
          'nodejs_heap_space_size_total_bytes gauge',
          'nodejs_heap_space_size_used_bytes gauge',
          'nodejs_heap_space_size_available_bytes gauge',
          'nodejs_version_info gauge',
          'nodejs_gc_duration_seconds histogram',
        ].sort(),
      )
      expect(text).toMatch(/^process_resident_memory_bytes [1-9]\d+$/m)
      expect(text).toContain(`nodejs_version_info{version="${process.version}",`)
      expect(text).toMatch(/^nodejs_heap_space_size_used_bytes\{space="old"\} [1-9]\d+$/m)
    } finally {
      stop()
    }
  })
})

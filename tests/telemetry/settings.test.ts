import { describe, expect, it } from 'vitest'
import { metricsSettings, tracingSettings } from '../../src/telemetry/settings.js'
import { carrierOf, parentSpanIdOf, traceIdOf, withCarrier } from '../../src/telemetry/trace-context.js'

describe('tracingSettings: the standard OTEL_* variables, then the config', () => {
  it('is off without an endpoint, and when OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none say so', () => {
    expect(tracingSettings({}, undefined)).toBeUndefined()
    expect(
      tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }, undefined),
    ).toBeUndefined()
    expect(
      tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }, undefined),
    ).toBeUndefined()
  })

  it('sends traces to <endpoint>/v1/traces, or to the traces endpoint as given; protobuf by default', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }, undefined)).toMatchObject({
      tracesUrl: 'http://c:4318/v1/traces',
      protocol: 'http/protobuf',
      serviceName: 'mycelium',
    })
    expect(
      tracingSettings(
        { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:1/x', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' },
        undefined,
      )?.tracesUrl,
    ).toBe('http://t:1/x')
    expect(
      tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, undefined)
        ?.protocol,
    ).toBe('http/json')
  })

  it('lets the environment win over the config, for the endpoint, protocol, service name and headers', () => {
    const config = {
      endpoint: 'http://from-config:4318',
      protocol: 'http/json' as const,
      serviceName: 'configured',
      headers: { a: '1', b: '2' },
    }
    expect(tracingSettings({}, config)).toMatchObject({
      tracesUrl: 'http://from-config:4318/v1/traces',
      protocol: 'http/json',
      serviceName: 'configured',
      headers: { a: '1', b: '2' },
    })
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_SERVICE_NAME: 'from-env',
      OTEL_EXPORTER_OTLP_HEADERS: 'b=3,api-key=s%20e',
    }
    expect(tracingSettings(env, config)).toMatchObject({
      tracesUrl: 'http://env:4318/v1/traces',
      protocol: 'http/protobuf',
      serviceName: 'from-env',
      headers: { a: '1', b: '3', 'api-key': 's e' },
    })
    expect(
      tracingSettings(
        { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_RESOURCE_ATTRIBUTES: 'team=x,service.name=via-attributes' },
        undefined,
      )?.serviceName,
    ).toBe('via-attributes')
  })

  it('reads the sampler and the batch processor’s variables, ignoring nonsense', () => {
    const s = tracingSettings(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
        OTEL_TRACES_SAMPLER: 'TraceIdRatio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_BSP_MAX_QUEUE_SIZE: 'lots',
      },
      undefined,
    )!
    expect(s.sampler).toEqual({ name: 'traceidratio', arg: 0.25 })
    expect(s.batch).toMatchObject({ scheduledDelayMillis: 100, maxQueueSize: 2048 })
  })
})

describe('metricsSettings: on with the OTLP endpoint, off on its own', () => {
  it('is off without an endpoint, and when OTEL_SDK_DISABLED or OTEL_METRICS_EXPORTER=none say so, whatever traces do', () => {
    expect(metricsSettings({}, undefined)).toBeUndefined()
    expect(
      metricsSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' }, undefined),
    ).toBeUndefined()
    expect(
      metricsSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_METRICS_EXPORTER: ' None ' }, undefined),
    ).toBeUndefined()
    // Each signal is turned off on its own.
    expect(
      tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_METRICS_EXPORTER: 'none' }, undefined),
    ).toBeDefined()
    expect(
      metricsSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }, undefined),
    ).toBeDefined()
    // The traces endpoint alone turns on traces, not metrics.
    expect(metricsSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:1/v1/traces' }, undefined)).toBeUndefined()
  })

  it('sends metrics to <endpoint>/v1/metrics, or to the metrics endpoint as given; every minute and protobuf by default', () => {
    expect(metricsSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318//' }, undefined)).toEqual({
      metricsUrl: 'http://c:4318/v1/metrics',
      protocol: 'http/protobuf',
      serviceName: 'mycelium',
      headers: {},
      exportIntervalMillis: 60_000,
      exportTimeoutMillis: 30_000,
      exporterTimeoutMillis: 10_000,
    })
    expect(
      metricsSettings(
        { OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://m:1/x', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' },
        undefined,
      )?.metricsUrl,
    ).toBe('http://m:1/x')
    expect(metricsSettings({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://m:1/x' }, undefined)?.metricsUrl).toBe(
      'http://m:1/x',
    )
    expect(metricsSettings({}, { endpoint: 'http://from-config:4318' })?.metricsUrl).toBe(
      'http://from-config:4318/v1/metrics',
    )
  })

  it('takes the protocol and headers of metrics before the general ones, and those before the config', () => {
    const config = {
      endpoint: 'http://cfg',
      protocol: 'http/json' as const,
      serviceName: 'configured',
      headers: { a: '1', b: '2' },
    }
    expect(metricsSettings({}, config)).toMatchObject({
      protocol: 'http/json',
      serviceName: 'configured',
      headers: { a: '1', b: '2' },
    })
    expect(metricsSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, config)?.protocol).toBe('http/protobuf')
    expect(
      metricsSettings(
        { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json' },
        config,
      )?.protocol,
    ).toBe('http/json')
    expect(
      metricsSettings({ OTEL_EXPORTER_OTLP_HEADERS: 'b=3,c=4', OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'c=5' }, config)
        ?.headers,
    ).toEqual({ a: '1', b: '3', c: '5' })
    // The traces' own variables are not the metrics'.
    expect(
      metricsSettings(
        { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x=1' },
        config,
      ),
    ).toMatchObject({ protocol: 'http/json', headers: { a: '1', b: '2' } })
  })

  it('reads the exporter’s timeout from myc’s environment: the signal’s own variable, else the general one, else 10 s', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_TIMEOUT: '500' }
    expect(tracingSettings(env, undefined)?.exporterTimeoutMillis).toBe(500)
    expect(metricsSettings(env, undefined)?.exporterTimeoutMillis).toBe(500)
    const own = { ...env, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '200', OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: '300' }
    expect(tracingSettings(own, undefined)?.exporterTimeoutMillis).toBe(200)
    expect(metricsSettings(own, undefined)?.exporterTimeoutMillis).toBe(300)
    const nonsense = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_TIMEOUT: 'soon' }
    expect(tracingSettings(nonsense, undefined)?.exporterTimeoutMillis).toBe(10_000)
    expect(metricsSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' }, undefined)?.exporterTimeoutMillis).toBe(10_000)
  })

  it('reads the export interval and timeout, ignoring nonsense; the timeout never above the interval', () => {
    expect(
      metricsSettings(
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
          OTEL_METRIC_EXPORT_INTERVAL: '200',
          OTEL_METRIC_EXPORT_TIMEOUT: '150',
        },
        undefined,
      ),
    ).toMatchObject({ exportIntervalMillis: 200, exportTimeoutMillis: 150 })
    expect(
      metricsSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_METRIC_EXPORT_INTERVAL: '200' }, undefined),
    ).toMatchObject({ exportIntervalMillis: 200, exportTimeoutMillis: 200 })
    expect(
      metricsSettings(
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
          OTEL_METRIC_EXPORT_INTERVAL: 'often',
          OTEL_METRIC_EXPORT_TIMEOUT: '-1',
        },
        undefined,
      ),
    ).toMatchObject({ exportIntervalMillis: 60_000, exportTimeoutMillis: 30_000 })
  })
})

describe('W3C trace context in _meta', () => {
  const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
  it('reads a valid traceparent and refuses malformed or all-zero ones', () => {
    expect(traceIdOf(tp)).toBe('4bf92f3577b34da6a3ce929d0e0e4736')
    expect(parentSpanIdOf(tp)).toBe('00f067aa0ba902b7')
    for (const bad of [
      '',
      '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      `${tp}-x`,
    ])
      expect(traceIdOf(bad), bad).toBeUndefined()
  })

  it('takes the carrier keys of _meta (strings only) and puts another in place of the caller’s', () => {
    expect(carrierOf({ traceparent: tp, tracestate: 'k=v', baggage: 5, other: 1 })).toEqual({
      traceparent: tp,
      tracestate: 'k=v',
    })
    expect(carrierOf({ tracestate: 'k=v' })).toBeUndefined()
    expect(carrierOf(null)).toBeUndefined()
    expect(withCarrier({ traceparent: tp, baggage: 'a=1', progressToken: 7 }, { traceparent: 'mine' })).toEqual({
      progressToken: 7,
      traceparent: 'mine',
    })
  })
})

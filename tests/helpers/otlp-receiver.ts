import { createServer, type Server } from 'node:http'
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net'

/** One span as OTLP/JSON carries it (the fields tests read). */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: Record<string, unknown>
  status?: { code?: number; message?: string }
  /** The names of its events, in order. */
  events: string[]
  serviceName: string
  /** Start and end, in milliseconds since the epoch. */
  startMs: number
  endMs: number
}

/** One data point of a metric as OTLP/JSON carries it: a histogram's count, sum and buckets, or a sum's or gauge's value. */
export interface ReceivedPoint {
  attributes: Record<string, unknown>
  count?: number
  sum?: number
  bucketCounts?: number[]
  explicitBounds?: number[]
  value?: number
}

/** One metric of one export (a periodic reader sends every metric again each time). */
export interface ReceivedMetric {
  name: string
  unit: string
  type: 'histogram' | 'sum' | 'gauge' | 'other'
  /** A sum's monotonicity (a counter: true; an up-down counter: false). */
  monotonic?: boolean
  points: ReceivedPoint[]
  serviceName: string
}

/**
 * An OTLP/HTTP receiver on loopback, as a collector would be: it takes
 * POST /v1/traces and /v1/metrics, decodes OTLP/JSON (protobuf bodies are
 * counted, not decoded) and keeps the spans and metrics.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = []
  readonly metrics: ReceivedMetric[] = []
  readonly requests: Array<{ path: string; contentType: string; bytes: number }> = []
  private server: Server | undefined
  url = ''

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const body = Buffer.concat(chunks)
        const contentType = req.headers['content-type'] ?? ''
        this.requests.push({ path: req.url ?? '', contentType, bytes: body.length })
        if (req.url === '/v1/traces' && contentType.includes('json'))
          this.decode(JSON.parse(body.toString('utf8')) as OtlpJson)
        if (req.url === '/v1/metrics' && contentType.includes('json'))
          this.decodeMetrics(JSON.parse(body.toString('utf8')) as OtlpMetricsJson)
        res.writeHead(200, {
          'Content-Type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf',
        })
        res.end(contentType.includes('json') ? '{}' : '')
      })
    })
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server!.address() as { port: number }).port}`
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve())
  }

  /** The data points of the metric named, from its latest export (cumulative: the latest holds everything so far). */
  latest(name: string): ReceivedPoint[] {
    return this.metrics.findLast((m) => m.name === name)?.points ?? []
  }

  private decodeMetrics(doc: OtlpMetricsJson): void {
    for (const rm of doc.resourceMetrics ?? []) {
      const serviceName = String(value(rm.resource?.attributes?.find((a) => a.key === 'service.name')?.value) ?? '')
      for (const sm of rm.scopeMetrics ?? [])
        for (const m of sm.metrics ?? []) {
          const type = m.histogram ? 'histogram' : m.sum ? 'sum' : m.gauge ? 'gauge' : 'other'
          const points = (m.histogram ?? m.sum ?? m.gauge)?.dataPoints ?? []
          this.metrics.push({
            name: m.name,
            unit: m.unit ?? '',
            type,
            ...(m.sum ? { monotonic: m.sum.isMonotonic === true } : {}),
            serviceName,
            points: points.map((p) => ({
              attributes: Object.fromEntries((p.attributes ?? []).map((a) => [a.key, value(a.value)])),
              ...(p.count !== undefined ? { count: Number(p.count) } : {}),
              ...(p.sum !== undefined ? { sum: Number(p.sum) } : {}),
              ...(p.bucketCounts ? { bucketCounts: p.bucketCounts.map(Number) } : {}),
              ...(p.explicitBounds ? { explicitBounds: p.explicitBounds.map(Number) } : {}),
              ...(p.asInt !== undefined
                ? { value: Number(p.asInt) }
                : p.asDouble !== undefined
                  ? { value: Number(p.asDouble) }
                  : {}),
            })),
          })
        }
    }
  }

  private decode(doc: OtlpJson): void {
    for (const rs of doc.resourceSpans ?? []) {
      const serviceName = String(value(rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value) ?? '')
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? [])
          this.spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
            name: s.name,
            kind: s.kind,
            attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, value(a.value)])),
            ...(s.status ? { status: s.status } : {}),
            events: (s.events ?? []).map((e) => e.name),
            serviceName,
            startMs: Number(BigInt(s.startTimeUnixNano ?? 0) / 1_000n) / 1_000,
            endMs: Number(BigInt(s.endTimeUnixNano ?? 0) / 1_000n) / 1_000,
          })
    }
  }
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number }
type OtlpJson = {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: AnyValue }> }
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string
        spanId: string
        parentSpanId?: string
        name: string
        kind: number
        attributes?: Array<{ key: string; value: AnyValue }>
        status?: { code?: number; message?: string }
        events?: Array<{ name: string }>
        startTimeUnixNano?: string
        endTimeUnixNano?: string
      }>
    }>
  }>
}

type OtlpPoint = {
  attributes?: Array<{ key: string; value: AnyValue }>
  count?: string | number
  sum?: number
  bucketCounts?: Array<string | number>
  explicitBounds?: number[]
  asInt?: string | number
  asDouble?: number
}
type OtlpMetricsJson = {
  resourceMetrics?: Array<{
    resource?: { attributes?: Array<{ key: string; value: AnyValue }> }
    scopeMetrics?: Array<{
      metrics?: Array<{
        name: string
        unit?: string
        histogram?: { dataPoints?: OtlpPoint[] }
        sum?: { dataPoints?: OtlpPoint[]; isMonotonic?: boolean }
        gauge?: { dataPoints?: OtlpPoint[] }
      }>
    }>
  }>
}

function value(v: AnyValue | undefined): unknown {
  if (!v) return undefined
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue
}

/** An endpoint that takes every connection and never answers (an export to it hangs): its URL, how many connections it took, close(). */
export async function silentEndpoint(): Promise<{ url: string; connections: () => number; close: () => void }> {
  const sockets = new Set<Socket>()
  let taken = 0
  const server = createNetServer((socket) => {
    taken++
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    // Read what is sent, answer nothing.
    socket.resume()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => taken,
    close: () => {
      for (const socket of sockets) socket.destroy()
      server.close()
    },
  }
}

import { createServer, type Server } from 'node:http'

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

/**
 * An OTLP/HTTP receiver on loopback, as a collector would be: it takes
 * POST /v1/traces, decodes OTLP/JSON (protobuf bodies are counted, not
 * decoded) and keeps the spans.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = []
  readonly requests: Array<{ contentType: string; bytes: number }> = []
  private server: Server | undefined
  url = ''

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const body = Buffer.concat(chunks)
        const contentType = req.headers['content-type'] ?? ''
        this.requests.push({ contentType, bytes: body.length })
        if (req.url === '/v1/traces' && contentType.includes('json')) this.decode(JSON.parse(body.toString('utf8')) as OtlpJson)
        res.writeHead(200, { 'Content-Type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf' })
        res.end(contentType.includes('json') ? '{}' : '')
      })
    })
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server!.address() as { port: number }).port}`
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve())
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
type OtlpJson = { resourceSpans?: Array<{ resource?: { attributes?: Array<{ key: string; value: AnyValue }> }; scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: Array<{ key: string; value: AnyValue }>; status?: { code?: number; message?: string }; events?: Array<{ name: string }>; startTimeUnixNano?: string; endTimeUnixNano?: string }> }> }> }

function value(v: AnyValue | undefined): unknown {
  if (!v) return undefined
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue
}

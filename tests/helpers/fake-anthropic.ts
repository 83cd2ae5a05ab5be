import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One content block of a scripted reply. */
export type FakeBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; id?: string; name: string; input: Record<string, unknown> }

/** A scripted reply: content and why the turn stopped; or an HTTP error. */
export type FakeReply =
  | {
      content: FakeBlock[]
      stop_reason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence'
      usage?: {
        input_tokens?: number
        output_tokens?: number
        cache_read_input_tokens?: number
        cache_creation_input_tokens?: number
      }
      delayMs?: number
    }
  | { status: number; error: { type: string; message: string } }

/** What the fake received: the parsed body of each Messages API request, and its headers. */
export interface RecordedRequest {
  body: {
    model: string
    max_tokens: number
    system?: unknown
    tools?: Array<{ name: string; description?: string; input_schema: unknown; cache_control?: unknown }>
    messages: Array<{ role: string; content: unknown }>
    stream?: boolean
  }
  headers: IncomingMessage['headers']
}

/**
 * A local server speaking the Anthropic Messages API (POST /v1/messages),
 * streaming (server-sent events, as the real API sends them) or not. Replies
 * come from a script: a list, or a function of the request (to answer with
 * the tools that were offered). Every request is recorded.
 */
export class FakeAnthropic {
  readonly requests: RecordedRequest[] = []
  /** Streams whose client went away while a reply's `delayMs` held them (a request the agent cancelled). */
  abandoned = 0
  private server: Server | undefined
  private script: FakeReply[] | ((request: RecordedRequest, index: number) => FakeReply)
  private toolIds = 0
  /** Requests before the current script was set: the script counts its own from 0. */
  private scriptStart = 0

  constructor(script: FakeReply[] | ((request: RecordedRequest, index: number) => FakeReply) = []) {
    this.script = script
  }

  /** The base URL to give the agent (ANTHROPIC_BASE_URL). */
  url = ''

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res))
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections()
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
  }

  /** Replaces the script; its index starts again at 0. */
  setScript(script: FakeReply[] | ((request: RecordedRequest, index: number) => FakeReply)): void {
    this.script = script
    this.scriptStart = this.requests.length
  }

  private next(request: RecordedRequest): FakeReply {
    const index = this.requests.length - 1 - this.scriptStart
    if (typeof this.script === 'function') return this.script(request, index)
    return this.script[index] ?? { content: [{ type: 'text', text: '(the fake has no more replies scripted)' }] }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages')) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no route ${req.url}` } }))
      return
    }
    const request: RecordedRequest = { body: JSON.parse(Buffer.concat(chunks).toString('utf8')), headers: req.headers }
    this.requests.push(request)
    const reply = this.next(request)
    if ('status' in reply) {
      res
        .writeHead(reply.status, {
          'content-type': 'application/json',
          'request-id': `req_fake_${this.requests.length}`,
        })
        .end(JSON.stringify({ type: 'error', error: reply.error }))
      return
    }
    const content = reply.content.map((b) =>
      b.type === 'tool_use' ? { ...b, id: b.id ?? `toolu_fake_${++this.toolIds}` } : b,
    )
    const stop = reply.stop_reason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn')
    const usage = {
      input_tokens: 10,
      output_tokens: 5,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      ...reply.usage,
    }
    const id = `msg_fake_${this.requests.length}`
    const model = request.body.model
    if (!request.body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id,
          type: 'message',
          role: 'assistant',
          model,
          content,
          stop_reason: stop,
          stop_sequence: null,
          usage,
        }),
      )
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    send('message_start', {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    })
    // A slow model: the stream has begun, the rest comes later (or never, if the client goes away).
    if (reply.delayMs && (await clientLeaves(res, reply.delayMs))) {
      this.abandoned++
      return
    }
    if (res.destroyed) return
    content.forEach((block, index) => {
      if (block.type === 'text') {
        send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } })
        // Text arrives in pieces, as the real API streams it.
        for (const piece of block.text.match(/[\s\S]{1,7}/g) ?? [])
          send('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'text_delta', text: piece },
          })
      } else {
        send('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        })
        const json = JSON.stringify(block.input)
        for (const piece of json.match(/[\s\S]{1,5}/g) ?? [])
          send('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: piece },
          })
      }
      send('content_block_stop', { type: 'content_block_stop', index })
    })
    send('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    })
    send('message_stop', { type: 'message_stop' })
    res.end()
  }
}

/** The tool_result blocks of the last user message of a request, by tool_use id. */
/** Waits `ms`, or less if the client closes the response first: whether it did. */
function clientLeaves(res: ServerResponse, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      res.off('close', onClose)
      resolve(false)
    }, ms)
    const onClose = () => {
      clearTimeout(timer)
      resolve(true)
    }
    res.once('close', onClose)
  })
}

export function toolResults(request: RecordedRequest): Map<string, { content: unknown; is_error?: boolean }> {
  const last = request.body.messages.at(-1)
  const out = new Map<string, { content: unknown; is_error?: boolean }>()
  if (!last || !Array.isArray(last.content)) return out
  for (const block of last.content as Array<{
    type: string
    tool_use_id?: string
    content?: unknown
    is_error?: boolean
  }>) {
    if (block.type === 'tool_result' && block.tool_use_id)
      out.set(block.tool_use_id, { content: block.content, ...(block.is_error ? { is_error: true } : {}) })
  }
  return out
}

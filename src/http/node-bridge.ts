import type { IncomingMessage, ServerResponse } from 'node:http'
import type { RequestId } from '@modelcontextprotocol/server'
import { leadingIdOfBytes, topLevelIdOfBytes } from '../protocol/top-level-id.js'

/** A request as the routes see it: method, URL and headers, and its body read on demand (with a cap). */
export interface InboundRequest {
  request: Request
  /** The body: too large, or its text (and the bytes it was decoded from, where they were read). */
  readBody(maxBytes: number): Promise<{ tooLarge: true } | { tooLarge: false; text: string; bytes?: Buffer }>
  /**
   * The body's top-level JSON-RPC id (null: none), found without decoding
   * the body into one string or parsing it: a request refused for its id
   * alone costs no copy of a large body. Undefined when the body is too
   * large, or smaller than `minBytes` (not worth a scan of its own).
   */
  requestId?(maxBytes: number, minBytes?: number): Promise<RequestId | null | undefined>
  /**
   * With a large body (Content-Length at least `minBytes`, or none), its top-level id
   * when the body's first bytes hold it whole and `refuse` refuses it: the
   * body is then not read on nor kept (the rest is thrown away as it
   * comes), and there is no body to read. Undefined otherwise, the body
   * read on as usual. It must be the first of these to ask for the body.
   */
  refusedLeadingId?(
    maxBytes: number,
    minBytes: number,
    refuse: (id: RequestId) => boolean,
  ): Promise<RequestId | undefined>
  /** The body as JSON, when it was read and parsed already (within the size and nesting limits): not parsed again. */
  parsed?: { value: unknown }
  /**
   * Has `done` called once the answer to this request is over: written to
   * its end, or the client gone (`AnswerEnd`, run by nodeServer after
   * sendResponse). How long a request's answer streams is how long it is in
   * flight. Absent for a request served another way: a route then watches
   * its answer's body instead (`untilAnswered`, responses.ts).
   */
  answered?(done: () => void): void
  /**
   * Aborts when the client goes away before its answer is complete: a 2026
   * request's cancellation. The Request carries no signal of its own (the
   * 2025 session transport reads none, and a Request following a signal costs
   * a controller and a listener at every request); the 2026 route makes its
   * request with this one (`withClientSignal`).
   */
  signal?: AbortSignal
}

/** `inbound`'s Request, following its client's signal when there is one (a 2026 request's cancellation). */
export function withClientSignal(inbound: InboundRequest): Request {
  return inbound.signal ? new Request(inbound.request, { signal: inbound.signal }) : inbound.request
}

/**
 * What is to run once one request's answer is over (InboundRequest.answered):
 * the server that writes the answer runs it, once, when the answer has been
 * written to its end or its client went away. So the routes count a request
 * in flight without a stream and a Response of their own around its answer.
 */
export class AnswerEnd {
  private calls: (() => void)[] | undefined = []

  /** `call` runs when the answer is over (at once if it is over already). */
  add(call: () => void): void {
    if (this.calls) this.calls.push(call)
    else call()
  }

  /** The answer is over: every call added runs, in the order added; later ones run as they are added. */
  run(): void {
    const calls = this.calls
    this.calls = undefined
    if (calls) for (const call of calls) call()
  }
}

/** How long a refused upload may go on being discarded after the answer before its connection is cut. */
const DISCARD_MS = 5_000

/** A request's body did not arrive within `http.bodyTimeoutMs`: it is answered 408, and its connection closed. */
export class BodyTimeoutError extends Error {
  constructor(readonly ms: number) {
    super(`the body did not arrive within ${ms} ms (http.bodyTimeoutMs)`)
  }
}

/** A body refused for its leading id was asked for: it was never kept (a route's mistake, answered 500). */
export class BodyRefusedError extends Error {
  constructor() {
    super('the body was refused for its id and not read')
  }
}

/** The client went away before its request was read: nobody is left to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super('the client went away before sending the whole body')
    this.name = 'ClientGoneError'
  }
}

/**
 * A node:http request as the routes see it: a web Request with method, URL
 * and headers (no body: the URL is built on `base`, never on the Host
 * header), and the body read from the node stream on demand. Throws when the
 * request cannot be a web Request (a header value or method it refuses).
 * `signal`, when given, is the request's `signal`: it aborts when the client
 * goes away before its answer is complete (a 2026-era request's cancellation).
 * `bodyTimeoutMs`, when given, is how long from now the body may take to
 * arrive (BodyTimeoutError past it). `end`, when given, is run by whoever
 * writes the answer once it is over: the routes hand it what is to run then
 * (`answered`).
 */
export function inboundOf(
  req: IncomingMessage,
  base: string,
  signal?: AbortSignal,
  bodyTimeoutMs?: number,
  end?: AnswerEnd,
): InboundRequest {
  const deadline = bodyTimeoutMs === undefined ? undefined : { at: Date.now() + bodyTimeoutMs, ms: bodyTimeoutMs }
  const headers = new Headers()
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!)
  const url = new URL(req.url ?? '/', base)
  // An absolute-form target (`POST http://elsewhere/mcp`) is read as its path here.
  const request = new Request(new URL(url.pathname + url.search, base), { method: req.method ?? 'GET', headers })
  // The body is read once, as bytes: decoded for readBody, scanned for requestId.
  let read: BodyRead | undefined
  const bytes = (maxBytes: number, refuse?: (id: RequestId) => boolean) =>
    (read ??= new BodyRead(req, maxBytes, deadline, refuse))
  const inbound: InboundRequest = {
    request,
    readBody: async (maxBytes) => {
      const body = await bytes(maxBytes).done
      if ('refused' in body) throw new BodyRefusedError()
      return body.tooLarge ? body : { tooLarge: false, text: body.bytes.toString('utf8'), bytes: body.bytes }
    },
    requestId: async (maxBytes, minBytes = 0) => {
      const body = await bytes(maxBytes).done
      if ('refused' in body) throw new BodyRefusedError()
      return body.tooLarge || body.bytes.length < minBytes ? undefined : topLevelIdOfBytes(body.bytes)
    },
    refusedLeadingId: async (maxBytes, minBytes, refuse) =>
      // A chunked body (no length) may be large too.
      !(Number(req.headers['content-length']) < minBytes) ? bytes(maxBytes, refuse).leading : undefined,
  }
  if (end) inbound.answered = (done) => end.add(done)
  if (signal) inbound.signal = signal
  return inbound
}

/** A body read: too large, its bytes, or refused for its leading id (and not read on). */
type ReadBytes = { tooLarge: true } | { tooLarge: false; bytes: Buffer } | { refused: RequestId }

/** How much of a body is gathered before its leading id is looked at (when a refusal is asked for): enough for any id written first. */
export const LEADING_BYTES = 16 * 1024

/**
 * Reads a request body up to `maxBytes`, by `deadline` when given. A
 * declared Content-Length over it is refused before reading; otherwise
 * reading stops counting at the limit. A refused body is still read and
 * thrown away (so the client, still sending, gets the answer instead of a
 * reset connection). With `refuse`, the body's first LEADING_BYTES are
 * scanned for a top-level id (leadingIdOfBytes) before any more is kept:
 * an id `refuse` refuses is the outcome, `leading` and `done`, once the
 * rest has come and been thrown away as it came (answered earlier, a
 * client still sending may see its connection reset instead); any other
 * settles `leading` with undefined and the body is read on.
 */
class BodyRead {
  readonly done: Promise<ReadBytes>
  readonly leading: Promise<RequestId | undefined>
  private settleLeading!: (id: RequestId | undefined) => void
  private failLeading!: (error: Error) => void
  private resolve!: (outcome: ReadBytes) => void
  private reject!: (error: Error) => void
  private readonly declared: number
  private whole: Buffer | undefined
  private chunks: Buffer[] = []
  private size = 0
  private refused: RequestId | undefined
  private timer: NodeJS.Timeout | undefined
  private settled = false

  constructor(
    private readonly req: IncomingMessage,
    private readonly maxBytes: number,
    deadline?: { at: number; ms: number },
    private refuse?: (id: RequestId) => boolean,
  ) {
    this.leading = new Promise((resolve, reject) => {
      this.settleLeading = resolve
      this.failLeading = reject
    })
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
    })
    // Whoever awaits one gets its error; one nobody awaits (`done` of a body refused for its id, then cut off) must not end the process.
    this.leading.catch(() => {})
    this.done.catch(() => {})
    this.declared = Number(req.headers['content-length'])
    if (this.declared > maxBytes) {
      req.resume()
      this.finish({ tooLarge: true })
      return
    }
    if (!this.refuse) this.keepWhole()
    if (deadline)
      this.timer = setTimeout(
        () => this.finish(new BodyTimeoutError(deadline.ms)),
        Math.max(0, deadline.at - Date.now()),
      )
    req.on('data', this.onData).on('end', this.onEnd).on('error', this.onGone).on('aborted', this.onGone)
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.refused !== undefined) return
    if (this.whole) {
      this.size += chunk.copy(this.whole, this.size)
      return
    }
    this.size += chunk.length
    if (this.size > this.maxBytes) return this.finish({ tooLarge: true })
    this.chunks.push(chunk)
    if (this.refuse && this.size >= LEADING_BYTES) this.checkLeading()
  }

  private readonly onEnd = (): void => {
    if (this.refuse) this.checkLeading()
    if (this.refused !== undefined) return this.finish({ refused: this.refused })
    this.finish({
      tooLarge: false,
      bytes: this.whole ? this.whole.subarray(0, this.size) : Buffer.concat(this.chunks),
    })
  }

  private readonly onGone = (): void => this.finish(new ClientGoneError())

  /** The leading id looked at, once: refused (nothing more is kept), or the body read on. */
  private checkLeading(): void {
    const refuse = this.refuse!
    this.refuse = undefined
    const head = Buffer.concat(this.chunks)
    const id = leadingIdOfBytes(head)
    if (id !== undefined && refuse(id)) {
      this.refused = id
      this.chunks = []
      return
    }
    this.chunks = [head]
    this.settleLeading(undefined)
    this.keepWhole()
  }

  /** A declared length (which Node holds the body to) is read into one buffer of that size: no chunks kept, no copy of them all. */
  private keepWhole(): void {
    if (!Number.isSafeInteger(this.declared) || this.declared <= 0) return
    this.whole = Buffer.allocUnsafe(this.declared)
    this.size = 0
    for (const chunk of this.chunks) this.size += chunk.copy(this.whole, this.size)
    this.chunks = []
  }

  /** The request object lives on with its connection (keep-alive): once settled, nothing of the body may hang from it. */
  private finish(outcome: ReadBytes | Error): void {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    this.req.off('data', this.onData).off('end', this.onEnd).off('error', this.onGone).off('aborted', this.onGone)
    // An error after the body was read (the client gone while its answer streams) is the answer's business, not this reader's.
    this.req.on('error', () => {})
    this.whole = undefined
    this.chunks = []
    if (outcome instanceof Error) {
      this.failLeading(outcome)
      this.reject(outcome)
      return
    }
    this.settleLeading('refused' in outcome ? outcome.refused : undefined)
    this.resolve(outcome)
  }
}

/** A signal that aborts when the client goes away before `res` is finished (a request's own cancellation in the 2026 era). */
export function abortedByClient(res: ServerResponse): AbortSignal {
  const controller = new AbortController()
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new Error('the client went away before its answer was complete'))
  })
  return controller.signal
}

/**
 * Holds what is written on `res`'s connection until the next tick, then
 * sends it in one write: the headers of a streamed answer go out with what
 * of its body is ready in this turn (a session's priming event), rather than
 * in a write of their own; one that has nothing ready yet still gets its
 * headers at once.
 */
function holdUntilNextTick(res: ServerResponse): void {
  const socket = res.socket
  if (!socket || socket.writableCorked > 0) return
  socket.cork()
  process.nextTick(() => socket.uncork())
}

/**
 * Writes a web Response to a node:http response, streaming its body (SSE
 * included) as it comes, with backpressure. When the client goes away the
 * body is cancelled, which tells the transport the stream is gone.
 */
export async function sendResponse(req: IncomingMessage, res: ServerResponse, response: Response): Promise<void> {
  // The connection is gone already (a request timed out, the client left): nothing can be sent, and nothing must wait for it.
  if (res.destroyed || req.socket.destroyed) {
    await response.body?.cancel().catch(() => {})
    return
  }
  const headers: Record<string, string> = {}
  response.headers.forEach((value, key) => {
    headers[key] = value
  })
  res.writeHead(response.status, headers)
  if (!req.complete) {
    // The body was refused or never read: throw the rest away, and cut a client that keeps sending.
    req.resume()
    res.once('finish', () => {
      if (!req.complete) setTimeout(() => req.destroy(), DISCARD_MS).unref()
    })
  }
  if (!response.body) {
    res.end()
    return
  }
  holdUntilNextTick(res)
  res.flushHeaders()
  const reader = response.body.getReader()
  let gone = false
  res.once('close', () => {
    gone = true
    reader.cancel().catch(() => {})
  })
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done || gone) break
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go)
            res.off('close', go)
            resolve()
          }
          res.on('drain', go)
          res.on('close', go)
        })
      }
    }
  } catch {
    // The body failed or was cancelled: end what was sent.
  } finally {
    if (!gone) res.end()
  }
}

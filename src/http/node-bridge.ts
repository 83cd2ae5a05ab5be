import type { IncomingMessage, ServerResponse } from 'node:http'
import type { RequestId } from '@modelcontextprotocol/server'
import { topLevelIdOfBytes } from '../protocol/top-level-id.js'

/** A request as the routes see it: method, URL and headers, and its body read on demand (with a cap). */
export interface InboundRequest {
  request: Request
  readBody(maxBytes: number): Promise<{ tooLarge: true } | { tooLarge: false; text: string }>
  /**
   * The body's top-level JSON-RPC id (null: none), found without decoding
   * the body into one string or parsing it: a request refused for its id
   * alone costs no copy of a large body. Undefined when the body is too
   * large, or smaller than `minBytes` (not worth a scan of its own).
   */
  requestId?(maxBytes: number, minBytes?: number): Promise<RequestId | null | undefined>
  /** The body as JSON, when it was read and parsed already (within the size and nesting limits): not parsed again. */
  parsed?: { value: unknown }
}

/** How long a refused upload may go on being discarded after the answer before its connection is cut. */
const DISCARD_MS = 5_000

/** A request's body did not arrive within `http.bodyTimeoutMs`: it is answered 408, and its connection closed. */
export class BodyTimeoutError extends Error {
  constructor(readonly ms: number) {
    super(`the body did not arrive within ${ms} ms (http.bodyTimeoutMs)`)
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
 * `signal`, when given, becomes the Request's: it aborts when the client
 * goes away before its answer is complete (a 2026-era request's cancellation).
 * `bodyTimeoutMs`, when given, is how long from now the body may take to
 * arrive (BodyTimeoutError past it).
 */
export function inboundOf(
  req: IncomingMessage,
  base: string,
  signal?: AbortSignal,
  bodyTimeoutMs?: number,
): InboundRequest {
  const deadline = bodyTimeoutMs === undefined ? undefined : { at: Date.now() + bodyTimeoutMs, ms: bodyTimeoutMs }
  const headers = new Headers()
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!)
  const url = new URL(req.url ?? '/', base)
  // An absolute-form target (`POST http://elsewhere/mcp`) is read as its path here.
  const request = new Request(new URL(url.pathname + url.search, base), {
    method: req.method ?? 'GET',
    headers,
    ...(signal ? { signal } : {}),
  })
  // The body is read once, as bytes: decoded for readBody, scanned for requestId.
  let read: Promise<ReadBytes> | undefined
  const bytes = (maxBytes: number) => (read ??= readBytes(req, maxBytes, deadline))
  return {
    request,
    readBody: async (maxBytes) => {
      const body = await bytes(maxBytes)
      return body.tooLarge ? body : { tooLarge: false, text: body.bytes.toString('utf8') }
    },
    requestId: async (maxBytes, minBytes = 0) => {
      const body = await bytes(maxBytes)
      return body.tooLarge || body.bytes.length < minBytes ? undefined : topLevelIdOfBytes(body.bytes)
    },
  }
}

/** A body read: too large, or its bytes. */
type ReadBytes = { tooLarge: true } | { tooLarge: false; bytes: Buffer }

/**
 * Reads a request body up to `maxBytes`, by `deadline` when given. A
 * declared Content-Length over it is refused before reading; otherwise
 * reading stops counting at the limit. A refused body is still read and
 * thrown away (so the client, still sending, gets the answer instead of a
 * reset connection).
 */
function readBytes(req: IncomingMessage, maxBytes: number, deadline?: { at: number; ms: number }): Promise<ReadBytes> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'])
    if (declared > maxBytes) {
      req.resume()
      resolve({ tooLarge: true })
      return
    }
    // A declared length (which Node holds the body to) is read into one buffer of that size: no chunks kept, no copy of them all.
    let whole = Number.isSafeInteger(declared) && declared > 0 ? Buffer.allocUnsafe(declared) : undefined
    let chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      if (whole) {
        size += chunk.copy(whole, size)
        return
      }
      size += chunk.length
      if (size > maxBytes) settle({ tooLarge: true })
      else chunks.push(chunk)
    }
    const onEnd = () => settle({ tooLarge: false, bytes: whole ? whole.subarray(0, size) : Buffer.concat(chunks) })
    const onGone = () => settle(new ClientGoneError())
    const timer = deadline
      ? setTimeout(() => settle(new BodyTimeoutError(deadline.ms)), Math.max(0, deadline.at - Date.now()))
      : undefined
    // The request object lives on with its connection (keep-alive): once settled, nothing of the body may hang from it.
    const settle = (outcome: ReadBytes | Error) => {
      clearTimeout(timer)
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('aborted', onGone)
      // An error after the body was read (the client gone while its answer streams) is the answer's business, not this reader's.
      req.on('error', () => {})
      whole = undefined
      chunks = []
      if (outcome instanceof Error) reject(outcome)
      else resolve(outcome)
    }
    req.on('data', onData).on('end', onEnd).on('error', onGone).on('aborted', onGone)
  })
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

import { createServer, type IncomingMessage, type Server as NodeHttpServer, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { formatListen, type ListenAddress } from '../config/listen-address.js'
import { MycError } from '../errors.js'
import type { Logger } from '../logger.js'
import { RpcCode } from '../protocol/facts.js'
import { AnswerEnd, sendResponse } from './node-bridge.js'

/** `http.bodyTimeoutMs` by default: how long a request body may take to arrive. */
const BODY_TIMEOUT_MS = 30_000

/** `http.maxConnectionsPerAddress` by default: connections one client address may hold open at once. */
const MAX_CONNECTIONS_PER_ADDRESS = 512

/** How long an idle kept-alive connection stays open. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000

/** What bounds a peer at the connection level. */
export interface ConnectionLimits {
  /** `http.bodyTimeoutMs`: a body not fully arrived by then gets 408 and its connection is closed. */
  bodyTimeoutMs: number
  /** `http.maxConnectionsPerAddress`: one more connection from the address is answered 429 and closed. */
  maxConnectionsPerAddress: number
}

/** A raw HTTP answer written on a socket outside any request (a refused connection). */
function rawAnswer(status: string, message: string, headers: Record<string, string> = {}): string {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code: RpcCode.serverError, message }, id: null })
  const lines = Object.entries({
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
    ...headers,
  }).map(([k, v]) => `${k}: ${v}\r\n`)
  return `HTTP/1.1 ${status}\r\n${lines.join('')}\r\n${body}`
}

/**
 * A Node HTTP server whose every request `answer` decides (never throwing;
 * a request a web Request cannot hold is a 400), with a peer's hold on it
 * bounded: `answer` gets the body's deadline (`bodyTimeoutMs`, for
 * inboundOf: a body not arrived by then is answered 408 and its connection
 * closed), and one client address holds at most `maxConnectionsPerAddress`
 * connections (one more is answered 429 and closed). Headers are bounded by
 * Node's headersTimeout (60 s). `answer` also gets the request's AnswerEnd
 * (for inboundOf), run once its answer has been written to its end or the
 * client went away.
 */
export function nodeServer(
  logger: Logger,
  answer: (req: IncomingMessage, res: ServerResponse, bodyTimeoutMs: number, end: AnswerEnd) => Promise<Response>,
  limits: ConnectionLimits = { bodyTimeoutMs: BODY_TIMEOUT_MS, maxConnectionsPerAddress: MAX_CONNECTIONS_PER_ADDRESS },
): NodeHttpServer {
  /** The answer under way on each connection (the latest request's). */
  const answering = new WeakMap<Socket, ServerResponse>()
  const refused = new WeakSet<Socket>()
  const server = createServer((req, res) => {
    // A connection over the cap was answered already: its request goes no further.
    if (refused.has(req.socket)) return void req.socket.destroy()
    answering.set(req.socket, res)
    const end = new AnswerEnd()
    answerOne(req, res, () => answer(req, res, limits.bodyTimeoutMs, end), end).catch((error: unknown) => {
      logger.debug(`http: ${String(error)}`)
      res.destroy()
    })
  })
  server.on('clientError', (_error: NodeJS.ErrnoException, socket: Socket) => {
    // An answer already under way on the connection must not be followed by another.
    const underWay = answering.get(socket)?.headersSent === true
    if (socket.writable && !underWay) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n')
    else socket.destroy()
  })
  // Node closes an idle kept-alive connection after 5 s; a client under load may send its next
  // request on it just as it closes ("other side closed"). Held longer than the 60 s idle time of
  // common load balancers, the balancer (or client) closes first; the per-address cap bounds them.
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS
  capConnections(server, logger, limits.maxConnectionsPerAddress, refused)
  return server
}

/**
 * Writes `answer`'s response (a request the web Request cannot hold, where
 * answer throws, gets a 400), then runs `end`: the answer is over, written
 * to its end, failed, or its client gone.
 */
async function answerOne(
  req: IncomingMessage,
  res: ServerResponse,
  answer: () => Promise<Response>,
  end: AnswerEnd,
): Promise<void> {
  let response: Response
  try {
    response = await answer()
  } catch {
    // Only a request the web Request cannot hold (a header value, a method) gets here.
    response = new Response(
      JSON.stringify({
        jsonrpc: '2.0',
        error: { code: RpcCode.invalidRequest, message: 'Bad Request' },
        id: null,
      }),
      { status: 400, headers: { 'Content-Type': 'application/json' } },
    )
  }
  try {
    await sendResponse(req, res, response)
  } finally {
    end.run()
  }
}

/** At most `max` open connections per client address: one more is answered 429 at once and closed (and its request, if one comes, ignored). */
function capConnections(server: NodeHttpServer, logger: Logger, max: number, refused: WeakSet<Socket>): void {
  const open = new Map<string, number>()
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? ''
    const n = open.get(address) ?? 0
    if (n >= max) {
      refused.add(socket)
      logger.debug(`http: ${address} holds ${n} connections (http.maxConnectionsPerAddress); one more refused`)
      socket.end(
        rawAnswer(
          '429 Too Many Requests',
          `Too Many Requests: this address has ${n} connections open, the most one may (http.maxConnectionsPerAddress is ${max}); reuse or close one`,
          { 'Retry-After': '1' },
        ),
      )
      return
    }
    open.set(address, n + 1)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left > 0) open.set(address, left)
      else open.delete(address)
    })
  })
}

/** Listens on `address`; a clear runtime error when it cannot (in use, no such interface, no privilege). */
export function listenOn(server: NodeHttpServer, address: ListenAddress): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const why =
        error.code === 'EADDRINUSE'
          ? 'the address is in use (another myc, or another program, listens there)'
          : error.code === 'EADDRNOTAVAIL'
            ? 'no interface of this machine has that address'
            : error.code === 'EACCES'
              ? 'not allowed (ports below 1024 need privileges)'
              : error.message
      reject(new MycError('runtime', `cannot listen on ${formatListen(address)}: ${why}`))
    }
    server.once('error', onError)
    server.listen(address.port, address.host, () => {
      server.off('error', onError)
      resolve()
    })
  })
}

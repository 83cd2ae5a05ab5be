import { spawn, type ChildProcess } from 'node:child_process'
import { createServer as createHttpServer, type Server } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import type { HttpFace, HttpFaceOptions } from '../../src/http/http-face.js'
import { abortedByClient, inboundOf, sendResponse } from '../../src/http/node-bridge.js'
import { launchPrincipal } from '../../src/http/principals.js'
import type { HttpToken } from '../../src/http/bearer-tokens.js'
import { openView } from '../../src/principal/view.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { bundle, requireBundle } from './e2e.js'
import { waitFor } from './runtime.js'
import { clientFaces } from '../../src/eras/client-faces.js'

/** A port nobody listens on now (the system's choice, released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** Options of an in-process face: `tokens` on loopback (Host checked against 127.0.0.1), `/mcp`, the open view, small limits; `extra` replaces any. */
export function faceOptions(
  runtime: Runtime,
  tokens: HttpToken[],
  extra: Partial<HttpFaceOptions> = {},
): HttpFaceOptions {
  return {
    runtime,
    logger: runtime.logger,
    listen: { host: '127.0.0.1', port: 8808 },
    path: '/mcp',
    tokens,
    launch: launchPrincipal(undefined, undefined),
    viewFor: () => openView(),
    allowedOrigins: [],
    allowedHosts: [],
    maxSessions: 10,
    sessionIdleMs: 60_000,
    maxMessageBytes: 65_536,
    faces: clientFaces(),
    ...extra,
  }
}

/** A face behind a real node:http server on a free loopback port (the MCP face, or the metrics address's). */
export async function serveFace(
  face: HttpFace,
  as: 'mcp' | 'metrics' = 'mcp',
): Promise<{ base: string; server: Server }> {
  let base = ''
  const server = createHttpServer((req, res) => {
    void (async () => {
      const inbound = inboundOf(req, base, abortedByClient(res))
      await sendResponse(
        req,
        res,
        as === 'mcp' ? await face.handle(inbound) : await face.handleMetricsPort(inbound.request),
      )
    })().catch(() => res.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { base, server }
}

/** `node build/myc.cjs serve --http 127.0.0.1:<port>` running, with its address and its stderr so far. */
export interface HttpMyc {
  /** The MCP endpoint (`http://127.0.0.1:<port>/mcp`). */
  url: string
  /** `http://127.0.0.1:<port>`. */
  base: string
  proc: ChildProcess
  stderr(): string
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** Starts myc over HTTP on a free loopback port and waits until it listens. */
export async function startHttpMyc(
  config: string,
  options: { env?: Record<string, string>; path?: string } = {},
): Promise<HttpMyc> {
  requireBundle()
  const port = await freePort()
  const proc = spawn(process.execPath, [bundle, 'serve', '--http', `127.0.0.1:${port}`, '--config', config], {
    env: { ...(process.env as Record<string, string>), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let err = ''
  proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk
    if (process.env.MYC_TEST_VERBOSE) process.stderr.write(chunk)
  })
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)))
  await waitFor(
    () => err.includes('serving MCP over Streamable HTTP') || proc.exitCode !== null,
    20_000,
    'myc serve --http to listen',
  )
  if (proc.exitCode !== null) throw new Error(`myc serve --http exited with ${proc.exitCode}:\n${err}`)
  const base = `http://127.0.0.1:${port}`
  return {
    url: `${base}${options.path ?? '/mcp'}`,
    base,
    proc,
    stderr: () => err,
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null) proc.kill(signal)
      return exited
    },
  }
}

/** An SDK 2.x client connected to myc over Streamable HTTP, with a bearer token when given. */
export async function connectHttp(
  url: string,
  options: { token?: string; capabilities?: Record<string, unknown>; setup?: (client: Client) => void } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    options.token ? { requestInit: { headers: { Authorization: `Bearer ${options.token}` } } } : {},
  )
  const client = new Client({ name: 'http-e2e', version: '1.0.0' }, { capabilities: options.capabilities ?? {} })
  options.setup?.(client)
  await client.connect(transport)
  return { client, transport }
}

/** The headers of a Streamable HTTP POST, plus any given. */
export function mcpHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...extra }
}

export const initializeBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
})

/** Initializes a session with a plain POST; resolves with the response (its body read) and the session id. */
export async function rawInitialize(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ response: Response; body: string; sessionId: string | null }> {
  const response = await fetch(url, { method: 'POST', headers: mcpHeaders(headers), body: initializeBody })
  const body = await response.text()
  return { response, body, sessionId: response.headers.get('mcp-session-id') }
}

/** The JSON-RPC answer to one request: its result or its error. */
export interface RpcAnswer {
  result?: Record<string, unknown>
  error?: { code: number; message: string; data?: Record<string, unknown> }
}

let modernIds = 1

/**
 * One 2026-07-28 request as a plain POST: the `_meta` envelope (these client
 * capabilities), the standard headers (`Mcp-Name` for what names a tool,
 * prompt, resource or task), a bearer token when given. Resolves with the
 * HTTP status and the JSON-RPC answer, read from JSON or from the SSE
 * stream (the message carrying a result or an error).
 */
export async function modernRequest(
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: { token?: string; capabilities?: Record<string, unknown>; clientName?: string } = {},
): Promise<{ status: number; answer: RpcAnswer; retryAfter: string | null }> {
  const name = [params.name, params.uri, params.taskId].find((v): v is string => typeof v === 'string')
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: options.clientName ?? 'e2e', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? {},
  }
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      ...(name !== undefined ? { 'Mcp-Name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: modernIds++,
      method,
      params: { ...params, _meta: { ...envelope, ...(params._meta as object | undefined) } },
    }),
  })
  const body = await response.text()
  if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    // Progress and log notifications come first; the answer is the message with a result or an error.
    const found = body
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => JSON.parse(l.slice(5)) as RpcAnswer)
      .find((m) => m.result !== undefined || m.error !== undefined)
    if (!found) throw new Error(`${method}: no answer in the stream: ${body}`)
    return { status: response.status, answer: found, retryAfter: response.headers.get('retry-after') }
  }
  if (!body) throw new Error(`${method}: HTTP ${response.status} with no body`)
  return {
    status: response.status,
    answer: JSON.parse(body) as RpcAnswer,
    retryAfter: response.headers.get('retry-after'),
  }
}

/** One 2026-07-28 server/discover (no session needed) with `token`: its HTTP status and Retry-After. */
export async function modernDiscover(
  url: string,
  token: string,
): Promise<{ status: number; retryAfter: string | null }> {
  const { status, retryAfter } = await modernRequest(url, 'server/discover', {}, { token })
  return { status, retryAfter }
}

import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { HttpFace, type HttpFaceOptions } from '../../src/http/http-face.js'
import { abortedByClient, inboundOf } from '../../src/http/node-bridge.js'
import { nodeServer, type ConnectionLimits } from '../../src/http/node-server.js'
import { readTokens, type TokenConfig } from '../../src/http/bearer-tokens.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { faceOptions, mcpHeaders } from './http.js'

/** `myc serve --http`'s face in the test process, behind the node:http server myc uses (its limits), on a free loopback port. */
export interface ServedFace {
  face: HttpFace
  /** `http://127.0.0.1:<port>`. */
  base: string
  /** The MCP endpoint. */
  url: string
  server: Server
  close(): Promise<void>
}

/** Two tokens, alice and bob (role `dev`), and the environment they are read from. */
export const ALICE = 'alice-0123456789abcdef0123456789abcdef'
export const BOB = 'bob-0123456789abcdef0123456789abcdef0000'
const aliceAndBob: TokenConfig[] = [
  { env: 'A', role: 'dev', name: 'alice' },
  { env: 'B', role: 'dev', name: 'bob' },
]
const TOKEN_ENV = { A: ALICE, B: BOB, MYC_SESSION_SECRET: 'a-session-secret-0123456789abcdef0123456789' }

/**
 * A face over `runtime` (faceOptions of ./http.ts: alice's and bob's tokens,
 * 100 sessions, 4 MiB messages; `extra` wins), served by the node:http
 * server myc uses (nodeServer, with `limits`).
 * Close it with close().
 */
export async function serveFace(
  runtime: Runtime,
  extra: Partial<HttpFaceOptions> = {},
  limits?: ConnectionLimits,
): Promise<ServedFace> {
  const face = new HttpFace(
    faceOptions(runtime, readTokens(aliceAndBob, TOKEN_ENV), {
      maxSessions: 100,
      maxMessageBytes: 4 * 1024 * 1024,
      ...extra,
    }),
  )
  let base = ''
  const server = nodeServer(
    runtime.logger,
    (req, res, bodyTimeoutMs, end) => face.handle(inboundOf(req, base, abortedByClient(res), bodyTimeoutMs, end)),
    limits,
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    face,
    base,
    url: `${base}/mcp`,
    server,
    close: async () => {
      await face.close(0)
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** A 2025 session opened with plain POSTs (initialize, then notifications/initialized) with `token`: its id. */
export async function openRawSession(url: string, token?: string): Promise<{ status: number; id: string | null }> {
  const auth: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {}
  const init = await fetch(url, {
    method: 'POST',
    headers: mcpHeaders(auth),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  })
  await init.text()
  const id = init.headers.get('mcp-session-id')
  if (init.status === 200 && id) {
    const done = await fetch(url, {
      method: 'POST',
      headers: mcpHeaders({ ...auth, 'Mcp-Session-Id': id, 'MCP-Protocol-Version': '2025-11-25' }),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
    await done.text()
  }
  return { status: init.status, id }
}

/** One JSON-RPC request on a session as a plain POST: the HTTP status, Retry-After, and the answer (read from JSON or SSE). */
export async function sessionRequest(
  url: string,
  session: string,
  body: { id: string | number; method: string; params?: Record<string, unknown> },
  options: { token?: string; signal?: AbortSignal } = {},
): Promise<{ status: number; retryAfter: string | null; answer: Record<string, unknown> | undefined }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: mcpHeaders({
      ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      'Mcp-Session-Id': session,
      'MCP-Protocol-Version': '2025-11-25',
    }),
    body: JSON.stringify({ jsonrpc: '2.0', ...body }),
    ...(options.signal ? { signal: options.signal } : {}),
  })
  const text = await response.text()
  const json = (response.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data:') && l.slice(5).trim() !== '')
        .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>)
        .find((m) => 'result' in m || 'error' in m)
    : text
      ? (JSON.parse(text) as Record<string, unknown>)
      : undefined
  return { status: response.status, retryAfter: response.headers.get('retry-after'), answer: json }
}

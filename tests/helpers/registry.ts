import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** A server.json of tests/fixtures/registry/ (real documents of the registry's shape), by file name without `.json`. */
export function registryFixture(name: string, replace: Record<string, string> = {}): Record<string, unknown> {
  let text = readFileSync(fileURLToPath(new URL(`../fixtures/registry/${name}.json`, import.meta.url)), 'utf8')
  for (const [from, to] of Object.entries(replace)) text = text.split(from).join(to)
  return JSON.parse(text) as Record<string, unknown>
}

/** The folder of the stand-in runtimes (uvx, and a docker whose engine answers): put it first on a PATH. */
const standInRuntimes = fileURLToPath(new URL('../fixtures/runtimes', import.meta.url))

/** The PATH with the stand-in runtimes first. */
export function pathWithStandIns(env: Record<string, string | undefined> = process.env): string {
  return [standInRuntimes, env.PATH ?? ''].join(path.delimiter)
}

export interface TestRegistry {
  /** The base URL to put in registry.url (with the path prefix, if one was asked for). */
  url: string
  /** Every request's path and query, in order. */
  requests: string[]
  close(): Promise<void>
}

/**
 * A small MCP Registry on a free loopback port serving the given server.json
 * documents the way the registry's OpenAPI file says: `GET /v0.1/servers`
 * (search by name substring, `version=latest`, `limit`, an opaque cursor in
 * `metadata.nextCursor`) and `GET /v0.1/servers/{name}/versions/{version}`
 * (404 for an unknown name or version). Every version of a name is kept; the
 * last given is the latest. A page holds at most `maxPage` servers (100, as
 * the official registry's). `answer: 'garbage'` answers every request with
 * text that is not JSON; `prefix` serves it under a path.
 */
export async function startRegistry(
  servers: readonly Record<string, unknown>[],
  options: { prefix?: string; answer?: 'garbage' | 'wrong-shape'; maxPage?: number } = {},
): Promise<TestRegistry> {
  const prefix = options.prefix ?? ''
  const requests: string[] = []
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '')
    if (options.answer === 'garbage') return send(res, 200, '{"servers": [ not json at all')
    if (options.answer === 'wrong-shape') return send(res, 200, JSON.stringify({ servers: [{ name: 42 }] }))
    route(req, res, servers, prefix, options.maxPage ?? 100)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}${prefix}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(body)
}

const meta = (isLatest: boolean) => ({
  'io.modelcontextprotocol.registry/official': { status: 'active', isLatest, publishedAt: '2026-09-01T00:00:00Z' },
})

function route(
  req: IncomingMessage,
  res: ServerResponse,
  servers: readonly Record<string, unknown>[],
  prefix: string,
  maxPage: number,
): void {
  const url = new URL(req.url ?? '/', 'http://registry')
  if (!url.pathname.startsWith(`${prefix}/v0.1/servers`)) return send(res, 404, JSON.stringify({ error: 'Not found' }))
  const rest = url.pathname.slice(`${prefix}/v0.1/servers`.length)
  const latest = new Map<string, Record<string, unknown>>()
  for (const s of servers) latest.set(String(s.name), s)
  if (rest === '' || rest === '/') {
    const words = (url.searchParams.get('search') ?? '').toLowerCase()
    const all = [...latest.values()].filter((s) => String(s.name).toLowerCase().includes(words))
    const offset = Number(Buffer.from(url.searchParams.get('cursor') ?? 'MA==', 'base64').toString())
    const limit = Math.min(maxPage, Number(url.searchParams.get('limit') ?? 30))
    const page = all.slice(offset, offset + limit)
    const next = offset + limit < all.length ? Buffer.from(String(offset + limit)).toString('base64') : undefined
    return send(
      res,
      200,
      JSON.stringify({
        servers: page.map((s) => ({ server: s, _meta: meta(true) })),
        metadata: { count: page.length, ...(next ? { nextCursor: next } : {}) },
      }),
    )
  }
  const m = /^\/([^/]+)\/versions\/([^/]+)$/.exec(rest)
  const name = m ? decodeURIComponent(m[1]!) : ''
  const version = m ? decodeURIComponent(m[2]!) : ''
  const found = version === 'latest' ? latest.get(name) : servers.find((s) => s.name === name && s.version === version)
  if (!found) return send(res, 404, JSON.stringify({ error: 'Server not found' }))
  send(res, 200, JSON.stringify({ server: found, _meta: meta(found === latest.get(name)) }))
}

import { OFFICIAL_REGISTRY_URL } from '../config/schema.js'
import { MycError } from '../errors.js'
import { parseServerJson, parseServerList, type Parsed, type ServerJson } from './server-json.js'

/** How long one request to the registry may take. */
const REQUEST_TIMEOUT_MS = 20_000
/** The most servers one page is asked for. */
const PAGE_LIMIT = 100
/** Pages followed at most for one search (a registry whose cursor never ends is not followed for ever). */
const MAX_PAGES = 50

type Fetch = typeof fetch

/**
 * The read API of an MCP Registry (`registry.url`): `GET /v0.1/servers` to
 * search, following its cursor, and `GET /v0.1/servers/{name}/versions/{version}`
 * for one server.json. The base URL's path is kept (`https://host/mcp-registry`
 * asks `https://host/mcp-registry/v0.1/servers`). Every failure is a MycError
 * naming the URL asked.
 */
export class RegistryClient {
  readonly base: URL

  constructor(
    baseUrl: string,
    private readonly fetchFn: Fetch = fetch,
  ) {
    let base: URL
    try {
      base = new URL(baseUrl)
    } catch {
      throw badBase(baseUrl)
    }
    if (base.protocol !== 'https:' && base.protocol !== 'http:') throw badBase(baseUrl)
    this.base = base
  }

  /** The servers whose names match `words` (all of them for none), latest versions, at most `limit`. */
  async search(words: string, limit: number): Promise<ServerJson[]> {
    const found: ServerJson[] = []
    const seen = new Set<string>()
    let cursor: string | undefined
    for (let page = 0; page < MAX_PAGES && found.length < limit; page++) {
      const query: Record<string, string> = {
        version: 'latest',
        limit: String(Math.min(PAGE_LIMIT, limit - found.length)),
      }
      if (words !== '') query.search = words
      if (cursor !== undefined) query.cursor = cursor
      const url = this.url(['v0.1', 'servers'], query)
      const list = this.checked(url, parseServerList(await this.getJson(url)))
      for (const { server } of list.servers) if (found.length < limit) found.push(server)
      const next = list.metadata?.nextCursor ?? undefined
      // A cursor seen before would go round in circles.
      if (!next || seen.has(next) || list.servers.length === 0) break
      seen.add(next)
      cursor = next
    }
    return found
  }

  /** One version of a server (`latest` for the newest), or a `not_in_registry` error naming it. */
  async version(name: string, version: string): Promise<ServerJson> {
    const url = this.url(['v0.1', 'servers', name, 'versions', version])
    const answer = await this.getJson(url, () =>
      version === 'latest'
        ? new MycError('not_in_registry', `no server "${name}" in the MCP Registry at ${this.base.href}`, {
            fix: 'look its name up with `myc search WORDS`',
          })
        : new MycError(
            'not_in_registry',
            `no version ${version} of "${name}" in the MCP Registry at ${this.base.href}`,
            {
              fix: `leave the version out for the latest, or look the server up with \`myc search ${name.split('/').pop() ?? name}\``,
            },
          ),
    )
    const server = this.checked(url, parseServerJson(answer))
    if (server.name !== name) throw badAnswer(url, `it describes "${server.name}", not "${name}"`)
    return server
  }

  /** `base` + the path segments (each URL-encoded: a server name's `/` is `%2F`) + the query. */
  url(segments: string[], query: Record<string, string> = {}): URL {
    const url = new URL(this.base.href)
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/${segments.map(encodeURIComponent).join('/')}`
    url.search = new URLSearchParams(query).toString()
    url.hash = ''
    return url
  }

  private checked<T>(url: URL, parsed: Parsed<T>): T {
    if (!parsed.ok) throw badAnswer(url, `not the registry API's shape (${parsed.problem})`)
    return parsed.value
  }

  /** GETs `url` as JSON; a 404 is `notFound()`'s error (or a registry error without it). */
  private async getJson(url: URL, notFound?: () => MycError): Promise<unknown> {
    let response: Response
    const signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS)
    try {
      response = await this.fetchFn(url, { headers: { accept: 'application/json' }, signal, redirect: 'follow' })
    } catch (error) {
      const why = signal.aborted ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s` : cause(error)
      throw new MycError('registry_unreachable', `the MCP Registry at ${url.origin} cannot be reached: ${why}`, {
        fix: 'check the network, or set registry.url in the config to a registry you can reach',
        cause: error,
      })
    }
    if (response.status === 404 && notFound) throw notFound()
    if (!response.ok)
      throw new MycError(
        'registry_unreachable',
        `the MCP Registry at ${url.origin} answered ${response.status} ${response.statusText} to GET ${url.pathname}`,
        { fix: 'try again later, or set registry.url in the config to another registry' },
      )
    const body = await response.text()
    try {
      return JSON.parse(body) as unknown
    } catch {
      throw badAnswer(url, 'not JSON')
    }
  }
}

function badBase(baseUrl: string): MycError {
  return new MycError(
    'config_invalid',
    `registry.url must be an http(s) URL such as ${OFFICIAL_REGISTRY_URL}, not "${baseUrl}"`,
  )
}

function badAnswer(url: URL, why: string): MycError {
  return new MycError(
    'registry_bad_answer',
    `the MCP Registry at ${url.origin} answered GET ${url.pathname} with ${why}`,
    {
      fix: 'check that registry.url names an MCP Registry (its API under /v0.1/)',
    },
  )
}

/** A network error in words: its innermost cause (`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9`). */
function cause(error: unknown): string {
  let e: unknown = error
  while (e instanceof Error && e.cause instanceof Error) e = e.cause
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  const message = e instanceof Error ? e.message : String(e)
  return code && !message.includes(code) ? `${code}: ${message}` : message
}

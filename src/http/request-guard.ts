import { isIP } from 'node:net'
import { localhostAllowedHostnames, validateHostHeader } from '@modelcontextprotocol/server'
import { isWildcardHost, type ListenAddress } from '../config/listen-address.js'

/**
 * The Host names a request may carry (DNS rebinding: a web page on an
 * attacker's name that resolves to this machine must not reach myc), as
 * URL hostnames (lowercase, IPv6 in brackets): the loopback names, the
 * listen host itself, and `http.allowedHosts`. Undefined when the Host header
 * cannot be checked: a wildcard bind (0.0.0.0, ::) answers to any name, so
 * without `http.allowedHosts` there is no list to check against (tokens are
 * required there anyway).
 */
export function allowedHostnames(listen: ListenAddress, extra: readonly string[]): string[] | undefined {
  const names = new Set(extra.map((h) => h.toLowerCase()))
  if (isWildcardHost(listen.host)) return names.size > 0 ? [...localhostAllowedHostnames(), ...names] : undefined
  for (const n of localhostAllowedHostnames()) names.add(n)
  names.add(isIP(listen.host) === 6 ? `[${listen.host.toLowerCase()}]` : listen.host.toLowerCase())
  return [...names]
}

export type GuardVerdict = { ok: true } | { ok: false; message: string }

/** Whether the Host header names this server (port-agnostic); always true when `allowed` is undefined. */
export function checkHost(hostHeader: string | null | undefined, allowed: readonly string[] | undefined): GuardVerdict {
  if (!allowed) return { ok: true }
  const result = validateHostHeader(hostHeader, [...allowed])
  return result.ok
    ? { ok: true }
    : {
        ok: false,
        message: `${result.message}: this server answers to ${allowed.join(', ')} (add a name to http.allowedHosts)`,
      }
}

/** An origin as browsers send it (`scheme://host[:port]`, default port left out), or undefined when `text` is none. */
export function normalizeOrigin(text: string): string | undefined {
  try {
    const url = new URL(text)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
    if (url.username || url.password || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash)
      return undefined
    return url.origin
  } catch {
    return undefined
  }
}

export type OriginVerdict = { ok: true; origin?: string } | { ok: false; message: string }

/**
 * Browsers send `Origin` on cross-site requests; MCP clients that are not
 * browsers send none. A request without it passes; one with it passes only
 * when the origin is listed in `http.allowedOrigins` (exactly: scheme, host
 * and port), and then gets CORS headers for that origin, or when it is the
 * request's own origin (`scheme` and the Host header: scheme, host and port).
 */
export function checkOrigin(
  originHeader: string | null | undefined,
  allowed: ReadonlySet<string>,
  host?: string | null,
  scheme = 'http:',
): OriginVerdict {
  if (originHeader === null || originHeader === undefined || originHeader === '') return { ok: true }
  const origin = normalizeOrigin(originHeader)
  if (origin !== undefined && allowed.has(origin)) return { ok: true, origin }
  // Same origin: a page served from the very scheme://host:port myc answers as (the Host check has passed), which no other site can claim.
  if (origin !== undefined && host && sameOrigin(origin, scheme, host)) return { ok: true }
  return {
    ok: false,
    message: `Origin ${JSON.stringify(originHeader.slice(0, 200))} is not allowed (list it in http.allowedOrigins)`,
  }
}

/**
 * Whether `origin` is the origin of this request: the same scheme (the one
 * the request came in on, `http:` as myc serves it), host and port (default
 * ports made explicit by the URL parser, so `https://h` is `https://h:443`,
 * never `http://h:443`). A page on https:// behind a TLS proxy is another
 * origin: list it in http.allowedOrigins.
 */
function sameOrigin(origin: string, scheme: string, host: string): boolean {
  if (scheme !== 'http:' && scheme !== 'https:') return false
  try {
    return new URL(origin).origin.toLowerCase() === new URL(`${scheme}//${host}`).origin.toLowerCase()
  } catch {
    return false
  }
}

/** The CORS headers of an answer to an allowed origin. */
export function corsHeaders(origin: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': 'Mcp-Session-Id, WWW-Authenticate, Retry-After',
    Vary: 'Origin',
  }
}

/** The answer headers of a CORS preflight from an allowed origin. */
export function preflightHeaders(origin: string): Record<string, string> {
  return {
    ...corsHeaders(origin),
    'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
    'Access-Control-Allow-Headers':
      'Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID',
    'Access-Control-Max-Age': '600',
  }
}

import type { Logger } from '../logger.js'
import type { PrincipalView } from '../principal/view.js'
import type { Runtime } from '../runtime/runtime.js'
import type { ListenAddress } from './listen-address.js'
import type { HttpPrincipal } from './principals.js'
import { jwtPrincipal, tokenPrincipal } from './principals.js'
import { protectedResourceMetadata, type JwtVerifier } from './jwt.js'
import type { IdentityCheck } from './serve-http.js'
import type { MetricsEndpoint } from './metrics.js'
import type { RateLimit } from './rate-limit.js'
import { allowedHostnames, checkHost, checkOrigin, corsHeaders, preflightHeaders } from './request-guard.js'
import { HttpRpcCode, refusal, withHeaders } from './responses.js'
import { SessionRoute, type HttpSession, type InboundRequest } from './session-route.js'
import { eraOf, readForEra } from './era.js'
import { StatelessRoute } from './stateless-route.js'
import { MemorySessionTable, Sessions, type SessionTable } from './sessions.js'
import type { SessionStore } from './session-store.js'
import { bearerOf, matchToken, type HttpToken } from './tokens.js'

export interface HttpFaceOptions {
  runtime: Runtime
  logger: Logger
  listen: ListenAddress
  /** `http.path`: where the MCP endpoint is. */
  path: string
  /** `http.tokens`, read; empty: no credentials (loopback only), every session is `launch`. */
  tokens: readonly HttpToken[]
  launch: HttpPrincipal
  viewFor(principal: HttpPrincipal): PrincipalView
  allowedOrigins: readonly string[]
  allowedHosts: readonly string[]
  maxSessions: number
  sessionIdleMs: number
  maxMessageBytes: number
  /** Where sessions are kept (default: this process's memory). */
  sessionTable?: SessionTable<HttpSession>
  /** A session store shared with other replicas (Redis); absent: sessions live in this process only. */
  sharedStore?: SessionStore
  /** `http.jwt`: bearer JWTs from an identity provider, besides (or instead of) `tokens`. */
  jwt?: JwtVerifier
  /** Checks a JWT's role and skills against policy (unreachable skills are dropped). */
  identity?: IdentityCheck
  /** `GET /metrics` (with `http.metrics`, the default); without it the path is not found. */
  metrics?: MetricsEndpoint
  /** `http.rateLimit`: a token bucket per credential (shared by the replicas with a Redis session store); a request over it gets 429. */
  rateLimiter?: RateLimit
}

/** RFC 9728: where a client finds how to get a token for this resource. */
const METADATA_PATH = '/.well-known/oauth-protected-resource'

const BEARER_CHALLENGE = 'Bearer realm="mycelium"'

/**
 * The HTTP face of myc: every request is decided here, in one place and in
 * this order: health endpoints; Host (DNS rebinding); metrics; path; Origin
 * (and CORS); credential; rate limit; method; then the MCP route, by
 * protocol era (`routeFor`): the 2025-era session route, or the stateless
 * 2026-07-28 route beside it on the same path. Never throws: every refusal
 * is an HTTP status with a JSON-RPC error body.
 */
export class HttpFace {
  readonly sessions: Sessions<HttpSession>
  private readonly sessionRoute: SessionRoute
  private readonly statelessRoute: StatelessRoute
  private readonly hosts: string[] | undefined
  private readonly origins: ReadonlySet<string>
  private draining = false

  constructor(private readonly options: HttpFaceOptions) {
    const { logger } = options
    this.sessions = new Sessions(options.sessionTable ?? new MemorySessionTable<HttpSession>(), {
      maxSessions: options.maxSessions,
      idleMs: options.sessionIdleMs,
      onExpired: (s) => logger.debug(`http: session ${s.id.slice(0, 8)} expired after ${options.sessionIdleMs} ms idle`),
    })
    this.sessionRoute = new SessionRoute({
      runtime: options.runtime,
      logger,
      sessions: this.sessions,
      viewFor: options.viewFor,
      maxMessageBytes: options.maxMessageBytes,
      draining: () => this.draining,
      ...(options.sharedStore ? { shared: { store: options.sharedStore, ttlMs: options.sessionIdleMs } } : {}),
    })
    this.statelessRoute = new StatelessRoute({
      runtime: options.runtime,
      logger,
      viewFor: options.viewFor,
      maxMessageBytes: options.maxMessageBytes,
      draining: () => this.draining,
      credentials: options.tokens.length > 0 || options.jwt !== undefined,
      ...(options.jwt ? { resourceMetadataUrl: (url: URL) => `${url.origin}${METADATA_PATH}` } : {}),
    })
    this.hosts = allowedHostnames(options.listen, options.allowedHosts)
    this.origins = new Set(options.allowedOrigins.map((o) => new URL(o).origin))
  }

  /** Requests being answered now: those of sessions, and 2026-era ones. */
  /** subscriptions/listen streams of 2026 clients open now. */
  get listenStreams(): number {
    return this.statelessRoute.listenStreams
  }

  get inFlight(): number {
    return this.sessions.inFlight + this.statelessRoute.size
  }

  /** Whether the Host header is checked (it is not on a wildcard bind without http.allowedHosts). */
  get checksHost(): boolean {
    return this.hosts !== undefined
  }

  /** Answers one request; never throws. */
  async handle(inbound: InboundRequest): Promise<Response> {
    try {
      return await this.route(inbound)
    } catch (error) {
      if (error instanceof Error && error.name === 'ClientGoneError') {
        this.options.logger.debug(`http: ${error.message}`)
        return refusal(400, HttpRpcCode.invalidRequest, 'Bad Request: incomplete body')
      }
      this.options.logger.error(`http: ${inbound.request.method} ${new URL(inbound.request.url).pathname}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
      return refusal(500, HttpRpcCode.internal, 'Internal error')
    }
  }

  private async route(inbound: InboundRequest): Promise<Response> {
    const { request } = inbound
    const url = new URL(request.url)
    if (url.pathname === '/healthz' && request.method === 'GET') return new Response('ok', { headers: { 'Content-Type': 'text/plain; charset=utf-8' } })
    if (url.pathname === '/readyz' && request.method === 'GET') return this.readiness()

    const host = checkHost(request.headers.get('host'), this.hosts)
    if (!host.ok) return refusal(403, HttpRpcCode.server, `Forbidden: ${host.message}`)
    // After the Host check (unlike health): what runs here, and how much, is not for a rebinding page to read.
    if (url.pathname === '/metrics' && request.method === 'GET' && this.options.metrics) {
      return new Response(await this.options.metrics.text(), { headers: { 'Content-Type': this.options.metrics.contentType, 'Cache-Control': 'no-store' } })
    }
    if (this.options.jwt && request.method === 'GET' && (url.pathname === METADATA_PATH || url.pathname === `${METADATA_PATH}${this.options.path}`)) {
      return Response.json(protectedResourceMetadata({ ...this.options.jwt.config, resource: this.options.jwt.config.resource ?? `${url.origin}${this.options.path}` }, []), { headers: { 'Cache-Control': 'max-age=3600' } })
    }
    if (url.pathname !== this.options.path) return refusal(404, HttpRpcCode.server, `Not Found: the MCP endpoint is ${this.options.path}`)

    const origin = checkOrigin(request.headers.get('origin'), this.origins, request.headers.get('host'))
    if (!origin.ok) return refusal(403, HttpRpcCode.server, `Forbidden: ${origin.message}`)
    if (request.method === 'OPTIONS') {
      return new Response(null, { status: 204, headers: origin.origin ? preflightHeaders(origin.origin) : { Allow: 'GET, POST, DELETE, OPTIONS' } })
    }
    const cors = origin.origin ? corsHeaders(origin.origin) : {}

    const principal = await this.authenticate(request, url)
    if (principal instanceof Response) return withHeaders(principal, cors)
    const limited = await this.options.rateLimiter?.take(principal.key)
    if (limited && !limited.ok) {
      this.options.metrics?.rateLimited()
      this.options.logger.debug(`http: ${principal.label} is over http.rateLimit; retry in ${limited.retryAfterSeconds} s`)
      const { requestsPerMinute } = this.options.rateLimiter!.config
      return withHeaders(refusal(429, HttpRpcCode.server, `Too Many Requests: over ${requestsPerMinute} requests a minute for this credential; retry in ${limited.retryAfterSeconds} s`, { 'Retry-After': String(limited.retryAfterSeconds) }), cors)
    }
    if (request.method !== 'POST' && request.method !== 'GET' && request.method !== 'DELETE') {
      return withHeaders(refusal(405, HttpRpcCode.server, 'Method Not Allowed: use POST, GET or DELETE', { Allow: 'GET, POST, DELETE, OPTIONS' }), cors)
    }
    return withHeaders(await this.routeFor(inbound, principal), cors)
  }

  /**
   * The MCP route for a request, by its protocol era (era.ts, the SDK's own
   * classifier): a POST whose body carries the 2026 per-request envelope (or
   * whose MCP-Protocol-Version header names 2026-07-28) goes to the
   * stateless route; everything else (initialize, session requests, GET,
   * DELETE) to the session route, exactly as before. The body is read once,
   * here, and handed on.
   */
  private async routeFor(inbound: InboundRequest, principal: HttpPrincipal): Promise<Response> {
    const read = await readForEra(inbound, this.options.maxMessageBytes)
    if (read.body.parsed && eraOf(inbound.request, read.body) === 'modern') return this.statelessRoute.handle(read.inbound, principal, read.body.value)
    return this.sessionRoute.handle(read.inbound, principal)
  }

  /**
   * The principal a request's credential makes, or the 401 owed: a static
   * token first, then (with `http.jwt`) a verified JWT. Without any
   * credentials configured (loopback only), the launch's principal.
   */
  private async authenticate(request: Request, url: URL): Promise<HttpPrincipal | Response> {
    const { tokens, jwt } = this.options
    if (tokens.length === 0 && !jwt) return this.options.launch
    const challenge = jwt ? `${BEARER_CHALLENGE}, resource_metadata="${url.origin}${METADATA_PATH}"` : BEARER_CHALLENGE
    const authorization = request.headers.get('authorization')
    const check = matchToken(tokens, authorization)
    if (check.ok) return tokenPrincipal(check.token)
    if (check.reason === 'missing') return refusal(401, HttpRpcCode.server, 'Unauthorized: send Authorization: Bearer <token>', { 'WWW-Authenticate': challenge })
    const bearer = jwt ? bearerOf(authorization) : undefined
    if (jwt && bearer !== undefined && bearer.split('.').length === 3) {
      const verified = await jwt.verify(bearer)
      if (verified.ok) {
        const { role, skills, subject } = verified.identity
        const allowed = this.options.identity ? this.options.identity(role, skills) : { ok: true as const, skills }
        if (allowed.ok) return jwtPrincipal(subject, role, allowed.skills)
        this.options.logger.debug(`http: jwt of ${subject} refused: ${allowed.reason}`)
      } else this.options.logger.debug(`http: jwt refused: ${verified.reason}`)
    }
    return refusal(401, HttpRpcCode.server, 'Unauthorized: the bearer token is not valid', { 'WWW-Authenticate': `${challenge}, error="invalid_token"` })
  }

  /** 200 when every eager child is RUNNING (and myc is not shutting down), else 503 naming the ones that are not. */
  private readiness(): Response {
    const notRunning = [...this.options.runtime.supervisor.children.values()].filter((c) => c.config.startup !== 'lazy' && c.state !== 'RUNNING').map((c) => ({ server: c.key, state: c.state }))
    const ready = notRunning.length === 0 && !this.draining
    return Response.json({ ready, ...(this.draining ? { draining: true } : {}), notRunning }, { status: ready ? 200 : 503 })
  }

  /** Stops taking sessions (new ones get 503) and 2026-era requests (503); requests of open sessions are still served. */
  beginDrain(): void {
    this.draining = true
  }

  /** Waits (at most `drainMs`, or until `stopNow` settles) for the requests in flight to finish, then ends every session. */
  async close(drainMs: number, stopNow?: Promise<unknown>): Promise<{ drained: boolean }> {
    this.beginDrain()
    const both = Promise.all([this.sessions.drained(drainMs), this.statelessRoute.drained(drainMs)]).then(([sessions, stateless]) => sessions && stateless)
    const drained = await Promise.race([both, ...(stopNow ? [stopNow.then(() => false)] : [])])
    await this.sessions.closeAll()
    await this.statelessRoute.close()
    return { drained }
  }
}

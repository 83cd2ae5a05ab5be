import type { Logger } from '../logger.js'
import type { PrincipalView } from '../principal/view.js'
import type { Runtime } from '../runtime/runtime.js'
import { formatListen, type ListenAddress } from '../config/listen-address.js'
import type { HttpPrincipal, IdentityCheck } from './principals.js'
import { jwtPrincipal, tokenPrincipal } from './principals.js'
import { protectedResourceMetadata, type JwtVerifier } from './jwt.js'
import type { MetricsEndpoint } from './metrics.js'
import { innerCallCharge, overLimit, type RateLimit } from './rate-limit.js'
import { allowedHostnames, checkHost, checkOrigin, corsHeaders, preflightHeaders } from './request-guard.js'
import { HttpRpcCode, refusal, untilAnswered, withHeaders } from './responses.js'
import { InFlightLimit, MAX_IN_FLIGHT_PER_CREDENTIAL } from './in-flight.js'
import { StoreUnavailable } from './redis-client.js'
import type { HttpSession } from './http-session.js'
import { BodyTimeoutError, ClientGoneError, type InboundRequest } from './node-bridge.js'
import type { ClientFaces, EraRoute, RouteContext } from './era-route.js'
import { eraOf } from './http-era.js'
import { readForEra } from './era-body.js'
import type { Era } from '../protocol/facts.js'
import { PersonLogins } from './oauth-logins.js'
import { SecretsRoute } from './secrets-route.js'
import { instancesAnswer, INSTANCES_PATH } from './instances-route.js'
import { MemorySessionTable, Sessions, type SessionTable } from './http-session-table.js'
import type { SessionStore } from './session-store.js'
import { bearerMatches, bearerOf, matchToken, type HttpToken } from './bearer-tokens.js'

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
  /** `http.maxSessionsPerCredential` (default: maxSessions): at it, the credential's least recently used idle session makes room. */
  maxSessionsPerCredential?: number
  /** `http.maxInFlightPerSession`: requests one session may have in flight (default MAX_IN_FLIGHT_PER_SESSION). */
  maxInFlightPerSession?: number
  /** `http.maxInFlightPerCredential`: POSTs one credential may have in flight, bodies being read included (default MAX_IN_FLIGHT_PER_CREDENTIAL). */
  maxInFlightPerCredential?: number
  sessionIdleMs: number
  /** How long a session may stay uninitialized (default UNINITIALIZED_SESSION_MS). */
  sessionInitMs?: number
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
  /**
   * The digest of `http.metricsToken`: `GET /metrics` and the details of
   * `/readyz` need it as a bearer token. Without it the MCP port serves no
   * metrics (404) and /readyz says only whether myc is ready.
   */
  metricsToken?: Buffer
  /** `http.metricsListen`: the other address metrics are served on (handleMetricsPort), for its Host check and messages. */
  metricsListen?: ListenAddress
  /** `http.rateLimit`: a token bucket per credential (shared by the replicas with a Redis session store); a request over it gets 429. */
  rateLimiter?: RateLimit
  /** `http.selfServiceSecrets`: `PUT /secrets/<name>` keeps a person's own secret (secrets-route.ts); off, the path is not found. */
  selfServiceSecrets?: boolean
  /** The faces of the two eras (src/eras/): each request is handed to the route of its era's. */
  faces: ClientFaces
}

/** `GET /healthz`: alive, and nothing else. */
function healthy(): Response {
  return new Response('ok', { headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' } })
}

/** Retry-After of a 503 owed to a shared store that does not answer (seconds). */
const STORE_RETRY_AFTER_S = 5

/** RFC 9728: where a client finds how to get a token for this resource. */
const METADATA_PATH = '/.well-known/oauth-protected-resource'

const BEARER_CHALLENGE = 'Bearer realm="mycelium"'
const METRICS_CHALLENGE = 'Bearer realm="mycelium-metrics"'

/**
 * The HTTP face of myc: every request is decided here, in one place and in
 * this order: health endpoints (/healthz says ok; /readyz says ready or
 * not, and which servers are not only to the metrics credential); Host (DNS
 * rebinding); metrics (only for `http.metricsToken`); path; Origin
 * (and CORS); credential; rate limit; method; then the MCP route, by
 * protocol era (`routeFor`): the 2025-era session route, or the stateless
 * 2026-07-28 route beside it on the same path. Never throws: every refusal
 * is an HTTP status with a JSON-RPC error body.
 */
export class HttpFace {
  readonly sessions: Sessions<HttpSession>
  /** The route of each era (ClientFace.http). */
  private readonly routes: Readonly<Record<Era, EraRoute>>
  private readonly logins: PersonLogins
  private readonly secrets: SecretsRoute | undefined
  private readonly hosts: string[] | undefined
  private readonly metricsHosts: string[] | undefined
  private readonly origins: ReadonlySet<string>
  private readonly credentialsInFlight: InFlightLimit
  private draining = false

  constructor(private readonly options: HttpFaceOptions) {
    const { logger } = options
    this.sessions = new Sessions(options.sessionTable ?? new MemorySessionTable<HttpSession>(), {
      maxSessions: options.maxSessions,
      ...(options.maxSessionsPerCredential !== undefined ? { maxPerOwner: options.maxSessionsPerCredential } : {}),
      idleMs: options.sessionIdleMs,
      ...(options.sessionInitMs !== undefined ? { initMs: options.sessionInitMs } : {}),
      onExpired: (s) =>
        logger.debug(
          `http: session ${s.id.slice(0, 8)} expired (${s.initialized === false ? 'never initialized' : `after ${options.sessionIdleMs} ms idle`})`,
        ),
      onEvicted: (s) =>
        logger.debug(
          `http: session ${s.id.slice(0, 8)} closed to make room for a new one of its credential (http.maxSessionsPerCredential): it was the least recently used idle one`,
        ),
    })
    const chargeCall = options.rateLimiter ? innerCallCharge(options.rateLimiter) : undefined
    this.credentialsInFlight = new InFlightLimit(options.maxInFlightPerCredential ?? MAX_IN_FLIGHT_PER_CREDENTIAL)
    const context: RouteContext = {
      runtime: options.runtime,
      logger,
      viewFor: options.viewFor,
      maxMessageBytes: options.maxMessageBytes,
      ...(options.maxInFlightPerSession !== undefined ? { maxInFlightPerSession: options.maxInFlightPerSession } : {}),
      draining: () => this.draining,
      sessions: this.sessions,
      ...(options.sharedStore ? { shared: { store: options.sharedStore, ttlMs: options.sessionIdleMs } } : {}),
      credentials: options.tokens.length > 0 || options.jwt !== undefined,
      ...(chargeCall ? { chargeCall } : {}),
      ...(options.jwt ? { resourceMetadataUrl: (url: URL) => `${url.origin}${METADATA_PATH}` } : {}),
    }
    this.routes = { legacy: options.faces.legacy.http(context), modern: options.faces.modern.http(context) }
    this.logins = new PersonLogins({
      runtime: options.runtime,
      logger: options.logger,
      viewFor: (principal) => options.viewFor(principal),
    })
    this.secrets = options.selfServiceSecrets ? new SecretsRoute({ runtime: options.runtime, logger }) : undefined
    this.hosts = allowedHostnames(options.listen, options.allowedHosts)
    this.metricsHosts = options.metricsListen
      ? allowedHostnames(options.metricsListen, options.allowedHosts)
      : undefined
    this.origins = new Set(options.allowedOrigins.map((o) => new URL(o).origin))
  }

  /** subscriptions/listen streams of 2026 clients open now. */
  get listenStreams(): number {
    return this.routes.legacy.listenStreams + this.routes.modern.listenStreams
  }

  /** Requests being answered now: those of sessions, and 2026-era ones. */
  get inFlight(): number {
    return this.routes.legacy.inFlight + this.routes.modern.inFlight
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
      // The shared store did not answer: the request is not served without it.
      if (error instanceof StoreUnavailable) {
        this.options.logger.debug(`http: ${error.message}`)
        return refusal(
          503,
          HttpRpcCode.server,
          'Service Unavailable: the session store (http.sessionStore) does not answer; try again shortly',
          { 'Retry-After': String(STORE_RETRY_AFTER_S) },
        )
      }
      // A body that did not arrive in time: 408, and the connection is closed (whatever more comes is not read).
      if (error instanceof BodyTimeoutError) {
        this.options.logger.debug(`http: ${error.message}`)
        return refusal(408, HttpRpcCode.server, `Request Timeout: ${error.message}`, { Connection: 'close' })
      }
      if (error instanceof ClientGoneError) {
        this.options.logger.debug(`http: ${error.message}`)
        return refusal(400, HttpRpcCode.invalidRequest, 'Bad Request: incomplete body')
      }
      this.options.logger.error(
        `http: ${inbound.request.method} ${new URL(inbound.request.url).pathname}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      )
      return refusal(500, HttpRpcCode.internal, 'Internal error')
    }
  }

  private async route(inbound: InboundRequest): Promise<Response> {
    const { request } = inbound
    const url = new URL(request.url)
    if (url.pathname === '/healthz' && request.method === 'GET') return healthy()
    // Ready or not for anyone (a load balancer's probe); which servers are not, only for the metrics credential.
    if (url.pathname === '/readyz' && request.method === 'GET')
      return await this.readiness(this.metricsCredential(request) === 'ok')

    const host = checkHost(request.headers.get('host'), this.hosts)
    if (!host.ok) return refusal(403, HttpRpcCode.server, `Forbidden: ${host.message}`)
    // After the Host check (unlike health): what runs here, and how much, is not for a rebinding page to read.
    if (url.pathname === '/metrics' && request.method === 'GET' && this.options.metrics) {
      if (!this.options.metricsToken) {
        const where = this.options.metricsListen
          ? `they are served on http.metricsListen (${formatListen(this.options.metricsListen)})`
          : 'set http.metricsToken (a bearer token for the scraper) or http.metricsListen (another address) to serve them'
        return refusal(404, HttpRpcCode.server, `Not Found: no metrics on this address; ${where}`)
      }
      return this.metricsAnswer(request)
    }
    if (url.pathname === INSTANCES_PATH && request.method === 'GET')
      return this.options.metricsToken
        ? instancesAnswer(this.options.runtime, this.metricsCredential(request) === 'ok', METRICS_CHALLENGE)
        : refusal(404, HttpRpcCode.server, 'Not Found: set http.metricsToken to list the instances here')
    if (
      this.options.jwt &&
      request.method === 'GET' &&
      (url.pathname === METADATA_PATH || url.pathname === `${METADATA_PATH}${this.options.path}`)
    ) {
      return Response.json(
        protectedResourceMetadata(
          {
            ...this.options.jwt.config,
            resource: this.options.jwt.config.resource ?? `${url.origin}${this.options.path}`,
          },
          [],
        ),
        { headers: { 'Cache-Control': 'max-age=3600' } },
      )
    }
    // A person's OAuth login to a server with an `oauth` key (oauth-logins.ts).
    if (PersonLogins.handles(url.pathname)) return this.logins.handle(request, url, () => this.admit(request, url))
    // A person's own secret (secrets-route.ts), with http.selfServiceSecrets.
    if (this.secrets && SecretsRoute.handles(url.pathname))
      return this.secrets.handle(inbound, url, () => this.admit(request, url))
    if (url.pathname !== this.options.path)
      return refusal(404, HttpRpcCode.server, `Not Found: the MCP endpoint is ${this.options.path}`)

    const origin = checkOrigin(request.headers.get('origin'), this.origins, request.headers.get('host'), url.protocol)
    if (!origin.ok) return refusal(403, HttpRpcCode.server, `Forbidden: ${origin.message}`)
    if (request.method === 'OPTIONS') {
      return new Response(null, {
        status: 204,
        headers: origin.origin ? preflightHeaders(origin.origin) : { Allow: 'GET, POST, DELETE, OPTIONS' },
      })
    }
    const cors = origin.origin ? corsHeaders(origin.origin) : {}

    const principal = await this.admit(request, url)
    if (principal instanceof Response) return withHeaders(principal, cors)
    if (request.method !== 'POST' && request.method !== 'GET' && request.method !== 'DELETE') {
      return withHeaders(
        refusal(405, HttpRpcCode.server, 'Method Not Allowed: use POST, GET or DELETE', {
          Allow: 'GET, POST, DELETE, OPTIONS',
        }),
        cors,
      )
    }
    if (request.method !== 'POST') return withHeaders(await this.routeFor(inbound, principal), cors)
    return withHeaders(await this.routePost(inbound, principal), cors)
  }

  /**
   * A POST, in a place among its credential's requests in flight
   * (`http.maxInFlightPerCredential`): taken before the body is read, given
   * back when the answer has streamed. None left: 429 at once.
   */
  private async routePost(inbound: InboundRequest, principal: HttpPrincipal): Promise<Response> {
    const release = this.credentialsInFlight.take(principal.key)
    if (!release) {
      const max = this.credentialsInFlight.max
      this.options.logger.debug(
        `http: ${principal.label} has ${max} requests in flight (http.maxInFlightPerCredential)`,
      )
      return refusal(
        429,
        HttpRpcCode.server,
        `Too Many Requests: this credential has ${max} requests in flight, the most one may (http.maxInFlightPerCredential is ${max}); send more once some are answered`,
        { 'Retry-After': '1' },
      )
    }
    try {
      return untilAnswered(inbound, await this.routeFor(inbound, principal, release), release)
    } catch (error) {
      release()
      throw error
    }
  }

  /**
   * The MCP route for a request, by its protocol era (http-era.ts, the SDK's
   * own classifier): a POST whose body carries the 2026 per-request envelope
   * (or whose MCP-Protocol-Version header names 2026-07-28) goes to the 2026
   * face's stateless route; everything else (initialize, session requests,
   * GET, DELETE) to the 2025 face's session route. The body is read once,
   * here, and handed on. `release` gives back the POST's place among its
   * credential's requests in flight (a listen stream gives it back at once).
   */
  private async routeFor(inbound: InboundRequest, principal: HttpPrincipal, release?: () => void): Promise<Response> {
    // A large body's id first: one already in flight on its session is refused before the body is decoded.
    const claim = await this.routes.legacy.claimEarly?.(inbound, principal)
    if (claim instanceof Response) return claim
    try {
      const read = await readForEra(inbound, this.options.maxMessageBytes)
      return await this.routes[eraOf(inbound.request, read.body)].handle(read.inbound, principal, read.body, release)
    } finally {
      claim?.()
    }
  }

  /**
   * The principal of a request that may go on: its credential checked
   * (authenticate), then one request taken from the credential's
   * `http.rateLimit` bucket; else the 401 or 429 owed. Every credentialed
   * route passes here (the MCP endpoint, the people's login routes).
   */
  private async admit(request: Request, url: URL): Promise<HttpPrincipal | Response> {
    const principal = await this.authenticate(request, url)
    if (principal instanceof Response) return principal
    const limited = await this.options.rateLimiter?.take(principal.key)
    if (!limited || limited.ok) return principal
    this.options.metrics?.rateLimited()
    this.options.logger.debug(
      `http: ${principal.label} is over http.rateLimit; retry in ${limited.retryAfterSeconds} s`,
    )
    const { requestsPerMinute } = this.options.rateLimiter!.config
    return refusal(429, HttpRpcCode.server, overLimit(requestsPerMinute, limited.retryAfterSeconds), {
      'Retry-After': String(limited.retryAfterSeconds),
    })
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
    if (check.reason === 'missing')
      return refusal(401, HttpRpcCode.server, 'Unauthorized: send Authorization: Bearer <token>', {
        'WWW-Authenticate': challenge,
      })
    const bearer = jwt ? bearerOf(authorization) : undefined
    if (jwt && bearer !== undefined && bearer.split('.').length === 3) {
      const verified = await jwt.verify(bearer)
      if (verified.ok) {
        const { role, skills, subject } = verified.identity
        const allowed = this.options.identity ? this.options.identity(role, skills) : { ok: true as const, skills }
        if (allowed.ok) return jwtPrincipal(subject, role, allowed.skills)
        this.options.logger.debug(`http: jwt of ${subject} refused: ${allowed.reason}`)
      } else {
        this.options.logger.debug(`http: jwt refused: ${verified.reason}`)
        // A refusal the client can act on (a token without sub) says why.
        if (verified.description)
          return refusal(401, HttpRpcCode.server, `Unauthorized: ${verified.description}`, {
            'WWW-Authenticate': `${challenge}, error="invalid_token", error_description="${verified.description.replace(/["\\]/g, '')}"`,
          })
      }
    }
    return refusal(401, HttpRpcCode.server, 'Unauthorized: the bearer token is not valid', {
      'WWW-Authenticate': `${challenge}, error="invalid_token"`,
    })
  }

  /**
   * 200 when every eager child is RUNNING, the shared session store (if
   * any) answers, and myc is not shutting down; else 503. Only `{ ready }`
   * without `details`; with them (the metrics credential, or the metrics
   * address), the servers that are not running, whether the store is up,
   * and whether myc is draining.
   */
  private async readiness(details: boolean): Promise<Response> {
    const eager = [...this.options.runtime.supervisor.children.values()].filter((c) => c.config.startup !== 'lazy')
    const notRunning = eager.filter((c) => c.state !== 'RUNNING').map((c) => ({ server: c.key, state: c.state }))
    const { sharedStore } = this.options
    const storeUp = sharedStore?.ready ? await sharedStore.ready() : true
    const ready = notRunning.length === 0 && !this.draining && storeUp
    const headers = { 'Cache-Control': 'no-store' }
    if (!details) return Response.json({ ready }, { status: ready ? 200 : 503, headers })
    // Still in a start (the first or a restart) or waiting for one: what ready waits for.
    const starting = eager.filter((c) => c.state === 'INITIALIZING' || c.state === 'STOPPED').map((c) => c.key)
    return Response.json(
      {
        ready,
        ...(this.draining ? { draining: true } : {}),
        starting,
        notRunning,
        ...(sharedStore?.ready ? { sessionStore: storeUp ? 'up' : 'down' } : {}),
      },
      { status: ready ? 200 : 503, headers },
    )
  }

  /** What a request's Authorization header is to the metrics endpoints: none configured, the metrics token, or not it. */
  private metricsCredential(request: Request): 'none' | 'ok' | 'refused' {
    const { metricsToken } = this.options
    if (!metricsToken) return 'none'
    return bearerMatches(metricsToken, request.headers.get('authorization')) ? 'ok' : 'refused'
  }

  /** `GET /metrics` with `http.metricsToken`: the text for its bearer, 401 for anyone else. */
  private async metricsAnswer(request: Request): Promise<Response> {
    const metrics = this.options.metrics
    if (!metrics) return refusal(404, HttpRpcCode.server, 'Not Found: metrics are off (http.metrics: false)')
    if (this.metricsCredential(request) === 'refused') {
      const presented = request.headers.get('authorization') !== null
      return refusal(
        401,
        HttpRpcCode.server,
        'Unauthorized: /metrics needs Authorization: Bearer <http.metricsToken>',
        { 'WWW-Authenticate': presented ? `${METRICS_CHALLENGE}, error="invalid_token"` : METRICS_CHALLENGE },
      )
    }
    return new Response(await metrics.text(), {
      headers: { 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' },
    })
  }

  /**
   * A request to `http.metricsListen`: /healthz, then (after the Host check
   * for that address) /readyz with details and /metrics (with
   * `http.metricsToken`, /metrics and the details need it there too);
   * nothing else, the MCP endpoint least of all. Never throws.
   */
  async handleMetricsPort(request: Request): Promise<Response> {
    try {
      const url = new URL(request.url)
      if (request.method !== 'GET')
        return refusal(
          405,
          HttpRpcCode.server,
          'Method Not Allowed: this address serves GET /metrics, /readyz and /healthz',
          { Allow: 'GET' },
        )
      if (url.pathname === '/healthz') return healthy()
      const host = checkHost(request.headers.get('host'), this.metricsHosts)
      if (!host.ok) return refusal(403, HttpRpcCode.server, `Forbidden: ${host.message}`)
      if (url.pathname === '/readyz') return await this.readiness(this.metricsCredential(request) !== 'refused')
      if (url.pathname === '/metrics') return await this.metricsAnswer(request)
      if (url.pathname === INSTANCES_PATH)
        return instancesAnswer(this.options.runtime, this.metricsCredential(request) !== 'refused', METRICS_CHALLENGE)
      return refusal(404, HttpRpcCode.server, 'Not Found: only /metrics, /instances, /readyz and /healthz are here')
    } catch (error) {
      this.options.logger.error(
        `http (metrics): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      )
      return refusal(500, HttpRpcCode.internal, 'Internal error')
    }
  }

  /** Stops taking sessions (new ones get 503) and 2026-era requests (503); requests of open sessions are still served. */
  beginDrain(): void {
    this.draining = true
  }

  /** Waits (at most `drainMs`, or until `stopNow` settles) for the requests in flight to finish, then ends every session. */
  async close(drainMs: number, stopNow?: Promise<unknown>): Promise<{ drained: boolean }> {
    this.beginDrain()
    const { legacy, modern } = this.routes
    const both = Promise.all([legacy.drained(drainMs), modern.drained(drainMs)]).then(([a, b]) => a && b)
    const drained = await Promise.race([both, ...(stopNow ? [stopNow.then(() => false)] : [])])
    await legacy.close()
    await modern.close()
    return { drained }
  }
}

import type { Logger } from '../logger.js'
import type { PrincipalView } from '../principal/view.js'
import type { Era } from '../protocol/facts.js'
import type { Runtime } from '../runtime/runtime.js'
import type { StdioFace } from '../server/stdio-face.js'
import type { ReadBody } from './http-era.js'
import type { HttpPrincipal } from './principals.js'
import type { HttpSession } from './http-session.js'
import type { InboundRequest } from './node-bridge.js'
import type { SessionStore } from './session-store.js'
import type { Sessions } from './http-session-table.js'

/**
 * One protocol era's face towards clients (docs/architecture.md, "Each era
 * behind one interface"): how it serves a stdio connection whose first
 * message chose it (server/stdio-eras.ts), and the route that answers its
 * requests on the HTTP endpoint, to which HttpFace hands each request of
 * that era (http-face.ts, `routeFor`). The faces are in src/eras/; the
 * composition root (`myc serve`) makes them once per runtime and hands them
 * to serveStdio and serveHttp.
 */
export interface ClientFace {
  readonly stdio: StdioFace
  /** The era's route on the HTTP endpoint, made once by the HttpFace. */
  http(context: RouteContext): EraRoute
}

/** Both eras' faces, as the composition root hands them in. */
export interface ClientFaces extends Readonly<Record<Era, ClientFace>> {
  /** Ends what the faces keep for the runtime (the tasks myc holds for 2026 clients): at shutdown, once nothing is served. */
  close(): void
}

/** What the HttpFace gives each era's route. */
export interface RouteContext {
  runtime: Runtime
  logger: Logger
  /** The view of a principal's role and skills; throws when it cannot be made (its role is gone). */
  viewFor(principal: HttpPrincipal): PrincipalView
  /** `limits.maxMessageBytes`: the largest body accepted. */
  maxMessageBytes: number
  /** `http.maxInFlightPerSession`: requests one session may have in flight. */
  maxInFlightPerSession?: number
  /** True while shutting down: no new sessions or stateless requests. */
  draining(): boolean
  /** The table of HTTP sessions (2025 sessions live in it). */
  sessions: Sessions<HttpSession>
  /** A session store shared with other replicas (Redis). */
  shared?: { store: SessionStore; ttlMs: number }
  /** Whether clients present credentials (`http.tokens`, `http.jwt`): only then is a skill not granted an OAuth step-up (403). */
  credentials: boolean
  /** With `http.jwt`: the RFC 9728 metadata URL a challenge names. */
  resourceMetadataUrl?: (url: URL) => string
  /** With `http.rateLimit`: takes one request from a credential's bucket for each inner call of code mode; the refusal's text when over it. */
  chargeCall?: (key: string) => Promise<string | undefined>
}

/** The route of one era on the MCP endpoint. */
export interface EraRoute {
  /**
   * Answers one request of this era and `principal` (checked by the face);
   * `body` is the POST body as the face read it; `release` gives back the
   * POST's place among its credential's requests in flight, for a route
   * that keeps a request open past its answer (a listen stream).
   */
  handle(inbound: InboundRequest, principal: HttpPrincipal, body: ReadBody, release?: () => void): Promise<Response>
  /**
   * Sees a request before its body is read, to tell the era (a large POST
   * whose id is already in flight on its session is refused then): the
   * refusal owed, or a function that ends the claim once the request was
   * handed on, or undefined.
   */
  claimEarly?(inbound: InboundRequest, principal: HttpPrincipal): Promise<Response | (() => void) | undefined>
  /** Requests being answered now (their answers still streaming included). */
  readonly inFlight: number
  /** subscriptions/listen streams open now. */
  readonly listenStreams: number
  /** Resolves once no request is being answered, or after `ms`: true when none was left. */
  drained(ms: number): Promise<boolean>
  /** Ends what is still being answered. */
  close(): Promise<void>
}

import type { Server as NodeHttpServer } from 'node:http'
import type { Readable, Writable } from 'node:stream'
import type { LoadedConfig } from '../config/load.js'
import { formatListen, isLoopbackHost, type ListenAddress } from '../config/listen-address.js'
import { ExitCode } from '../errors.js'
import type { Logger } from '../logger.js'
import type { PrincipalView } from '../principal/view.js'
import { StdioServerStream } from '../protocol/stdio-server-transport.js'
import { redactUrl } from '../redact.js'
import { killChildrenOnExit } from '../runtime/kill-on-exit.js'
import { startServing } from '../runtime/start-progress.js'
import type { Runtime } from '../runtime/runtime.js'
import { StdioEraConnection, type StdioEraMode } from '../server/stdio-eras.js'
import type { ClientFaces } from './era-route.js'
import { HttpFace } from './http-face.js'
import type { HttpSettings } from './http-settings.js'
import type { JwtVerifier } from './jwt.js'
import type { HttpMetrics } from './metrics.js'
import { abortedByClient, inboundOf } from './node-bridge.js'
import { listenOn, nodeServer, type ConnectionLimits } from './node-server.js'
import type { HttpPrincipal, IdentityCheck } from './principals.js'
import { RateLimiter } from './rate-limit.js'
import type { SessionStore } from './session-store.js'
import { sharePeople } from './shared-people.js'

/** How long shutdown waits for calls in flight before it ends the sessions anyway. */
const HTTP_DRAIN_MS = 10_000

export interface ServeHttpOptions {
  runtime: Runtime
  /** The faces of the two eras (src/eras/), closed here once nothing is served. */
  faces: ClientFaces
  loaded: LoadedConfig
  logger: Logger
  settings: HttpSettings
  /** Every session's principal when there are no tokens (the launch's --role and --skills). */
  launch: HttpPrincipal
  /** Checks a JWT's role and skills against policy. */
  identity?: IdentityCheck
  viewFor(principal: HttpPrincipal): PrincipalView
  /** Whether policy applies (for the start-up log). */
  policy?: boolean
  /** Signals that end the server; defaults to SIGINT and SIGTERM on this process. */
  signals?: NodeJS.EventEmitter
  /** Also serve one client on stdio (`--stdio`), as the launch's principal; when it leaves (stdin ends), myc stops. */
  stdio?: { view: PrincipalView; era?: StdioEraMode; stdin?: Readable; stdout?: Writable }
}

/**
 * Runs myc as an MCP server over Streamable HTTP until SIGINT or SIGTERM:
 * then it takes no new sessions, lets calls in flight finish (at most 10 s),
 * ends every session and stops every child. Stdio is not served meanwhile.
 * Resolves with the exit code (130 after SIGINT).
 */
export async function serveHttp(options: ServeHttpOptions): Promise<number> {
  const serving = new HttpServing(options, await openParts(options))
  await serving.listen()
  serving.start()
  const cause = await serving.untilEnd()
  await serving.shutdown(cause)
  return cause === 'SIGINT' ? ExitCode.interrupted : ExitCode.ok
}

/** What serving over HTTP opens before it listens, and closes when it ends. */
interface HttpParts {
  /** `http.sessionStore` when it is not memory: the sessions shared with every replica. */
  sharedStore: SessionStore | undefined
  metrics: HttpMetrics | undefined
  /** Every request's decisions, and the routes of the two eras. */
  face: HttpFace
  stopKillOnExit: () => void
}

/** Where serving listens once bound: the MCP endpoint, and metrics' own address (http.metricsListen). */
interface BoundAddresses {
  listen: ListenAddress
  metricsAt: ListenAddress | undefined
}

/** What ends serving: a signal, or the stdio client leaving (`--stdio`). */
type EndCause = NodeJS.Signals | 'stdin closed'

/**
 * The parts, in the order they were always opened: the JWT verifier, the
 * shared session store (and people's logins and secrets in it), the kill of
 * the children on exit, the metrics, and the face.
 */
async function openParts(options: ServeHttpOptions): Promise<HttpParts> {
  const { runtime, loaded, logger, settings } = options
  const { config } = loaded
  const jwt = settings.jwt
    ? await (await import('./jwt.js')).createJwtVerifier(settings.jwt, loaded.file ?? 'config')
    : undefined
  const sharedStore = await openSharedStore(config.http.sessionStore, logger)
  // With Redis, people's OAuth logins and own secrets live there too (sealed with MYC_TOKEN_KEY, checked by prepareHttp): one set on one replica serves on all.
  sharePeople(runtime, sharedStore, settings.tokenKey)
  runtime.secrets.selfService = config.http.selfServiceSecrets === true
  const stopKillOnExit = killChildrenOnExit(runtime)
  const metrics = await openMetrics(options, () => face)
  const face = httpFace(options, { jwt, sharedStore, metrics })
  // OpenTelemetry metrics on: mycelium.sessions.active reads the sessions at each export.
  runtime.tracing?.observe({ sessions: () => face.sessions.size })
  return { sharedStore, metrics, face, stopKillOnExit }
}

/** `http.sessionStore`: none for memory, else the Redis store, its outages and returns logged. */
async function openSharedStore(setting: string, logger: Logger): Promise<SessionStore | undefined> {
  if (setting === 'memory') return undefined
  return (await import('./session-store.js')).openSessionStore(setting, {
    onError: (error) => logger.debug(`http.sessionStore: ${error.message}`),
    onChange: (up, error) =>
      up
        ? logger.info('http.sessionStore: Redis answers again')
        : logger.warn(
            `http.sessionStore: Redis does not answer (${error?.message ?? 'no reason given'}); requests that need it get 503 until it is back, and /readyz says not ready`,
          ),
  })
}

/** Whether someone may read /metrics: a scraper's token (http.metricsToken) or an address of its own (http.metricsListen). */
function metricsReadable(settings: HttpSettings): boolean {
  return settings.metricsToken !== undefined || settings.metricsListen !== undefined
}

/** The metrics (OpenTelemetry's, for /metrics), loaded only here, and only when metrics are on and someone may read them. */
async function openMetrics(options: ServeHttpOptions, face: () => HttpFace): Promise<HttpMetrics | undefined> {
  const { runtime, settings } = options
  if (!options.loaded.config.http.metrics || !metricsReadable(settings)) return undefined
  return (await import('./metrics.js')).createMetrics({
    runtime,
    sessions: () => ({ active: face().sessions.size, inFlight: face().inFlight, listenStreams: face().listenStreams }),
  })
}

/** The HTTP face with its routes and session table, as the config sets them; the faces of the two eras are the ones the stdio connection beside it uses too. */
function httpFace(
  options: ServeHttpOptions,
  parts: { jwt: JwtVerifier | undefined; sharedStore: SessionStore | undefined; metrics: HttpMetrics | undefined },
): HttpFace {
  const { runtime, logger, settings } = options
  const { config } = options.loaded
  const { jwt, sharedStore, metrics } = parts
  return new HttpFace({
    faces: options.faces,
    ...(metrics ? { metrics } : {}),
    ...(settings.metricsToken ? { metricsToken: settings.metricsToken } : {}),
    ...(settings.metricsListen ? { metricsListen: settings.metricsListen } : {}),
    ...(config.http.rateLimit
      ? {
          rateLimiter: sharedStore?.rateLimiter?.(config.http.rateLimit) ?? new RateLimiter(config.http.rateLimit),
        }
      : {}),
    ...(sharedStore ? { sharedStore } : {}),
    ...(jwt ? { jwt } : {}),
    ...(options.identity ? { identity: options.identity } : {}),
    runtime,
    logger,
    listen: settings.listen,
    path: config.http.path,
    tokens: settings.tokens,
    launch: options.launch,
    viewFor: options.viewFor,
    allowedOrigins: config.http.allowedOrigins,
    allowedHosts: config.http.allowedHosts,
    maxSessions: config.http.maxSessions,
    maxSessionsPerCredential: config.http.maxSessionsPerCredential,
    maxInFlightPerSession: config.http.maxInFlightPerSession,
    maxInFlightPerCredential: config.http.maxInFlightPerCredential,
    sessionIdleMs: config.http.sessionIdleMs,
    maxMessageBytes: config.limits.maxMessageBytes,
    ...(config.http.selfServiceSecrets ? { selfServiceSecrets: true } : {}),
  })
}

/** The node:http servers: the MCP port, and http.metricsListen's, which answers only /metrics, /readyz and /healthz. */
function listeners(
  options: ServeHttpOptions,
  face: HttpFace,
): { server: NodeHttpServer; metricsServer: NodeHttpServer | undefined } {
  const { logger, settings } = options
  const { config } = options.loaded
  const limits: ConnectionLimits = {
    bodyTimeoutMs: config.http.bodyTimeoutMs,
    maxConnectionsPerAddress: config.http.maxConnectionsPerAddress,
  }
  const base = `http://${formatListen(settings.listen)}`
  const server = nodeServer(
    logger,
    (req, res, bodyTimeoutMs, end) => face.handle(inboundOf(req, base, abortedByClient(res), bodyTimeoutMs, end)),
    limits,
  )
  const metricsListen = settings.metricsListen
  const metricsServer = metricsListen
    ? nodeServer(
        logger,
        (req, res) =>
          face.handleMetricsPort(inboundOf(req, `http://${formatListen(metricsListen)}`, abortedByClient(res)).request),
        limits,
      )
    : undefined
  return { server, metricsServer }
}

/** Where a server listens once bound: the port it got (for port 0), on the host asked for. */
function boundAddress(server: NodeHttpServer, asked: ListenAddress): ListenAddress {
  const bound = server.address()
  return typeof bound === 'object' && bound ? { host: asked.host, port: bound.port } : asked
}

/**
 * One run of `myc serve --http`, in its steps: listen, start (the start-up
 * lines and the children), wait for the end (a signal, or the stdio client
 * leaving), and shut down.
 */
class HttpServing {
  private readonly signals: NodeJS.EventEmitter
  private readonly server: NodeHttpServer
  private readonly metricsServer: NodeHttpServer | undefined
  private metricsAt: ListenAddress | undefined
  /** With --stdio, the client that launched myc is served too, and its leaving ends the process (an MCP stdio server exits when stdin ends). */
  private stdioConnection: StdioEraConnection | undefined

  constructor(
    private readonly options: ServeHttpOptions,
    private readonly parts: HttpParts,
  ) {
    this.signals = options.signals ?? process
    const { server, metricsServer } = listeners(options, parts.face)
    this.server = server
    this.metricsServer = metricsServer
  }

  /** Listens on the MCP port, then the metrics port; when one cannot, what was opened is closed and the error thrown. */
  async listen(): Promise<void> {
    const { settings, runtime } = this.options
    try {
      await listenOn(this.server, settings.listen)
      if (this.metricsServer) {
        await listenOn(this.metricsServer, settings.metricsListen!)
        this.metricsAt = boundAddress(this.metricsServer, settings.metricsListen!)
      }
    } catch (error) {
      if (this.server.listening) this.server.close()
      this.parts.metrics?.close()
      this.parts.stopKillOnExit()
      await runtime.close()
      await this.parts.sharedStore?.close()
      throw error
    }
  }

  /** Sweeps idle sessions, says how myc serves, and starts the children. */
  start(): void {
    const { runtime, logger } = this.options
    this.parts.face.sessions.startSweeping()
    logStart(this.options, this.parts, {
      listen: boundAddress(this.server, this.options.settings.listen),
      metricsAt: this.metricsAt,
    })
    startServing(runtime, logger, 'over HTTP')
  }

  /** Resolves with the first SIGINT or SIGTERM, or when the stdio client leaves. */
  untilEnd(): Promise<EndCause> {
    const { signals } = this
    return new Promise<EndCause>((resolve) => {
      const on = (s: EndCause) => {
        signals.off('SIGINT', on)
        signals.off('SIGTERM', on)
        resolve(s)
      }
      signals.on('SIGINT', on)
      signals.on('SIGTERM', on)
      if (this.options.stdio) this.stdioConnection = this.serveStdio(this.options.stdio, () => on('stdin closed'))
    })
  }

  /** The client on stdio (`--stdio`), as the launch's principal: `ended` when it leaves or cannot be served. */
  private serveStdio(stdio: NonNullable<ServeHttpOptions['stdio']>, ended: () => void): StdioEraConnection {
    const { runtime, faces, logger } = this.options
    const connection = new StdioEraConnection({
      runtime,
      faces,
      view: stdio.view,
      era: stdio.era ?? 'auto',
      onNote: (note) => logger.debug(note),
    })
    connection.onclose = ended
    const stream = new StdioServerStream(stdio.stdin, stdio.stdout, {
      maxMessageBytes: this.options.loaded.config.limits.maxMessageBytes,
      onRejected: (reason) => logger.debug(`refused a message from the stdio client: ${reason}`),
    })
    connection.connect(stream).catch((error: unknown) => {
      logger.error(`could not serve stdio: ${String(error)}`)
      ended()
    })
    logger.info('also serving one client on stdio (--stdio); myc stops when it leaves')
    return connection
  }

  /**
   * Takes no new sessions and waits for calls in flight (at most
   * HTTP_DRAIN_MS; a second signal cuts the wait short), then closes the
   * stdio client, the faces, the servers, the children, the store and the
   * metrics.
   */
  async shutdown(cause: EndCause): Promise<void> {
    const { logger, runtime } = this.options
    logger.info(
      `${cause}: taking no new sessions; waiting up to ${HTTP_DRAIN_MS / 1000} s for calls in flight (again to stop now)`,
    )
    const second = secondSignal(this.signals, logger)
    const { drained } = await this.parts.face.close(HTTP_DRAIN_MS, second.given)
    await this.stdioConnection?.close()
    this.options.faces.close()
    if (!drained) logger.warn('calls were still in flight; they were cancelled')
    await Promise.all([this.server, this.metricsServer].map((s) => s && closeServer(s)))
    await runtime.close({ urgent: true })
    await this.parts.sharedStore?.close()
    this.parts.metrics?.close()
    second.stop()
    this.parts.stopKillOnExit()
  }
}

/** A second signal cuts the wait short (and is not left to Node's default, which would leave the children running). */
function secondSignal(signals: NodeJS.EventEmitter, logger: Logger): { given: Promise<void>; stop: () => void } {
  let onSecond: (() => void) | undefined
  const given = new Promise<void>((resolve) => {
    onSecond = () => {
      logger.info('stopping now')
      resolve()
    }
    signals.once('SIGINT', onSecond)
    signals.once('SIGTERM', onSecond)
  })
  return {
    given,
    stop: () => {
      signals.off('SIGINT', onSecond!)
      signals.off('SIGTERM', onSecond!)
    },
  }
}

/** Closes a server and every connection it holds. */
function closeServer(server: NodeHttpServer): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })
}

/** The start-up lines: the principals, the credentials, the limits, the store, the checks, and last where MCP is served. */
function logStart(options: ServeHttpOptions, parts: HttpParts, at: BoundAddresses): void {
  const { logger, settings } = options
  const { config } = options.loaded
  if (options.policy)
    logger.info(
      settings.tokens.length > 0
        ? "policy mode: each session's role and first skills come from its token"
        : `policy mode: every session is role ${options.launch.role}`,
    )
  if (settings.jwt)
    logger.info(
      `http.jwt: bearer JWTs from ${settings.jwt.issuer} (audience ${settings.jwt.audience}) give the role and skills`,
    )
  if (settings.tokens.length === 0 && !settings.jwt)
    logger.warn(
      'no http.tokens: serving without credentials, which myc allows only on a loopback address; every session is the principal myc was launched as',
    )
  else if (settings.tokens.length > 0)
    logger.info(
      `${settings.tokens.length} token${settings.tokens.length === 1 ? '' : 's'}: ${settings.tokens.map((t) => (options.policy ? `${t.label} (role ${t.role})` : t.label)).join(', ')}`,
    )
  if (config.http.rateLimit)
    logger.info(
      `rate limit: ${config.http.rateLimit.requestsPerMinute} requests a minute per credential (burst ${config.http.rateLimit.burst ?? config.http.rateLimit.requestsPerMinute})${parts.sharedStore?.rateLimiter ? ', counted in Redis by every replica together' : ', counted by this process'}`,
    )
  if (parts.sharedStore)
    logger.info(`sessions are kept in ${redactUrl(config.http.sessionStore)}, shared with every replica that uses it`)
  logEndpoints(options, parts, at)
}

/** The start-up lines of the Host check, the metrics and the MCP endpoint (the last line: whoever waits for it has read the others). */
function logEndpoints(options: ServeHttpOptions, parts: HttpParts, at: BoundAddresses): void {
  const { logger, settings } = options
  const { config } = options.loaded
  const { metricsAt } = at
  if (!parts.face.checksHost)
    logger.info(
      `listening on every interface: the Host header is not checked (list the names clients use in http.allowedHosts to check it)`,
    )
  if (config.http.metrics && !metricsReadable(settings))
    logger.info(
      'http.metrics: /metrics is not served: set http.metricsToken (a bearer token for the scraper) or http.metricsListen (another address) to serve it',
    )
  if (metricsAt)
    logger.info(
      `metrics on http://${formatListen(metricsAt)}/metrics${settings.metricsToken ? ' (with http.metricsToken)' : isLoopbackHost(metricsAt.host) ? '' : ', without a token: whoever reaches that address reads them'}, with /readyz details`,
    )
  const metricsNote = parts.metrics && settings.metricsToken ? ', metrics: /metrics (with http.metricsToken)' : ''
  // Last of the start-up lines: whoever waits for it (a supervisor, a test) has read the others.
  logger.info(
    `serving MCP over Streamable HTTP at http://${formatListen(at.listen)}${config.http.path} (health: /healthz, readiness: /readyz${metricsNote})`,
  )
}

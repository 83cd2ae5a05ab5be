import type { LoadedConfig } from '../config/load.js'
import { ExitCode, MycError } from '../errors.js'
import type { Logger } from '../logger.js'
import type { PolicyMode } from '../principal/policy-mode.js'
import type { PrincipalView } from '../principal/view.js'
import { killChildrenOnExit } from '../runtime/kill-on-exit.js'
import type { Runtime } from '../runtime/runtime.js'
import { HttpFace } from './http-face.js'
import { formatListen, isLoopbackHost, parseListen, type ListenAddress } from '../config/listen-address.js'
import { abortedByClient, inboundOf } from './node-bridge.js'
import { listenOn, nodeServer, type ConnectionLimits } from './node-server.js'
import {
  checkPrincipals,
  checkScopedTokens,
  launchPrincipal,
  type HttpPrincipal,
  type IdentityCheck,
} from './principals.js'
import { credentialKeyer, readMetricsToken, readTokens, SESSION_SECRET_ENV, type HttpToken } from './tokens.js'
import type { JwtConfig } from './jwt.js'
import { redactUrl } from '../redact.js'
import type { Readable, Writable } from 'node:stream'
import { StdioServerStream } from '../protocol/stdio-server-transport.js'
import { StdioEraConnection, type StdioEraMode } from '../server/stdio-eras.js'
import type { ClientFaces } from './era-route.js'
import type { HttpMetrics } from './metrics.js'
import { RateLimiter } from './rate-limit.js'
import { hasPersonSecrets } from '../children/secret-refs.js'
import { sharePeople } from './shared-people.js'
import { isPersonal } from '../runtime/caller-child.js'

/** How long shutdown waits for calls in flight before it ends the sessions anyway. */
export const HTTP_DRAIN_MS = 10_000

/**
 * What children are offered over HTTP, whoever connects: elicitation,
 * sampling and roots, which myc routes to the client whose call caused them
 * (a 2025 session, or a 2026 request through an input_required result) and
 * refuses for one that did not declare them. Roots only within a call: a
 * client's roots are places on its own machine, and one shared child
 * cannot follow the roots of many clients, so a child asking outside any
 * call gets none (Runtime.rootsWithinCallsOnly), and no roots list_changed
 * is promised.
 */
export const HTTP_CHILD_CAPABILITIES = { roots: {}, sampling: {}, elicitation: { form: {}, url: {} } }

/** `myc serve --http`'s settings, checked: where to listen and with which tokens. */
export interface HttpSettings {
  listen: ListenAddress
  tokens: HttpToken[]
  /** MYC_TOKEN_KEY, when set: the key of people's OAuth logins shared by the replicas (in the Redis session store). */
  tokenKey?: string
  /** The digest of `http.metricsToken` (read from its variable), if set. */
  metricsToken?: Buffer
  /** `http.metricsListen`, parsed: where metrics are served besides (or instead of) the MCP port. */
  metricsListen?: ListenAddress
  /** `http.jwt`: tokens from an identity provider (verified per request). */
  jwt?: JwtConfig
}

/**
 * Resolves where to listen (`--http` value, else `http.listen`) and reads the
 * tokens from the environment. A bad address, a token variable that is not
 * set, or a non-loopback address without tokens is a config error (exit 2).
 */
export function httpSettings(
  loaded: LoadedConfig,
  flag: string | undefined,
  env: Record<string, string | undefined>,
): HttpSettings {
  const file = loaded.file ?? 'config'
  const fromFlag = flag !== undefined && flag !== ''
  if (fromFlag && flag.startsWith('-'))
    throw new MycError('usage', `--http needs [HOST:]PORT (got "${flag}"), such as --http 127.0.0.1:8808`)
  const parsed = parseListen(fromFlag ? flag : loaded.config.http.listen)
  if (!parsed.ok)
    throw fromFlag
      ? new MycError('usage', `--http: ${parsed.error}`)
      : new MycError('config_invalid', `Invalid config ${file}:\n  http.listen: ${parsed.error}`)
  const keyer = credentialKeyer(env, file)
  const tokens = readTokens(loaded.config.http.tokens, env, file, keyer)
  const listen = parsed.address
  const { jwt } = loaded.config.http
  // A token's sessions are bound to a digest keyed by MYC_SESSION_SECRET: replicas sharing sessions must make the same digests.
  if (loaded.config.http.sessionStore !== 'memory' && tokens.length > 0 && !keyer.shared) {
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.sessionStore: sessions kept in Redis are bound to a keyed digest of their token, and without ${SESSION_SECRET_ENV} each replica would make its own; set ${SESSION_SECRET_ENV} to the same random value on every replica (e.g. \`openssl rand -hex 32\`)`,
    )
  }
  // People's own OAuth logins (servers with an oauth key) are kept with the sessions in Redis, sealed with a key every replica must share.
  const personal = [...loaded.config.servers.values()].some((c) => !c.disabled && isPersonal(c))
  if (loaded.config.http.sessionStore !== 'memory' && personal && (tokens.length > 0 || jwt) && !env.MYC_TOKEN_KEY) {
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.sessionStore: people's OAuth logins to servers with an "oauth" key are kept in Redis for every replica, sealed with MYC_TOKEN_KEY; set MYC_TOKEN_KEY to the same 32 random bytes on every replica (e.g. \`openssl rand -base64 32\`)`,
    )
  }
  checkScopedTokens(loaded, tokens)
  // People's own secrets ({ "secret": … } of a scoped server, or set over HTTP) are kept in Redis for every replica too.
  const secrets = loaded.config.http.selfServiceSecrets || [...loaded.config.servers.values()].some(hasPersonSecrets)
  if (loaded.config.http.sessionStore !== 'memory' && secrets && (tokens.length > 0 || jwt) && !env.MYC_TOKEN_KEY) {
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.sessionStore: people's own secrets ({ "secret": … } in a scoped server's env) are kept in Redis for every replica, sealed with MYC_TOKEN_KEY; set MYC_TOKEN_KEY to the same 32 random bytes on every replica (e.g. \`openssl rand -base64 32\`)`,
    )
  }
  const metricsToken = loaded.config.http.metricsToken
    ? readMetricsToken(loaded.config.http.metricsToken, env, tokens, file)
    : undefined
  let metricsListen: ListenAddress | undefined
  if (loaded.config.http.metricsListen !== undefined) {
    const m = parseListen(loaded.config.http.metricsListen)
    if (!m.ok) throw new MycError('config_invalid', `Invalid config ${file}:\n  http.metricsListen: ${m.error}`)
    if (m.address.port !== 0 && m.address.port === listen.port && m.address.host === listen.host)
      throw new MycError(
        'config_invalid',
        `Invalid config ${file}:\n  http.metricsListen: ${formatListen(m.address)} is where the MCP endpoint listens; give metrics another port`,
      )
    metricsListen = m.address
  }
  if (loaded.config.http.metrics && loaded.config.http.path === '/metrics')
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.path: /metrics is where metrics are served; choose another path (such as /mcp) or set http.metrics: false`,
    )
  if (jwt && !jwt.jwksUrl === !jwt.publicKey)
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.jwt: give exactly one of jwksUrl (the provider's JWKS address) or publicKey (a PEM public key)`,
    )
  if (tokens.length === 0 && !jwt && !isLoopbackHost(listen.host)) {
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.tokens: ${formatListen(listen)} is not a loopback address, and serving it without credentials would let anyone who reaches it in; add tokens (http.tokens: [{ "env": "MYC_TOKEN_DEV", "role": "developer" }]) or listen on 127.0.0.1`,
    )
  }
  return {
    listen,
    tokens,
    ...(env.MYC_TOKEN_KEY ? { tokenKey: env.MYC_TOKEN_KEY } : {}),
    ...(jwt ? { jwt } : {}),
    ...(metricsToken ? { metricsToken } : {}),
    ...(metricsListen ? { metricsListen } : {}),
  }
}

/**
 * Everything `myc serve --http` checks before a child starts: the address,
 * the tokens, the loopback rule, each token's role and skills. Then offers
 * the children what HTTP sessions can answer (HTTP_CHILD_CAPABILITIES).
 */
export function prepareHttp(input: {
  runtime: Runtime
  loaded: LoadedConfig
  mode: PolicyMode
  flag: string | undefined
  role: string | undefined
  skills: readonly string[] | undefined
  env: Record<string, string | undefined>
  /** Says what in the config means nothing here (a token's role in open mode). */
  notice?: (message: string) => void
}): {
  settings: HttpSettings
  launch: HttpPrincipal
  identity: IdentityCheck
} {
  const settings = httpSettings(input.loaded, input.flag, input.env)
  const asked = launchPrincipal(input.role, input.skills)
  const role = checkPrincipals(
    input.mode,
    input.loaded,
    settings.tokens,
    asked,
    input.env,
    settings.jwt !== undefined,
    input.notice,
  )
  input.runtime.offerClientCapabilities(HTTP_CHILD_CAPABILITIES)
  input.runtime.rootsWithinCallsOnly = true
  const { mode } = input
  // A JWT's role and skills are checked per request against the policy of the moment.
  const identity: IdentityCheck = (claimedRole, claimedSkills) => {
    if (mode.kind === 'open') return { ok: true, skills: [] }
    const policy = mode.state.policy
    if (!mode.state.roles.has(claimedRole)) return { ok: false, reason: `role "${claimedRole}" is not a role here` }
    return { ok: true, skills: claimedSkills.filter((s) => policy.reaches(claimedRole, s)) }
  }
  return { settings, launch: role === undefined ? asked : { ...asked, role }, identity }
}

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
  const { runtime, loaded, logger, settings } = options
  const { config } = loaded
  const jwt = settings.jwt
    ? await (await import('./jwt.js')).createJwtVerifier(settings.jwt, loaded.file ?? 'config')
    : undefined
  const sharedStore =
    config.http.sessionStore === 'memory'
      ? undefined
      : await (
          await import('./session-store.js')
        ).openSessionStore(config.http.sessionStore, {
          onError: (error) => logger.debug(`http.sessionStore: ${error.message}`),
          onChange: (up, error) =>
            up
              ? logger.info('http.sessionStore: Redis answers again')
              : logger.warn(
                  `http.sessionStore: Redis does not answer (${error?.message ?? 'no reason given'}); requests that need it get 503 until it is back, and /readyz says not ready`,
                ),
        })
  // With Redis, people's OAuth logins and own secrets live there too (sealed with MYC_TOKEN_KEY, checked by prepareHttp): one set on one replica serves on all.
  sharePeople(runtime, sharedStore, settings.tokenKey)
  runtime.secrets.selfService = config.http.selfServiceSecrets === true
  const stopKillOnExit = killChildrenOnExit(runtime)
  // The metrics (OpenTelemetry's, for /metrics) are loaded only here, and only when metrics are on and someone may read them (http.metricsToken, http.metricsListen).
  const metricsReadable = settings.metricsToken !== undefined || settings.metricsListen !== undefined
  const metrics: HttpMetrics | undefined =
    config.http.metrics && metricsReadable
      ? await (
          await import('./metrics.js')
        ).createMetrics({
          runtime,
          sessions: () => ({ active: face.sessions.size, inFlight: face.inFlight, listenStreams: face.listenStreams }),
        })
      : undefined
  // The faces of the two eras: one set for the HTTP face and the stdio connection beside it.
  const { faces } = options
  const face = new HttpFace({
    faces,
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
  // OpenTelemetry metrics on: mycelium.sessions.active reads the sessions at each export.
  runtime.tracing?.observe({ sessions: () => face.sessions.size })
  const limits: ConnectionLimits = {
    bodyTimeoutMs: config.http.bodyTimeoutMs,
    maxConnectionsPerAddress: config.http.maxConnectionsPerAddress,
  }
  const server = nodeServer(
    logger,
    (req, res, bodyTimeoutMs) =>
      face.handle(inboundOf(req, `http://${formatListen(settings.listen)}`, abortedByClient(res), bodyTimeoutMs)),
    limits,
  )
  // http.metricsListen: a server of its own that answers only /metrics, /readyz and /healthz.
  const metricsServer = settings.metricsListen
    ? nodeServer(
        logger,
        (req, res) =>
          face.handleMetricsPort(
            inboundOf(req, `http://${formatListen(settings.metricsListen!)}`, abortedByClient(res)).request,
          ),
        limits,
      )
    : undefined
  let metricsAt: ListenAddress | undefined

  try {
    await listenOn(server, settings.listen)
    if (metricsServer) {
      await listenOn(metricsServer, settings.metricsListen!)
      const bound = metricsServer.address()
      metricsAt =
        typeof bound === 'object' && bound
          ? { host: settings.metricsListen!.host, port: bound.port }
          : settings.metricsListen
    }
  } catch (error) {
    if (server.listening) server.close()
    metrics?.close()
    stopKillOnExit()
    await runtime.close()
    await sharedStore?.close()
    throw error
  }
  const bound = server.address()
  const listen = typeof bound === 'object' && bound ? { host: settings.listen.host, port: bound.port } : settings.listen
  face.sessions.startSweeping()
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
      `rate limit: ${config.http.rateLimit.requestsPerMinute} requests a minute per credential (burst ${config.http.rateLimit.burst ?? config.http.rateLimit.requestsPerMinute})${sharedStore?.rateLimiter ? ', counted in Redis by every replica together' : ', counted by this process'}`,
    )
  if (sharedStore)
    logger.info(`sessions are kept in ${redactUrl(config.http.sessionStore)}, shared with every replica that uses it`)
  if (!face.checksHost)
    logger.info(
      `listening on every interface: the Host header is not checked (list the names clients use in http.allowedHosts to check it)`,
    )
  if (config.http.metrics && !metricsReadable)
    logger.info(
      'http.metrics: /metrics is not served: set http.metricsToken (a bearer token for the scraper) or http.metricsListen (another address) to serve it',
    )
  if (metricsAt)
    logger.info(
      `metrics on http://${formatListen(metricsAt)}/metrics${settings.metricsToken ? ' (with http.metricsToken)' : isLoopbackHost(metricsAt.host) ? '' : ', without a token: whoever reaches that address reads them'}, with /readyz details`,
    )
  const metricsNote = metrics && settings.metricsToken ? ', metrics: /metrics (with http.metricsToken)' : ''
  // Last of the start-up lines: whoever waits for it (a supervisor, a test) has read the others.
  logger.info(
    `serving MCP over Streamable HTTP at http://${formatListen(listen)}${config.http.path} (health: /healthz, readiness: /readyz${metricsNote})`,
  )
  void runtime.start().then(() => {
    const running = [...runtime.supervisor.children.values()].filter((c) => c.state === 'RUNNING').length
    logger.info(
      `serving ${runtime.catalogue.tools().length} tools from ${running} of ${runtime.supervisor.children.size} servers over HTTP`,
    )
  })
  if (runtime.supervisor.children.size === 0)
    logger.info('no servers configured: add them under "mcpServers" in mycelium.config.json (or run `myc init`)')

  const signals = options.signals ?? process
  // With --stdio, the client that launched myc is served too, and its leaving ends the process (an MCP stdio server exits when stdin ends).
  let stdioConnection: StdioEraConnection | undefined
  const signal = await new Promise<NodeJS.Signals | 'stdin closed'>((resolve) => {
    const on = (s: NodeJS.Signals | 'stdin closed') => {
      signals.off('SIGINT', on)
      signals.off('SIGTERM', on)
      resolve(s)
    }
    signals.on('SIGINT', on)
    signals.on('SIGTERM', on)
    if (options.stdio) {
      stdioConnection = new StdioEraConnection({
        runtime,
        faces,
        view: options.stdio.view,
        era: options.stdio.era ?? 'auto',
        onNote: (note) => logger.debug(note),
      })
      stdioConnection.onclose = () => on('stdin closed')
      const stream = new StdioServerStream(options.stdio.stdin, options.stdio.stdout, {
        maxMessageBytes: config.limits.maxMessageBytes,
        onRejected: (reason) => logger.debug(`refused a message from the stdio client: ${reason}`),
      })
      stdioConnection.connect(stream).catch((error: unknown) => {
        logger.error(`could not serve stdio: ${String(error)}`)
        on('stdin closed')
      })
      logger.info('also serving one client on stdio (--stdio); myc stops when it leaves')
    }
  })
  logger.info(
    `${signal}: taking no new sessions; waiting up to ${HTTP_DRAIN_MS / 1000} s for calls in flight (again to stop now)`,
  )
  // A second signal cuts the wait short (and is not left to Node's default, which would leave the children running).
  let onSecond: (() => void) | undefined
  const second = new Promise<void>((resolve) => {
    onSecond = () => {
      logger.info('stopping now')
      resolve()
    }
    signals.once('SIGINT', onSecond)
    signals.once('SIGTERM', onSecond)
  })
  const { drained } = await face.close(HTTP_DRAIN_MS, second)
  await stdioConnection?.close()
  faces.close()
  if (!drained) logger.warn('calls were still in flight; they were cancelled')
  await Promise.all(
    [server, metricsServer].map(
      (s) =>
        s &&
        new Promise<void>((resolve) => {
          s.close(() => resolve())
          s.closeAllConnections()
        }),
    ),
  )
  await runtime.close({ urgent: true })
  await sharedStore?.close()
  metrics?.close()
  signals.off('SIGINT', onSecond!)
  signals.off('SIGTERM', onSecond!)
  stopKillOnExit()
  return signal === 'SIGINT' ? ExitCode.interrupted : ExitCode.ok
}

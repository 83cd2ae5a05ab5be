import {
  InsufficientScopeError,
  SdkError,
  SdkErrorCode,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
} from '@modelcontextprotocol/client'
import type { ServerConfig } from '../config/server-schema.js'
import { mycCodeOf } from '../errors.js'
import { redactUrl, redactUrls } from '../redact.js'
import type { Logger } from '../logger.js'
import { InterceptTransport } from '../protocol/intercept-transport.js'
import { MODERN_PROTOCOL_VERSION, type Era } from '../protocol/facts.js'
import type { LineParser } from '../protocol/line-parser.js'
import { childAuthProvider, NeedsLoginError, needsLoginIn, type ChildAuth } from '../oauth/child-auth.js'
import { TokenStore } from '../oauth/token-store.js'
import { MAX_AUTHORIZATIONS_PER_CALL, type Reauthorize } from '../oauth/reauthorize.js'
import type { PrespawnedChildren } from './prespawn.js'
import type { CommandHost } from './resolve-command.js'
import { withOwnSignals } from './request-signals.js'
import { describeResolution, stdioSpawnSpec } from './spawn-spec.js'
import { ChildStdioTransport } from './stdio-transport.js'
import { withTraceHeaders } from './child-trace-headers.js'

/** How a child is reached: a process over stdio, Streamable HTTP (falling back to HTTP+SSE), or HTTP+SSE. */
export function createChildTransport(
  config: ServerConfig,
  log: Logger,
  options: {
    key: string
    host: CommandHost
    configDir: string
    prespawned?: PrespawnedChildren | undefined
    stderrLine?: ((line: string) => void) | undefined
    tokenStore?: TokenStore | undefined
    reauthorize?: Reauthorize | undefined
    lines?: LineParser | undefined
  },
): Transport {
  if (config.type === 'stdio') {
    const spec = stdioSpawnSpec(config, options.host, options.configDir)
    const resolution = describeResolution(spec)
    if (resolution) log.debug(resolution)
    const early = options.prespawned?.take(options.key, spec)
    return new ChildStdioTransport({
      command: spec.command,
      args: spec.args,
      env: spec.env,
      cwd: spec.cwd,
      ...(spec.windowsVerbatimArguments ? { windowsVerbatimArguments: true } : {}),
      ...(early ? { early } : {}),
      onStderrLine: options.stderrLine ?? ((line) => log.info(line)),
      lines: options.lines,
    })
  }
  const url = new URL(config.url)
  const requestInit = { headers: config.headers }
  const store = options.tokenStore ?? TokenStore.forUser()
  const authProvider = oauthProviderFor(config, options.key, store)
  if (config.type === 'sse')
    return new SSEClientTransport(url, { requestInit, fetch: childFetch(), ...(authProvider ? { authProvider } : {}) })
  const { reauthorize } = options
  return new FallbackHttpTransport(
    url,
    requestInit,
    log,
    authProvider,
    options.key,
    reauthorize && authProvider ? (reason) => reauthorize(options.key, config, store, reason) : undefined,
  )
}

/** The fetch of an HTTP child's transport: a signal per request, and the trace context in headers as well as `_meta`. */
function childFetch(): ReturnType<typeof withOwnSignals> {
  return withTraceHeaders(withOwnSignals())
}

/**
 * An HTTP child's OAuth (docs/auth.md): the login `myc auth login` stored,
 * refreshed as needed. Not for a child whose config sends its own
 * Authorization header and has no `oauth` key.
 */
function oauthProviderFor(
  config: ServerConfig & { type: 'http' | 'sse' },
  key: string,
  store: TokenStore | undefined,
): ChildAuth | undefined {
  if (!config.oauth && Object.keys(config.headers).some((h) => h.toLowerCase() === 'authorization')) return undefined
  return childAuthProvider({ key, url: config.url, oauth: config.oauth, store: store ?? TokenStore.forUser() })
}

/** Ids of the SDK's probe requests: a late answer (after the timeout verdict) is dropped, not handed to the SDK. */
const PROBE_ID = /^server-discover-probe-/

/** The child exited while the SDK's `server/discover` probe waited (a 2025 server that ends on an unknown pre-initialize request). */
export class ProbeClosedError extends Error {
  constructor(cause: unknown) {
    super(`exited on the server/discover probe: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
  }
}

/**
 * An InterceptTransport over a child process. The SDK's version
 * negotiation reads a transport with `stderr` and `pid` as stdio, where a
 * probe that gets no answer means a 2025 server (initialize follows), not
 * an outage. (The child's stderr goes to myc's log, never here.)
 */
export class ChildProcessTransport extends InterceptTransport {
  readonly stderr = null
  constructor(readonly child: ChildStdioTransport) {
    super(child)
  }
  get pid(): number | undefined {
    return this.child.pid
  }
}

/** An answer to a `server/discover` probe (after connecting, one the SDK gave up on: a slow 2025 server's -32601 is nobody's business). */
export function isLateProbeAnswer(message: { id?: unknown; method?: unknown }): boolean {
  return message.method === undefined && typeof message.id === 'string' && PROBE_ID.test(message.id)
}

/** Whether a connect failed because the connection went away (the SDK's closed connection, or a send to a process that ended). */
function connectionGone(error: unknown): boolean {
  return (
    (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) || mycCodeOf(error) === 'child_gone'
  )
}

export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms)
      timer.unref()
    }),
  ]).finally(() => clearTimeout(timer))
}

/**
 * How long the `server/discover` probe of a stdio child in `era: "auto"`
 * may take before the child counts as a 2025 server that stays silent on an
 * unknown request (it then gets `initialize` on the same process), and at
 * most half the start's time, so that initialize has the rest. The
 * 2025 reference servers answer the probe with -32601 at once; a slow
 * starter that misses it is still served, in the 2025 era.
 */
const STDIO_PROBE_TIMEOUT_MS = 5_000

/** The SDK's version negotiation for a start in `era` (none for `legacy`), with `remaining` ms of the start left. */
export function negotiationFor(era: 'auto' | Era, stdio: boolean, remaining: number) {
  if (era === 'legacy') return undefined
  return {
    mode: era === 'modern' ? { pin: MODERN_PROTOCOL_VERSION } : ('auto' as const),
    // On stdio, silence is a 2025 server (initialize follows); over HTTP it is an outage, so the probe may take the whole start.
    probe: {
      timeoutMs: stdio && era === 'auto' ? Math.min(STDIO_PROBE_TIMEOUT_MS, Math.ceil(remaining / 2)) : remaining,
    },
  }
}

/** What a failed connect throws: why, when a stdio child's process ended (`exit`) on the way. */
export function connectFailure(
  error: unknown,
  era: 'auto' | Era,
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined,
): unknown {
  if (exit === undefined) return error
  // The SDK probes a custom stdio transport in place: a child that exits on the probe ends the connect with a negotiation error.
  if (era === 'auto') return new ProbeClosedError(error)
  // A process that ended is the reason, not the closed connection it left behind (what it said is in myc's log on stderr, tagged with its name).
  if (!connectionGone(error)) return error
  return new Error(
    `${exitWords(exit)} before finishing ${era === 'legacy' ? 'initialize' : 'its handshake'} (its stderr, if it wrote any, is in myc's log (stderr))`,
    { cause: error },
  )
}

/** How a child process ended, in words. */
function exitWords(exit: { code: number | null; signal: NodeJS.Signals | null }): string {
  return exit.signal ? `it was ended by ${exit.signal}` : `it exited with code ${exit.code}`
}

/** Why a child did not start, in words for status and logs (an HTTP child's URL without its secrets). */
export function describeStartError(error: unknown, config: ServerConfig): string {
  const e = error as NodeJS.ErrnoException
  if (e?.code === 'ENOENT' && config.type === 'stdio')
    return `command not found: "${config.command}" (install it or give its absolute path in "command")`
  if (e?.code === 'EACCES' && config.type === 'stdio') return `command not executable: "${config.command}"`
  // Status, doctor and logs show this: the URL it failed on (an HTTP child's, with its user, password and query) without its secrets.
  const message = error instanceof Error ? error.message : String(error)
  if (config.type === 'stdio') return redactUrls(message)
  // A child that needs a login: its message is the fix (`run: myc auth login SERVER`).
  const needsLogin = needsLoginIn(error)
  if (needsLogin) return redactUrls(needsLogin.message)
  const said = message.split(config.url).join(redactUrl(config.url))
  // `fetch failed` says neither where nor why: the URL and the network cause (ECONNREFUSED, ENOTFOUND…) it wraps.
  const cause = causeWords(error)
  const why = cause !== undefined && !said.includes(cause) ? `${said} (${cause})` : said
  return redactUrls(said.includes(redactUrl(config.url)) ? why : `${redactUrl(config.url)}: ${why}`)
}

/** The innermost cause of a network error, in words (`connect ECONNREFUSED 127.0.0.1:9`), or undefined. */
function causeWords(error: unknown): string | undefined {
  let cause: unknown = error instanceof Error ? error.cause : undefined
  let words: string | undefined
  for (let depth = 0; cause !== undefined && cause !== null && depth < 5; depth++) {
    // Node's happy-eyeballs connect fails with an AggregateError of one error per address.
    const first: unknown = cause instanceof AggregateError && cause.errors.length > 0 ? cause.errors[0] : cause
    const code = (first as NodeJS.ErrnoException).code
    const message = first instanceof Error ? first.message : String(first)
    words = code !== undefined && !message.includes(code) ? `${code}: ${message}` : message || code
    cause = first instanceof Error ? first.cause : undefined
  }
  return words
}

/**
 * Streamable HTTP, falling back to the old HTTP+SSE transport when the server
 * does not speak it (as the MCP spec's backwards-compatibility section
 * describes: a 4xx answer to the first POST).
 */
class FallbackHttpTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: Transport['onmessage']
  private active: Transport
  private triedFallback = false
  private firstSend = true

  constructor(
    private readonly url: URL,
    private readonly requestInit: RequestInit,
    private readonly log: Logger,
    private readonly authProvider?: ChildAuth | undefined,
    private readonly key?: string | undefined,
    /** Asks the person to authorize again (myc serve on stdio, the agent); absent, a login that went bad is a NeedsLoginError. */
    private readonly reauthorize?: ((reason: string) => Promise<void>) | undefined,
  ) {
    this.active = this.attach(
      new StreamableHTTPClientTransport(url, {
        requestInit,
        fetch: childFetch(),
        ...(authProvider ? { authProvider } : {}),
      }),
    )
  }

  private attach(transport: Transport): Transport {
    transport.onmessage = (message, extra) => this.onmessage?.(message, extra)
    transport.onerror = (error) => this.onerror?.(error)
    transport.onclose = () => this.onclose?.()
    return transport
  }

  get sessionId(): string | undefined {
    return this.active.sessionId
  }

  setProtocolVersion(version: string): void {
    this.active.setProtocolVersion?.(version)
  }

  start(): Promise<void> {
    return this.active.start()
  }

  async send(message: Parameters<Transport['send']>[0], options?: Parameters<Transport['send']>[1]): Promise<void> {
    let authorizations = 0
    for (;;) {
      try {
        return await this.sendOrFallBack(message, options)
      } catch (error) {
        const needed = await this.loginNeeded(error)
        if (!needed) throw error
        // The person again (a login that went bad, more scope, a moved authorization server), at most a few times for one request; then this request goes on.
        if (
          !this.reauthorize ||
          authorizations >= MAX_AUTHORIZATIONS_PER_CALL ||
          !(await this.authProvider!.hasLogin())
        )
          throw needed
        // More scope the login holds already: the server will not be satisfied by asking again.
        if (error instanceof InsufficientScopeError && (await this.authProvider!.grants(error.requiredScope)))
          throw needed
        authorizations++
        try {
          await this.reauthorize(needed.message)
        } catch (failed) {
          throw new NeedsLoginError(
            this.key!,
            `the authorization asked for did not complete (${failed instanceof Error ? failed.message : String(failed)})`,
            { cause: failed },
          )
        }
      }
    }
  }

  /** What a failed request says of the login: only a person can help (a NeedsLoginError), or undefined for any other failure. */
  private async loginNeeded(error: unknown): Promise<NeedsLoginError | undefined> {
    if (!this.authProvider || this.key === undefined) return undefined
    // Refused again after a refresh: only a new login helps, and the error says so.
    const status = (error as { status?: unknown }).status ?? (error as { code?: unknown }).code
    if (status === 401 && !needsLoginIn(error))
      return new NeedsLoginError(this.key, 'the server refused the token even after a refresh', { cause: error })
    // A 403 insufficient_scope: step-up is a new login, asking for the scope too.
    if (error instanceof InsufficientScopeError) return this.authProvider.needsScope(error.requiredScope)
    return needsLoginIn(error)
  }

  private async sendOrFallBack(
    message: Parameters<Transport['send']>[0],
    options?: Parameters<Transport['send']>[1],
  ): Promise<void> {
    // The era probe does not count: a 2025 Streamable HTTP server refuses it with a 4xx too (the SDK reads that as "legacy").
    if (!this.firstSend || (message as { method?: unknown }).method === 'server/discover')
      return this.active.send(message, options)
    this.firstSend = false
    try {
      await this.active.send(message, options)
    } catch (error) {
      const status = (error as { code?: unknown; status?: unknown }).status ?? (error as { code?: unknown }).code
      // 401 and 403 are about the credential, not the transport: no fallback.
      const clientError =
        typeof status === 'number' && status >= 400 && status < 500 && status !== 401 && status !== 403
      if (this.triedFallback || !clientError || needsLoginIn(error)) throw error
      this.triedFallback = true
      this.log.info(`${redactUrl(this.url.href)} does not speak Streamable HTTP (${String(status)}); trying HTTP+SSE`)
      const old = this.active
      old.onclose = undefined
      await old.close().catch(() => {})
      this.active = this.attach(
        new SSEClientTransport(this.url, {
          requestInit: this.requestInit,
          fetch: childFetch(),
          ...(this.authProvider ? { authProvider: this.authProvider } : {}),
        }),
      )
      await this.active.start()
      await this.active.send(message, options)
    }
  }

  close(): Promise<void> {
    return this.active.close()
  }
}

import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import {
  auth,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  computeScopeUnion,
  extractWWWAuthenticateParams,
  LATEST_PROTOCOL_VERSION,
  PROTOCOL_VERSION_META_KEY,
  type FetchLike,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client'
import type { HttpServerConfig } from '../config/server-schema.js'
import { MODERN_PROTOCOL_VERSION } from '../protocol/facts.js'
import { authorizationAddress } from './browser.js'
import { loginWithTokens } from './child-auth.js'
import type { StoredLogin, TokenStore } from './token-store.js'

/** What the server said to a first request without a token. */
interface Challenge {
  /** The HTTP status (401 when it wants a login). */
  status: number
  resourceMetadataUrl?: URL
  scope?: string
}

/**
 * Sends a first MCP request without a token (`initialize` for Streamable
 * HTTP, the event-stream GET for HTTP+SSE) and reads the challenge of a 401;
 * a server that lets initialize pass is asked the next requests a client
 * sends, one of the 2026-07-28 era `server/discover`.
 */
async function probeChallenge(config: HttpServerConfig, fetchFn: FetchLike = fetch): Promise<Challenge> {
  const headers = new Headers(config.headers)
  headers.delete('authorization')
  let response: Response
  if (config.type === 'sse') {
    headers.set('accept', 'text/event-stream')
    response = await fetchFn(config.url, { method: 'GET', headers, signal: AbortSignal.timeout(30_000) })
  } else {
    headers.set('content-type', 'application/json')
    headers.set('accept', 'application/json, text/event-stream')
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'myc-auth-login', version: '1' },
      },
    })
    response = await fetchFn(config.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) })
  }
  await response.body?.cancel().catch(() => {})
  // A server that lets initialize through without a token asks at the next request: go on as a client would.
  if (config.type === 'http' && response.ok)
    response = await probeAfterInitialize(config.url, headers, response, fetchFn)
  // A server of the 2026-07-28 era only refuses initialize: ask as a modern client does, with server/discover.
  else if (config.type === 'http' && response.status === 400) response = await probeModern(config.url, headers, fetchFn)
  if (response.status !== 401) return { status: response.status }
  const params = extractWWWAuthenticateParams(response)
  return {
    status: 401,
    ...(params.resourceMetadataUrl ? { resourceMetadataUrl: params.resourceMetadataUrl } : {}),
    ...(params.scope ? { scope: params.scope } : {}),
  }
}

/** After an initialize answered without a token: `notifications/initialized`, then `tools/list`, in its session; the session is ended after. */
async function probeAfterInitialize(
  url: string,
  headers: Headers,
  initialized: Response,
  fetchFn: FetchLike,
): Promise<Response> {
  const session = initialized.headers.get('mcp-session-id')
  if (session) headers.set('mcp-session-id', session)
  headers.set('mcp-protocol-version', LATEST_PROTOCOL_VERSION)
  const post = async (message: unknown) => {
    const r = await fetchFn(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(message),
      signal: AbortSignal.timeout(30_000),
    })
    await r.body?.cancel().catch(() => {})
    return r
  }
  const notified = await post({ jsonrpc: '2.0', method: 'notifications/initialized' })
  const listed =
    notified.status === 401 ? notified : await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })
  if (session)
    await fetchFn(url, { method: 'DELETE', headers, signal: AbortSignal.timeout(5_000) })
      .then(
        (r) => r.body?.cancel(),
        () => {},
      )
      .catch(() => {})
  return listed
}

/** A 2026-07-28 `server/discover` without a token. */
async function probeModern(url: string, headers: Headers, fetchFn: FetchLike): Promise<Response> {
  headers.set('mcp-protocol-version', MODERN_PROTOCOL_VERSION)
  headers.set('mcp-method', 'server/discover')
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 0,
    method: 'server/discover',
    params: {
      _meta: {
        [PROTOCOL_VERSION_META_KEY]: MODERN_PROTOCOL_VERSION,
        [CLIENT_INFO_META_KEY]: { name: 'myc-auth-login', version: '1' },
        [CLIENT_CAPABILITIES_META_KEY]: {},
      },
    },
  })
  const response = await fetchFn(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) })
  await response.body?.cancel().catch(() => {})
  return response
}

/** What an authorization redirect brought to the loopback listener. */
interface Callback {
  code: string
  iss?: string
}

/** The loopback listener `http://127.0.0.1:<port>/callback` that takes one authorization response. */
class LoopbackCallback {
  private server: Server | undefined
  private resolveCode!: (callback: Callback) => void
  private rejectCode!: (error: Error) => void
  /** The browser's response waits for the token exchange: `finish` sends it. */
  private pending: ((ok: boolean, words: string) => void) | undefined
  /** An answer came (or the login ended): later requests are not taken. */
  private answered = false
  readonly code: Promise<Callback>
  readonly state = randomBytes(24).toString('base64url')

  constructor() {
    this.code = new Promise<Callback>((resolve, reject) => {
      this.resolveCode = resolve
      this.rejectCode = reject
    })
    this.code.catch(() => {})
  }

  async listen(port = 0): Promise<string> {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      if (req.method !== 'GET' || url.pathname !== '/callback')
        return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
      // A request without this login's state is not its answer (a stray or forged request): refused, the login waits on.
      if (url.searchParams.get('state') !== this.state || this.answered)
        return void res
          .writeHead(400, { 'content-type': 'text/plain' })
          .end('This is not the answer myc is waiting for (state mismatch).\n')
      const error = url.searchParams.get('error')
      const code = url.searchParams.get('code')
      const page = (ok: boolean, words: string) =>
        res
          .writeHead(ok ? 200 : 400, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
          .end(`<!doctype html><meta charset="utf-8"><title>myc</title><p>${escapeHtml(words)}</p>\n`)
      this.answered = true
      if (error !== null || code === null) {
        const said =
          error === null
            ? 'no code'
            : `${error}${url.searchParams.get('error_description') ? `: ${url.searchParams.get('error_description')}` : ''}`
        page(false, `Authorization failed (${said}). You can close this tab.`)
        return this.rejectCode(new Error(`the authorization server answered: ${said}`))
      }
      this.pending = page
      const iss = url.searchParams.get('iss')
      this.resolveCode({ code, ...(iss !== null ? { iss } : {}) })
    })
    this.server = server
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => resolve())
    })
    const address = server.address()
    if (address === null || typeof address === 'string') throw new Error('the loopback listener has no port')
    return `http://127.0.0.1:${address.port}/callback`
  }

  /** Answers the browser (after the token exchange) and stops listening. */
  async finish(ok: boolean, words: string): Promise<void> {
    const pending = this.pending
    this.pending = undefined
    this.answered = true
    pending?.(ok, words)
    this.rejectCode(new Error('the login ended'))
    const server = this.server
    this.server = undefined
    if (!server) return
    await new Promise<void>((resolve) => server.close(() => resolve()))
    server.closeAllConnections()
  }
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** The OAuthClientProvider of one login: everything in memory until the tokens are stored. */
class LoginProvider implements OAuthClientProvider {
  clientMetadataUrl?: string
  private registered: StoredOAuthClientInformation | undefined
  private verifier: string | undefined
  private discovery: OAuthDiscoveryState | undefined
  tokensGot: StoredOAuthTokens | undefined
  resource: string | undefined

  constructor(
    private readonly config: HttpServerConfig,
    readonly redirectUrl: string,
    private readonly stateValue: string,
    private readonly onAuthorizationUrl: (url: URL) => void,
  ) {
    if (config.oauth?.clientMetadataUrl) this.clientMetadataUrl = config.oauth.clientMetadataUrl
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Mycelium (myc)',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: this.config.oauth?.clientSecret ? 'client_secret_basic' : 'none',
      ...(this.config.oauth?.scopes?.length ? { scope: this.config.oauth.scopes.join(' ') } : {}),
    }
  }

  state(): string {
    return this.stateValue
  }

  clientInformation(ctx?: OAuthClientInformationContext): StoredOAuthClientInformation | undefined {
    const oauth = this.config.oauth
    // A pre-registered client belongs to the authorization server the discovery found (SEP-2352's issuer stamp).
    const issuer = ctx?.issuer ?? this.registered?.issuer
    if (oauth?.clientId)
      return {
        client_id: oauth.clientId,
        ...(oauth.clientSecret ? { client_secret: oauth.clientSecret } : {}),
        ...(issuer ? { issuer } : {}),
      }
    return this.registered
  }

  saveClientInformation(info: StoredOAuthClientInformation): void {
    this.registered = info
  }

  /** A login always asks anew: no stored token is offered for a refresh. */
  tokens(): StoredOAuthTokens | undefined {
    return this.tokensGot
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.tokensGot = tokens
  }

  redirectToAuthorization(url: URL): void {
    this.onAuthorizationUrl(url)
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('no PKCE code verifier was made for this login')
    return this.verifier
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery
  }

  saveResourceUrl(resource: string): void {
    this.resource = resource
  }

  /** The login to store, once the tokens came. */
  login(): Omit<StoredLogin, 'tokens' | 'expiresAt' | 'savedAt'> {
    const client = this.clientInformation()
    if (!client || !this.discovery)
      throw new Error('the login ended without client information or authorization server')
    // A configured secret stays in the config (as "${ENV}"): the store keeps the client id only.
    const { client_secret: _secret, ...withoutSecret } = client
    return {
      serverUrl: this.config.url,
      client:
        this.config.oauth?.clientSecret && this.config.oauth.clientId === client.client_id ? withoutSecret : client,
      authorizationServerUrl: this.discovery.authorizationServerUrl,
      ...(this.discovery.authorizationServerMetadata
        ? { authorizationServerMetadata: this.discovery.authorizationServerMetadata }
        : {}),
      ...(this.resource ? { resource: this.resource } : {}),
    }
  }
}

/** An authorization under way: the URL the person opens, and what completes it with the redirect's answer. */
export interface StartedLogin {
  url: URL
  /** Exchanges the code (checking `iss` as the 2026 revision says) and stores the tokens. */
  complete(answer: { code: string; iss?: string }): Promise<StoredLogin>
}

export interface BeginLoginOptions {
  /** The server's key in the config (errors name it). */
  server: string
  config: HttpServerConfig
  store: TokenStore
  /** Where the authorization server sends the person back (a loopback listener, or `myc serve --http`'s /oauth/callback). */
  redirectUrl: string
  /** The `state` the redirect must bring back. */
  state: string
  fetch?: FetchLike
  now?: () => number
}

/**
 * Starts a login: learns what the server wants from a first request without
 * a token, then runs the SDK's authorization (discovery, registration, PKCE
 * S256, `resource`, scope selection) up to the URL the person opens.
 */
export async function beginLogin(options: BeginLoginOptions): Promise<StartedLogin> {
  const { config } = options
  const now = options.now ?? Date.now
  const fetchFn = options.fetch ?? fetch
  const challenge = await probeChallenge(config, fetchFn)
  if (challenge.status !== 401 && !config.oauth)
    throw new Error(
      `the server answered a request without a token with HTTP ${challenge.status}, not 401: it asks for no login (add "oauth": {} to its config to log in anyway)`,
    )
  let url: URL | undefined
  const provider = new LoginProvider(config, options.redirectUrl, options.state, (u) => (url = u))
  // A step-up pending (a 403 asked for more): what was granted and what was asked, together.
  const previous = await options.store.get(config.url)
  const scope = config.oauth?.scopes?.length
    ? config.oauth.scopes.join(' ')
    : previous?.scopeNeeded
      ? computeScopeUnion(challenge.scope, previous.tokens.scope, previous.scopeNeeded)
      : challenge.scope
  const common = {
    serverUrl: config.url,
    fetchFn,
    ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
    ...(scope ? { scope } : {}),
  }
  const first = await auth(provider, { ...common, forceReauthorization: true })
  if (first !== 'REDIRECT' || url === undefined)
    throw new Error('the authorization server gave tokens without asking the person')
  return {
    // Only an http(s) address is shown, printed or opened: not a file: or any other the metadata names.
    url: authorizationAddress(url, options.server),
    async complete(answer) {
      const result = await auth(provider, {
        ...common,
        authorizationCode: answer.code,
        ...(answer.iss !== undefined ? { iss: answer.iss } : {}),
      })
      if (result !== 'AUTHORIZED' || !provider.tokensGot) throw new Error('the token exchange did not give tokens')
      const stored = loginWithTokens(provider.login(), provider.tokensGot, now())
      await options.store.put(config.url, stored)
      return stored
    },
  }
}

export interface LoginOptions {
  /** The server's key in the config (errors name it). */
  server: string
  config: HttpServerConfig
  store: TokenStore
  /** Called once with the URL the person opens. */
  onAuthorizationUrl: (url: URL) => void
  /** The loopback listener's port (0: any free port). */
  port?: number
  timeoutMs?: number
  fetch?: FetchLike
  now?: () => number
}

/**
 * `myc auth login`: starts the login (beginLogin) with a loopback listener
 * as the redirect, waits for the person's answer there, and completes it.
 */
export async function login(options: LoginOptions): Promise<StoredLogin> {
  const callback = new LoopbackCallback()
  try {
    const redirectUrl = await callback.listen(options.port ?? 0)
    const started = await beginLogin({
      server: options.server,
      config: options.config,
      store: options.store,
      redirectUrl,
      state: callback.state,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.now ? { now: options.now } : {}),
    })
    options.onAuthorizationUrl(started.url)
    const timeoutMs = options.timeoutMs ?? 300_000
    let timer: NodeJS.Timeout | undefined
    const answer = await Promise.race([
      callback.code,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(new Error(`no authorization came back to ${redirectUrl} within ${Math.round(timeoutMs / 1000)} s`)),
          timeoutMs,
        )
      }),
    ]).finally(() => clearTimeout(timer))
    try {
      const stored = await started.complete(answer)
      await callback.finish(true, 'Logged in: myc has stored the tokens. You can close this tab.')
      return stored
    } catch (error) {
      await callback.finish(false, 'The login failed: see myc\u2019s message in your terminal. You can close this tab.')
      throw error
    }
  } finally {
    await callback.finish(false, 'The login ended.')
  }
}

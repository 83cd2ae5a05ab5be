import { randomBytes } from 'node:crypto'
import type { Logger } from '../logger.js'
import { beginLogin, escapeHtml, type StartedLogin } from '../oauth/login.js'
import type { PrincipalView } from '../principal/view.js'
import { isPersonal, OAUTH_LOGIN_PATH } from '../runtime/principal-tools.js'
import type { Runtime } from '../runtime/runtime.js'
import type { HttpPrincipal } from './principals.js'

/** Where the authorization server sends the person back. */
export const OAUTH_CALLBACK_PATH = '/oauth/callback'

/** How long a person has to answer the authorization server. */
const LOGIN_TTL_MS = 10 * 60_000
/** Logins waiting for their redirect at once; beyond this the oldest is dropped. */
const MAX_PENDING = 1_000

interface Pending {
  started: StartedLogin
  owner: string
  server: string
  expires: number
}

export interface PersonLoginsOptions {
  runtime: Runtime
  logger: Logger
  viewFor(principal: HttpPrincipal): PrincipalView
}

/**
 * A person's OAuth login to a server with an `oauth` key, through `myc serve
 * --http` (docs/auth.md): `GET /oauth/login/<server>` with the person's own
 * myc credential starts it (the authorization URL as JSON, or a redirect to
 * it) and `GET /oauth/callback` takes the authorization server's answer,
 * bound to that login by its `state`; the tokens are stored for the
 * credential's name (`owner`), so each person calls the server as
 * themselves. A server the credential does not see answers as one that does
 * not exist.
 */
export class PersonLogins {
  private readonly pending = new Map<string, Pending>()

  constructor(private readonly options: PersonLoginsOptions) {}

  /** Whether `pathname` is one of these routes. */
  static handles(pathname: string): boolean {
    return pathname === OAUTH_CALLBACK_PATH || pathname.startsWith(`${OAUTH_LOGIN_PATH}/`)
  }

  /** Answers a login route; `admit` checks the request's credential and rate limit (the principal, or the refusal owed). */
  async handle(request: Request, url: URL, admit: () => Promise<HttpPrincipal | Response>): Promise<Response> {
    if (request.method !== 'GET') return text(405, 'Method Not Allowed: use GET', { Allow: 'GET' })
    if (url.pathname === OAUTH_CALLBACK_PATH) return this.callback(url)
    // Counted against http.rateLimit before any discovery or registration at the authorization server.
    const principal = await admit()
    if (principal instanceof Response) return principal
    let server: string
    try {
      server = decodeURIComponent(url.pathname.slice(OAUTH_LOGIN_PATH.length + 1))
    } catch {
      return text(400, 'Bad Request: the server name is not valid percent-encoding')
    }
    const config = this.options.runtime.loaded.config.servers.get(server)
    const view = this.options.viewFor(principal)
    // Hidden, missing, or not logged in per person: the same answer, naming nothing the credential does not see.
    if (!config || config.disabled || !isPersonal(config) || config.type === 'stdio' || !view.serverVisible(server))
      return text(404, `Not Found: no server "${server}" to log in to here`)
    if (principal.owner === undefined)
      return text(
        403,
        'Forbidden: this credential has no name to keep logins under; give its http.tokens entry a "name" (without http.tokens, log in with: myc auth login SERVER)',
      )
    this.sweep()
    const state = randomBytes(24).toString('base64url')
    let started: StartedLogin
    try {
      started = await beginLogin({
        server,
        config,
        store: this.options.runtime.personalStore(principal.owner),
        redirectUrl: `${url.origin}${OAUTH_CALLBACK_PATH}`,
        state,
      })
    } catch (error) {
      this.options.logger.warn(
        `http: a login to "${server}" for ${principal.label} could not start: ${error instanceof Error ? error.message : String(error)}`,
      )
      return text(
        502,
        `Bad Gateway: the login to "${server}" could not start: ${error instanceof Error ? error.message : String(error)}`,
      )
    }
    this.pending.set(state, { started, owner: principal.owner, server, expires: Date.now() + LOGIN_TTL_MS })
    if (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.keys().next().value!)
    const authorizationUrl = started.url.href
    if ((request.headers.get('accept') ?? '').includes('application/json'))
      return Response.json(
        { authorizationUrl, expiresInSeconds: LOGIN_TTL_MS / 1000 },
        { headers: { 'Cache-Control': 'no-store' } },
      )
    return new Response(null, { status: 302, headers: { Location: authorizationUrl, 'Cache-Control': 'no-store' } })
  }

  /** The authorization server's answer: single use, bound to its login by `state`. */
  private async callback(url: URL): Promise<Response> {
    const state = url.searchParams.get('state') ?? ''
    const login = this.pending.get(state)
    this.pending.delete(state)
    if (!login || login.expires < Date.now())
      return page(400, 'This is not a login myc is waiting for (unknown or expired state): start it again.')
    const error = url.searchParams.get('error')
    const code = url.searchParams.get('code')
    if (error !== null || code === null)
      return page(400, `Authorization failed (${error ?? 'no code'}). You can close this tab.`)
    const iss = url.searchParams.get('iss')
    try {
      await login.started.complete({ code, ...(iss !== null ? { iss } : {}) })
    } catch (e) {
      this.options.logger.warn(
        `http: the login to "${login.server}" for ${login.owner} failed: ${e instanceof Error ? e.message : String(e)}`,
      )
      return page(400, `The login to "${login.server}" failed. Start it again.`)
    }
    this.options.logger.info(`http: ${login.owner} logged in to "${login.server}"`)
    return page(200, `Logged in to "${login.server}" as ${login.owner}. You can close this tab.`)
  }

  private sweep(): void {
    const now = Date.now()
    for (const [state, login] of this.pending) if (login.expires < now) this.pending.delete(state)
  }
}

function text(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(`${body}\n`, {
    status,
    headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers },
  })
}

function page(status: number, words: string): Response {
  return new Response(`<!doctype html><meta charset="utf-8"><title>myc</title><p>${escapeHtml(words)}</p>\n`, {
    status,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' },
  })
}

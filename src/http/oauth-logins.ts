import { randomBytes } from 'node:crypto'
import type { HttpServerConfig } from '../config/server-schema.js'
import type { Logger } from '../logger.js'
import { beginLogin, escapeHtml, type StartedLogin } from '../oauth/login.js'
import type { PrincipalView } from '../principal/view.js'
import { isPersonal, OAUTH_LOGIN_PATH } from '../runtime/caller-child.js'
import type { Runtime } from '../runtime/runtime.js'
import type { HttpPrincipal } from './principals.js'
import { plainText } from './responses.js'

/** Where the authorization server sends the person back. */
const OAUTH_CALLBACK_PATH = '/oauth/callback'

/** How long a person has to answer the authorization server. */
const LOGIN_TTL_MS = 10 * 60_000
/** How long, once the authorization server answered, the person has to finish with their credential. */
const FINISH_TTL_MS = 5 * 60_000
/** Logins one credential may have under way; a new one ends that credential's oldest. */
export const MAX_PENDING_PER_CREDENTIAL = 4
/** Logins under way at once, everyone's; beyond this a new one is refused (503), never someone else's ended. */
const MAX_PENDING = 1_000

interface Pending {
  started: StartedLogin
  /** The credential that started it (HttpPrincipal.key): only a request with it finishes the login. */
  credential: string
  owner: string
  server: string
  expires: number
  /** The authorization server's answer once a browser brought it, and the one-time code the callback page shows. */
  answer?: { code: string; iss?: string; finishCode: string }
}

/** The server a login route names, its config checked, for a principal with a name to keep logins under. */
interface Target {
  server: string
  config: HttpServerConfig
  owner: string
}

export interface PersonLoginsOptions {
  runtime: Runtime
  logger: Logger
  viewFor(principal: HttpPrincipal): PrincipalView
}

/**
 * A person's OAuth login to a server with an `oauth` key, through `myc serve
 * --http` (docs/auth.md), in three steps: `GET /oauth/login/<server>` with
 * the person's own myc credential starts it (the authorization URL as JSON,
 * or a redirect to it); `GET /oauth/callback` takes the authorization
 * server's answer, bound to that login by its `state`, and shows a one-time
 * code instead of storing anything; `POST /oauth/login/<server>?code=…` with
 * the same credential finishes it: the code is exchanged and the tokens
 * stored for the credential's name (`owner`). A link passed to someone else
 * therefore stores nothing: their browser gets the code, and only the
 * credential that started the login can use it. Both credentialed routes
 * count against `http.rateLimit` (`admit`). A server the credential does not
 * see answers as one that does not exist.
 */
export class PersonLogins {
  /** Logins under way, by `state`, oldest first. */
  private readonly pending = new Map<string, Pending>()
  /** The answered ones, by their one-time code. */
  private readonly byFinishCode = new Map<string, string>()

  constructor(private readonly options: PersonLoginsOptions) {}

  /** Whether `pathname` is one of these routes. */
  static handles(pathname: string): boolean {
    return pathname === OAUTH_CALLBACK_PATH || pathname.startsWith(`${OAUTH_LOGIN_PATH}/`)
  }

  /** Answers a login route; `admit` checks the request's credential and rate limit (the principal, or the refusal owed). */
  async handle(request: Request, url: URL, admit: () => Promise<HttpPrincipal | Response>): Promise<Response> {
    if (url.pathname === OAUTH_CALLBACK_PATH)
      return request.method === 'GET' ? this.callback(url) : text(405, 'Method Not Allowed: use GET', { Allow: 'GET' })
    if (request.method !== 'GET' && request.method !== 'POST')
      return text(405, 'Method Not Allowed: GET starts a login, POST finishes it', { Allow: 'GET, POST' })
    const principal = await admit()
    if (principal instanceof Response) return principal
    const target = this.target(url, principal)
    if (target instanceof Response) return target
    return request.method === 'GET' ? this.start(request, url, principal, target) : this.finish(url, principal, target)
  }

  /** The server of a `/oauth/login/<server>` path, or the refusal: hidden, missing and not per person answer alike. */
  private target(url: URL, principal: HttpPrincipal): Target | Response {
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
    return { server, config, owner: principal.owner }
  }

  /** `GET /oauth/login/<server>`: discovery and registration at the authorization server, then its URL for the person. */
  private async start(request: Request, url: URL, principal: HttpPrincipal, target: Target): Promise<Response> {
    this.sweep()
    if (this.full()) return busy()
    const state = randomBytes(24).toString('base64url')
    let started: StartedLogin
    try {
      started = await beginLogin({
        server: target.server,
        config: target.config,
        store: this.options.runtime.personalStore(target.owner),
        redirectUrl: `${url.origin}${OAUTH_CALLBACK_PATH}`,
        state,
      })
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error)
      this.options.logger.warn(`http: a login to "${target.server}" for ${principal.label} could not start: ${why}`)
      return text(502, `Bad Gateway: the login to "${target.server}" could not start: ${why}`)
    }
    if (this.full()) return busy()
    this.pending.set(state, { ...target, started, credential: principal.key, expires: Date.now() + LOGIN_TTL_MS })
    this.trim(principal.key)
    const authorizationUrl = started.url.href
    if ((request.headers.get('accept') ?? '').includes('application/json'))
      return Response.json(
        { authorizationUrl, expiresInSeconds: LOGIN_TTL_MS / 1000 },
        { headers: { 'Cache-Control': 'no-store' } },
      )
    return new Response(null, { status: 302, headers: { Location: authorizationUrl, 'Cache-Control': 'no-store' } })
  }

  /**
   * The authorization server's answer, in whichever browser opened the link:
   * single use, bound to its login by `state`. Nothing is exchanged or stored
   * here; the page shows the one-time code that finishes the login.
   */
  private callback(url: URL): Response {
    this.sweep()
    const state = url.searchParams.get('state') ?? ''
    const login = this.pending.get(state)
    if (!login || login.answer)
      return page(
        400,
        'This is not a login myc is waiting for (unknown, expired or already answered state): start it again.',
      )
    const error = url.searchParams.get('error')
    const code = url.searchParams.get('code')
    if (error !== null || code === null) {
      this.drop(state)
      return page(400, `Authorization failed (${error ?? 'no code'}). You can close this tab.`)
    }
    const iss = url.searchParams.get('iss')
    const finishCode = randomBytes(15).toString('base64url')
    login.answer = { code, ...(iss !== null ? { iss } : {}), finishCode }
    login.expires = Date.now() + FINISH_TTL_MS
    this.byFinishCode.set(finishCode, state)
    return finishPage(url.origin, login.server, login.owner, finishCode)
  }

  /** `POST /oauth/login/<server>?code=…`: the credential that started the login brings the code; only then are tokens stored. */
  private async finish(url: URL, principal: HttpPrincipal, target: Target): Promise<Response> {
    this.sweep()
    const finishCode = url.searchParams.get('code') ?? ''
    const state = this.byFinishCode.get(finishCode)
    const login = state === undefined ? undefined : this.pending.get(state)
    if (state === undefined || !login?.answer)
      return text(
        400,
        `Bad Request: no login to "${target.server}" is waiting for this code (used, expired, or never given): start again with GET ${OAUTH_LOGIN_PATH}/${encodeURIComponent(target.server)}`,
      )
    if (login.server !== target.server)
      return text(400, `Bad Request: this code finishes a login to another server, not "${target.server}"`)
    // Used once, whoever brings it: a code in the wrong hands ends the login it belongs to.
    this.drop(state)
    if (login.credential !== principal.key) {
      this.options.logger.warn(
        `http: ${principal.label} brought the code of a login to "${login.server}" started by another credential (${login.owner}): it is ended, nothing stored`,
      )
      return text(
        403,
        'Forbidden: this login was started with another credential; nothing was stored, and the login is ended (whoever started it starts again)',
      )
    }
    return this.complete(login, login.answer)
  }

  /** The token exchange of a finished login, and the tokens stored for its owner. */
  private async complete(login: Pending, answer: NonNullable<Pending['answer']>): Promise<Response> {
    try {
      await login.started.complete({ code: answer.code, ...(answer.iss !== undefined ? { iss: answer.iss } : {}) })
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e)
      this.options.logger.warn(`http: the login to "${login.server}" for ${login.owner} failed: ${why}`)
      return text(502, `Bad Gateway: the login to "${login.server}" failed (${why}); start it again`)
    }
    this.options.logger.info(`http: ${login.owner} logged in to "${login.server}"`)
    return Response.json(
      { loggedIn: true, server: login.server, principal: login.owner },
      { headers: { 'Cache-Control': 'no-store' } },
    )
  }

  /** Whether no login can be added: everyone's are at MAX_PENDING. */
  private full(): boolean {
    return this.pending.size >= MAX_PENDING
  }

  /** Ends `credential`'s oldest logins beyond MAX_PENDING_PER_CREDENTIAL. */
  private trim(credential: string): void {
    const mine = [...this.pending].filter(([, login]) => login.credential === credential)
    for (const [state] of mine.slice(0, Math.max(0, mine.length - MAX_PENDING_PER_CREDENTIAL))) this.drop(state)
  }

  private drop(state: string): void {
    const finishCode = this.pending.get(state)?.answer?.finishCode
    if (finishCode !== undefined) this.byFinishCode.delete(finishCode)
    this.pending.delete(state)
  }

  private sweep(): void {
    const now = Date.now()
    for (const [state, login] of this.pending) if (login.expires < now) this.drop(state)
  }
}

const text = plainText

function busy(): Response {
  return text(503, 'Service Unavailable: too many logins are under way on this myc; retry in a minute', {
    'Retry-After': '60',
  })
}

function page(status: number, words: string, more = ''): Response {
  return new Response(`<!doctype html><meta charset="utf-8"><title>myc</title><p>${escapeHtml(words)}</p>\n${more}`, {
    status,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' },
  })
}

/** The callback's page: the one-time code, and how the person who started the login finishes it. */
function finishPage(origin: string, server: string, owner: string, finishCode: string): Response {
  const finish = `${origin}${OAUTH_LOGIN_PATH}/${encodeURIComponent(server)}?code=${finishCode}`
  const command = `curl -X POST -H "Authorization: Bearer $MYC_TOKEN" '${finish}'`
  return page(
    200,
    `One step left: the login to "${server}" for ${owner} is stored only when the myc credential that started it sends this one-time code (within ${FINISH_TTL_MS / 60_000} minutes).`,
    `<p>Code: <code id="code">${escapeHtml(finishCode)}</code></p>\n<pre>${escapeHtml(command)}</pre>\n<p>${escapeHtml('If you did not start this login yourself, close this tab and give the code to no one.')}</p>\n`,
  )
}

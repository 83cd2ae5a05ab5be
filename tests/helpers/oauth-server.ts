import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { Server, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server'

/**
 * A real OAuth 2.1 authorization server and protected MCP resource on
 * node:http, for the tests: protected resource metadata (RFC 9728),
 * authorization server metadata (RFC 8414), dynamic registration, an
 * /authorize that redirects straight to the client's loopback redirect URI
 * with a code (the person already said yes), /token with PKCE S256
 * verification and the refresh_token grant, and an MCP endpoint that answers
 * 401 with a WWW-Authenticate challenge unless a valid bearer token comes.
 */
export interface OAuthTestServer {
  base: string
  mcpUrl: string
  /** Every access and refresh token it gave out (the tests look for them where they must not be). */
  issued: string[]
  /** How many refresh_token grants it answered. */
  refreshes: number
  /** The query of every /authorize request. */
  authorizeRequests: URLSearchParams[]
  /** The form of every /token request. */
  tokenRequests: URLSearchParams[]
  registrations: Array<Record<string, unknown>>
  /** `METHOD /path` of every request, in order. */
  requests: string[]
  /** What each login's sessions were asked outside calls (`logging/setLevel`, `resources/subscribe`), in order. */
  asked: Array<{ login: number; method: string; params: Record<string, unknown> }>
  /** While true, the MCP endpoint refuses every token (a login the resource no longer honours). */
  refuseAll: boolean
  /** Makes every access token issued so far invalid (the next MCP request answers 401). */
  revokeAccessTokens(): void
  /** Makes every refresh token issued so far invalid (a refresh is refused: only a new login helps). */
  revokeRefreshTokens(): void
  /** Tokens for a registered client, as if it had logged in (to seed a store). */
  issueTokens(clientId: string): {
    access_token: string
    token_type: string
    expires_in: number
    refresh_token: string
    scope: string
  }
  close(): Promise<void>
}

export interface OAuthTestServerOptions {
  /** Lifetime of an access token in seconds (default 3600). */
  accessTtl?: number
  /** A pre-registered confidential client. */
  client?: { id: string; secret: string }
  /** Whether dynamic registration is offered (default true). */
  registration?: boolean
  scopes?: string[]
  /** The person says no: /authorize redirects with error=access_denied. */
  deny?: boolean
  /** Serves a `write` tool that needs this scope: without it, a call answers 403 insufficient_scope. */
  writeScope?: string
  /** The `authorization_endpoint` its metadata names, from its base (default: its own /authorize). */
  authorizationEndpoint?: (base: string) => string
}

/** The one-time code that myc's `/oauth/callback` page shows (src/http/oauth-logins.ts), or '' when it shows none. */
export function callbackCode(html: string): string {
  return /<code id="code">([^<]+)<\/code>/.exec(html)?.[1] ?? ''
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body))
}

/** The MCP server of one session; `whoami` names the login (the authorization code exchange, counted from 1) its token came from. */
function mcpServer(write: boolean, login: number, asked: OAuthTestServer['asked']): Server {
  const server = new Server(
    { name: 'oauth-protected', version: '1.0.0' },
    { capabilities: { tools: {}, prompts: {}, logging: {}, resources: { subscribe: true } } },
  )
  // Which login a level or a subscription was asked of: the one whose session it came on.
  for (const method of ['logging/setLevel', 'resources/subscribe', 'resources/unsubscribe'] as const) {
    server.removeRequestHandler(method)
    server.setRequestHandler(method, (request) => {
      asked.push({ login, method, params: { ...request.params } })
      return {}
    })
  }
  server.setRequestHandler('resources/list', () => ({
    resources: [{ uri: 'login://session', name: 'session', description: 'The login of this session' }],
  }))
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [] }))
  server.setRequestHandler('prompts/list', () => ({
    prompts: [{ name: 'whose', description: 'Names the login of this session' }],
  }))
  server.setRequestHandler('prompts/get', () => ({
    messages: [{ role: 'user' as const, content: { type: 'text' as const, text: `login ${login}` } }],
  }))
  const tools = [
    { name: 'whoami', description: 'Says who you are', inputSchema: { type: 'object' as const } },
    ...(write
      ? [{ name: 'write', description: 'Needs the write scope', inputSchema: { type: 'object' as const } }]
      : []),
  ]
  server.setRequestHandler('tools/list', () => ({ tools }))
  server.setRequestHandler('tools/call', async (request, ctx) => {
    // A log message on the call's stream, naming the login: it is for whoever made the call.
    await ctx.mcpReq.notify({
      method: 'notifications/message',
      params: { level: 'info', data: `call of login ${login}` },
    })
    // And one outside any call, once this one has been answered: it is for the login's person, on no call's stream.
    setTimeout(() => {
      const after = { level: 'info' as const, data: `after a call of login ${login}` }
      void server.notification({ method: 'notifications/message', params: after }).catch(() => {})
    }, 20)
    return {
      content: [
        { type: 'text', text: request.params.name === 'write' ? 'written' : `you are logged in (login ${login})` },
      ],
    }
  })
  return server
}

export async function startOAuthServer(options: OAuthTestServerOptions = {}): Promise<OAuthTestServer> {
  const scopes = options.scopes ?? ['mcp:tools']
  const clients = new Map<string, { secret?: string; redirectUris?: string[] }>()
  if (options.client) clients.set(options.client.id, { secret: options.client.secret })
  const codes = new Map<
    string,
    { clientId: string; challenge: string; redirectUri: string; scope: string; resource: string | null }
  >()
  const access = new Map<string, { expires: number; scope: string; login: number }>()
  const refresh = new Map<string, { clientId: string; scope: string; login: number }>()
  let logins = 0
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>()
  const state: OAuthTestServer = {
    base: '',
    mcpUrl: '',
    issued: [],
    refreshes: 0,
    authorizeRequests: [],
    tokenRequests: [],
    registrations: [],
    requests: [],
    asked: [],
    refuseAll: false,
    revokeAccessTokens: () => access.clear(),
    revokeRefreshTokens: () => refresh.clear(),
    issueTokens: (clientId) => issue(clientId, scopes.join(' '), ++logins),
    close: async () => {},
  }

  const issue = (clientId: string, scope: string, login: number) => {
    const accessToken = `at-${randomBytes(16).toString('hex')}`
    const refreshToken = `rt-${randomBytes(16).toString('hex')}`
    const ttl = options.accessTtl ?? 3600
    access.set(accessToken, { expires: Date.now() + ttl * 1000, scope, login })
    refresh.set(refreshToken, { clientId, scope, login })
    state.issued.push(accessToken, refreshToken)
    return { access_token: accessToken, token_type: 'Bearer', expires_in: ttl, refresh_token: refreshToken, scope }
  }

  /** The client a token request authenticates as (basic, post, or a public client's client_id). */
  const clientOf = (req: IncomingMessage, form: URLSearchParams): string | undefined => {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')
    const [id, secret] = basic
      ? Buffer.from(basic[1]!, 'base64').toString().split(':').map(decodeURIComponent)
      : [form.get('client_id') ?? undefined, form.get('client_secret') ?? undefined]
    const client = id === undefined ? undefined : clients.get(id)
    if (!client) return undefined
    if (client.secret !== undefined && client.secret !== secret) return undefined
    return id
  }

  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', state.base)
      const p = url.pathname
      state.requests.push(`${req.method ?? 'GET'} ${p}`)
      if (p === '/.well-known/oauth-protected-resource/mcp' || p === '/.well-known/oauth-protected-resource') {
        return json(res, 200, {
          resource: state.mcpUrl,
          authorization_servers: [state.base],
          scopes_supported: scopes,
          bearer_methods_supported: ['header'],
        })
      }
      if (p === '/.well-known/oauth-authorization-server') {
        return json(res, 200, {
          issuer: state.base,
          authorization_endpoint: options.authorizationEndpoint?.(state.base) ?? `${state.base}/authorize`,
          token_endpoint: `${state.base}/token`,
          ...(options.registration === false ? {} : { registration_endpoint: `${state.base}/register` }),
          response_types_supported: ['code'],
          grant_types_supported: ['authorization_code', 'refresh_token'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
          scopes_supported: [...scopes, 'offline_access'],
        })
      }
      if (p === '/register' && req.method === 'POST' && options.registration !== false) {
        const metadata = JSON.parse(await readBody(req)) as Record<string, unknown>
        state.registrations.push(metadata)
        const id = `dyn-${randomUUID()}`
        clients.set(id, { redirectUris: metadata.redirect_uris as string[] })
        return json(res, 201, { ...metadata, client_id: id, client_id_issued_at: Math.floor(Date.now() / 1000) })
      }
      if (p === '/authorize') {
        const q = url.searchParams
        state.authorizeRequests.push(q)
        const client = clients.get(q.get('client_id') ?? '')
        const redirectUri = q.get('redirect_uri') ?? ''
        // A loopback redirect: `myc auth login`'s listener, or `myc serve --http`'s /oauth/callback.
        const loopback = /^http:\/\/127\.0\.0\.1:\d+(\/oauth)?\/callback$/.test(redirectUri)
        if (!client || !loopback || (client.redirectUris && !client.redirectUris.includes(redirectUri)))
          return json(res, 400, { error: 'invalid_request', error_description: 'unknown client or redirect_uri' })
        if (q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge'))
          return json(res, 400, { error: 'invalid_request', error_description: 'PKCE S256 is required' })
        if (options.deny) {
          const to = new URL(redirectUri)
          to.searchParams.set('error', 'access_denied')
          if (q.get('state') !== null) to.searchParams.set('state', q.get('state')!)
          return void res.writeHead(302, { location: to.href }).end()
        }
        const code = randomBytes(12).toString('hex')
        codes.set(code, {
          clientId: q.get('client_id')!,
          challenge: q.get('code_challenge')!,
          redirectUri,
          scope: q.get('scope') ?? '',
          resource: q.get('resource'),
        })
        const to = new URL(redirectUri)
        to.searchParams.set('code', code)
        if (q.get('state') !== null) to.searchParams.set('state', q.get('state')!)
        return void res.writeHead(302, { location: to.href }).end()
      }
      if (p === '/token' && req.method === 'POST') {
        const form = new URLSearchParams(await readBody(req))
        state.tokenRequests.push(form)
        const clientId = clientOf(req, form)
        if (!clientId) return json(res, 401, { error: 'invalid_client' })
        if (form.get('grant_type') === 'authorization_code') {
          const grant = codes.get(form.get('code') ?? '')
          codes.delete(form.get('code') ?? '')
          const verifier = form.get('code_verifier') ?? ''
          const challenge = createHash('sha256').update(verifier).digest('base64url')
          if (
            !grant ||
            grant.clientId !== clientId ||
            grant.redirectUri !== form.get('redirect_uri') ||
            grant.challenge !== challenge ||
            grant.resource !== form.get('resource')
          )
            return json(res, 400, { error: 'invalid_grant' })
          return json(res, 200, issue(clientId, grant.scope, ++logins))
        }
        if (form.get('grant_type') === 'refresh_token') {
          const grant = refresh.get(form.get('refresh_token') ?? '')
          if (!grant || grant.clientId !== clientId) return json(res, 400, { error: 'invalid_grant' })
          refresh.delete(form.get('refresh_token')!)
          state.refreshes++
          return json(res, 200, issue(clientId, grant.scope, grant.login))
        }
        return json(res, 400, { error: 'unsupported_grant_type' })
      }
      if (p === '/mcp') {
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
        const token = bearer === undefined ? undefined : access.get(bearer)
        if (!token || token.expires < Date.now() || state.refuseAll) {
          res.writeHead(401, {
            'www-authenticate': `Bearer resource_metadata="${state.base}/.well-known/oauth-protected-resource/mcp", scope="${scopes.join(' ')}"`,
            'content-type': 'application/json',
          })
          return void res.end(JSON.stringify({ error: 'invalid_token' }))
        }
        const headers = new Headers()
        for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
          headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!)
        const body = req.method === 'POST' ? await readBody(req) : undefined
        const call =
          body === undefined ? undefined : (JSON.parse(body) as { method?: string; params?: { name?: string } })
        if (
          options.writeScope &&
          call?.method === 'tools/call' &&
          call.params?.name === 'write' &&
          !token.scope.split(' ').includes(options.writeScope)
        ) {
          res.writeHead(403, {
            'www-authenticate': `Bearer error="insufficient_scope", scope="${options.writeScope}", resource_metadata="${state.base}/.well-known/oauth-protected-resource/mcp"`,
            'content-type': 'application/json',
          })
          return void res.end(JSON.stringify({ error: 'insufficient_scope' }))
        }
        const id = req.headers['mcp-session-id']
        let transport = typeof id === 'string' ? sessions.get(id) : undefined
        if (!transport) {
          if (typeof id === 'string')
            return json(res, 404, { jsonrpc: '2.0', error: { code: -32000, message: 'Session not found' }, id: null })
          const created = new WebStandardStreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (sid) => void sessions.set(sid, created),
          })
          await mcpServer(options.writeScope !== undefined, token.login, state.asked).connect(created)
          transport = created
        }
        const response = await transport.handleRequest(
          new Request(url, { method: req.method ?? 'GET', headers, ...(body !== undefined ? { body } : {}) }),
        )
        res.writeHead(response.status, Object.fromEntries(response.headers))
        if (!response.body) return void res.end()
        res.flushHeaders()
        const stream = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream)
        res.once('close', () => stream.destroy())
        stream.on('error', () => res.end())
        return void stream.pipe(res)
      }
      json(res, 404, { error: 'not_found' })
    })().catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { error: 'server_error', error_description: String(error) })
      else res.end()
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  state.base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  state.mcpUrl = `${state.base}/mcp`
  state.close = async () => {
    for (const t of sessions.values()) await t.close().catch(() => {})
    http.closeAllConnections()
    await new Promise<void>((resolve) => http.close(() => resolve()))
  }
  return state
}

import { AsyncLocalStorage } from 'node:async_hooks'
import {
  createMcpHandler,
  type AuthInfo,
  type McpHttpHandler,
  type ServerEventBus,
  type Tool,
} from '@modelcontextprotocol/server'
import type { SubscriptionFilter } from '@modelcontextprotocol/client'
import type { Logger } from '../../logger.js'
import { credentialView, skillScope, type CredentialView } from './credential-view.js'
import type { PrincipalView } from '../../principal/view.js'
import type { Runtime } from '../../runtime/runtime.js'
import { ParkedCalls } from './parked-registry.js'
import type { ReadBody } from '../../http/http-era.js'
import type { TaskRegistry } from './task-registry.js'
import { listedTools } from '../../runtime/principal-tools.js'
import { statelessServer } from './stateless-server.js'
import { withHeaderTraceContext } from '../../http/trace-headers.js'
import { ListenStream, serverEventOf, visibleFilter } from './listen-stream.js'
import { childForUri } from '../../server/principal-requests.js'
import { isObject } from '../../protocol/facts.js'
import { checkParamHeaders, paramHeaderRefusal, paramHeadersOf, toolCallOf } from './param-headers.js'
import type { HttpPrincipal } from '../../http/principals.js'
import { HttpRpcCode, refusal, untilAnswered } from '../../http/responses.js'
import { withClientSignal, type InboundRequest } from '../../http/node-bridge.js'

/** subscriptions/listen streams one credential may hold open at once. */
const MAX_LISTENS_PER_CREDENTIAL = 16

/** Views kept at most (one per role and set of skills seen); the least recently used goes first. */
const MAX_VIEWS = 256

export interface StatelessRouteOptions {
  runtime: Runtime
  logger: Logger
  /** The view of a principal's role and skills; throws when it cannot be made (its role is gone). */
  viewFor(principal: HttpPrincipal): PrincipalView
  /** `limits.maxMessageBytes`. */
  maxMessageBytes: number
  /** True while shutting down: no new requests. */
  draining(): boolean
  /** Whether clients present credentials (`http.tokens`, `http.jwt`): only then is a skill not granted an OAuth step-up (403). */
  credentials: boolean
  /** With `http.jwt`: the RFC 9728 metadata URL the 403 challenge names (as the 401 does). */
  resourceMetadataUrl?: (url: URL) => string
  /** `ttlMs` of the lists (default MODERN_LIST_TTL_MS). */
  listTtlMs?: number
  /** The runtime's 2026 tasks (one registry per runtime, shared by all its faces, closed by whoever made it). */
  tasks: TaskRegistry
  /** `http.rateLimit` for the inner calls of run_code: one request of the credential with this key each; the refusal's text, or undefined. */
  chargeCall?: (key: string) => Promise<string | undefined>
}

/**
 * The 2026-07-28 route (docs/protocol-eras.md): stateless, no session, no
 * initialize; every request stands alone, served by the SDK's own modern
 * handler (`createMcpHandler`, strict: `legacy: 'reject'`, as the 2025
 * traffic never reaches it) with a server made per request for the
 * principal's view. That handler owns the 2026 wire: the envelope, the
 * `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` checks and their
 * -32020/-32021/-32022 answers, `server/discover`, `resultType`,
 * `ttlMs`/`cacheScope`, the per-request log level, the 403
 * `insufficient_scope` challenge, SSE when a call reports progress.
 *
 * The principal is the credential alone (the face decides it, as for the
 * session route): a view per role and skills, made once and kept, with
 * escalation taken out (credentialView), so tools/list is the same for
 * every request of a credential whatever those requests did. Called after
 * the face has checked host, origin, credential and rate limit.
 */
export class StatelessRoute {
  private readonly handler: McpHttpHandler
  private readonly views = new Map<string, CredentialView>()
  /** Calls waiting for their clients' input (a 2025 child asked during a 2026 request), found again by the retry's requestState. */
  private readonly parked: ParkedCalls
  private answering = 0
  private idle: Array<() => void> = []
  /** The listen a request being answered opens (its view and honoured filter), for the bus below. */
  private readonly opening = new AsyncLocalStorage<{
    view: CredentialView
    filter: SubscriptionFilter
    principal: string
    owner?: string
    opened?: true
  }>()
  /** Listen streams open now, per credential (at most MAX_LISTENS_PER_CREDENTIAL each). */
  private readonly listens = new Map<string, number>()
  /** Listen requests let through the cap whose stream is still opening, per credential: they count against it too. */
  private readonly pendingListens = new Map<string, number>()

  constructor(private readonly options: StatelessRouteOptions) {
    const { runtime, logger } = options
    const parked = (this.parked = new ParkedCalls(runtime))
    const { tasks } = options
    this.handler = createMcpHandler(
      async ({ authInfo }) => {
        const view = authInfo?.extra?.view as CredentialView | undefined
        if (!view) throw new Error('a 2026-era request reached the handler without its view')
        const owner = authInfo?.extra?.owner as string | undefined
        const key = authInfo?.extra?.key as string | undefined
        const charge = options.chargeCall
        return statelessServer({
          runtime,
          view,
          stepUp: options.credentials,
          parked,
          tasks,
          ...(owner !== undefined ? { owner } : {}),
          ...(charge && key !== undefined ? { chargeInnerCall: () => charge(key) } : {}),
          ...(options.listTtlMs !== undefined ? { listTtlMs: options.listTtlMs } : {}),
        })
      },
      {
        legacy: 'reject',
        maxRequestBodySize: options.maxMessageBytes,
        bus: this.listenBus(),
        onerror: (error) => logger.debug(`http (2026-07-28): ${error.message}`),
      },
    )
  }

  /**
   * subscriptions/listen: the SDK's listen router serves the stream (the
   * header and envelope checks, the acknowledgement first, the
   * subscription id on every notification, keep-alives, the graceful close
   * on shutdown, teardown when the client goes), and this bus is where its
   * events come from. Not a bus that broadcasts: one handler serves every
   * credential, and a broadcast bus cannot tell one principal's streams
   * from another's, nor tell myc which resources a stream asked for (its
   * children must be asked for them, and let go of when the stream ends).
   * So the router's subscribe() of each stream (made while that stream's
   * request is being answered, found by AsyncLocalStorage) opens a
   * ListenStream for that request's view and filter, which hears of the
   * runtime's changes as a connection and feeds this stream only; the
   * router's unsubscribe (the client went, or shutdown) closes it. The
   * filter the router honours is the one handle() made: the resources the
   * view cannot see are already left out of it.
   */
  private listenBus(): ServerEventBus {
    const { runtime } = this.options
    return {
      // Nothing is published to every stream: each ListenStream feeds its own.
      publish: () => {},
      subscribe: (listener) => {
        const opening = this.opening.getStore()
        if (!opening || opening.opened) return () => {}
        opening.opened = true
        const { principal } = opening
        this.listens.set(principal, (this.listens.get(principal) ?? 0) + 1)
        const stream = new ListenStream({
          runtime,
          view: opening.view,
          filter: opening.filter,
          ...(opening.owner !== undefined ? { owner: opening.owner } : {}),
          deliver: (n) => listener(serverEventOf(n)),
        })
        // Outside the request's context: what opening starts (a child's listen, its reconnections) outlives the request.
        this.opening.exit(() => stream.open())
        let closed = false
        return () => {
          if (closed) return
          closed = true
          stream.close()
          const left = (this.listens.get(principal) ?? 1) - 1
          if (left > 0) this.listens.set(principal, left)
          else this.listens.delete(principal)
        }
      },
    }
  }

  /**
   * A subscriptions/listen request's filter as the view may have it
   * honoured (the resources it cannot see left out: nothing about them
   * leaks, not even in the acknowledgement); undefined for anything else,
   * or a filter of the wrong shape (the SDK answers that).
   */
  private async listenFilter(view: CredentialView, body: unknown): Promise<SubscriptionFilter | undefined> {
    if (!isObject(body) || body.method !== 'subscriptions/listen' || !('id' in body) || !isObject(body.params))
      return undefined
    const { runtime } = this.options
    // The resources are those of the servers it reaches, lazy ones included (as a list request starts them).
    await runtime.startLazy((s) => view.serverVisible(s))
    return visibleFilter(body.params.notifications, (uri) => childForUri(runtime, view, uri) !== undefined)
  }

  /** subscriptions/listen streams open now (all credentials). */
  get listenStreams(): number {
    let n = 0
    for (const count of this.listens.values()) n += count
    return n
  }

  /** Requests being answered now (their answers still streaming included). */
  get inFlight(): number {
    return this.answering
  }

  /**
   * Answers one 2026-era request of `principal`. `read` is the POST body as
   * the face read it to tell the era (parsed: a request reaches this route
   * only so); the request's own body is not read again. `release` gives
   * back the request's place among its credential's requests in flight,
   * which a listen stream does not keep.
   */
  async handle(
    inbound: InboundRequest,
    principal: HttpPrincipal,
    read: ReadBody,
    release?: () => void,
  ): Promise<Response> {
    const body = read.parsed ? read.value : undefined
    if (this.options.draining())
      return refusal(503, HttpRpcCode.server, 'Service Unavailable: mycelium is shutting down', { 'Retry-After': '5' })
    let view: CredentialView
    try {
      view = this.viewOf(principal)
    } catch (error) {
      this.options.logger.warn(
        `http: no view for ${principal.label}: ${error instanceof Error ? error.message : String(error)}`,
      )
      return refusal(403, HttpRpcCode.server, `Forbidden: ${error instanceof Error ? error.message : String(error)}`)
    }
    const url = new URL(inbound.request.url)
    const granted = view.describe?.().activeSkills.map((s) => skillScope(s.name)) ?? []
    const metadata = this.options.resourceMetadataUrl?.(url)
    // Never the token itself: nothing past this point needs it, and a child must never see it.
    const authInfo: AuthInfo = {
      token: '',
      clientId: principal.key,
      scopes: granted,
      extra: { view, key: principal.key, ...(principal.owner !== undefined ? { owner: principal.owner } : {}) },
      ...(metadata ? { resourceMetadataUrl: metadata } : {}),
    }
    const listen = await this.listenFilter(view, body)
    if (listen) {
      // A listen stream is no call in flight (it lasts until the client or shutdown ends it): not counted, closed by close().
      release?.()
      return this.openListen(inbound, principal.key, { view, filter: listen, authInfo, body })
    }
    this.answering++
    let done = false
    const finish = () => {
      if (done) return
      done = true
      if (--this.answering === 0) for (const resolve of this.idle.splice(0)) resolve()
    }
    try {
      const mismatch = await this.paramHeaderMismatch(inbound.request, view, body)
      // Tracing on: the traceparent header is the request's parent when its _meta names none.
      const parsedBody = this.options.runtime.tracing?.propagates
        ? withHeaderTraceContext(body, inbound.request.headers)
        : body
      const response = mismatch ?? (await this.handler.fetch(withClientSignal(inbound), { authInfo, parsedBody }))
      return untilAnswered(inbound, response, finish)
    } catch (error) {
      finish()
      throw error
    }
  }

  /**
   * SEP-2243: a tools/call's `Mcp-Param-*` headers against the arguments its
   * tool marks `x-mcp-header` (param-headers.ts). The SDK checks only
   * tools registered on its McpServer, and myc's are not. The tool is one the
   * credential sees: a hidden or unknown one is left to tools/call, which
   * answers it as one that does not exist.
   */
  /**
   * Opens a subscriptions/listen stream, at most MAX_LISTENS_PER_CREDENTIAL
   * per credential (the SDK's cap is for all of them together). A request
   * let through holds its place from the check until its stream is counted,
   * so that a burst of them cannot all pass the check at once.
   */
  private async openListen(
    inbound: InboundRequest,
    key: string,
    opening: { view: CredentialView; filter: SubscriptionFilter; authInfo: AuthInfo; body: unknown },
  ): Promise<Response> {
    const open = (this.listens.get(key) ?? 0) + (this.pendingListens.get(key) ?? 0)
    if (open >= MAX_LISTENS_PER_CREDENTIAL)
      return refusal(
        429,
        HttpRpcCode.server,
        `Too Many Requests: this credential has ${open} subscriptions/listen streams open, the most one may; close one first`,
      )
    this.pendingListens.set(key, (this.pendingListens.get(key) ?? 0) + 1)
    const params = (opening.body as { params: Record<string, unknown> }).params
    const parsedBody = {
      ...(opening.body as Record<string, unknown>),
      params: { ...params, notifications: opening.filter },
    }
    try {
      const owner = opening.authInfo.extra?.owner as string | undefined
      const store = {
        view: opening.view,
        filter: opening.filter,
        principal: key,
        ...(owner !== undefined ? { owner } : {}),
      }
      return await this.opening.run(store, () =>
        this.handler.fetch(withClientSignal(inbound), { authInfo: opening.authInfo, parsedBody }),
      )
    } finally {
      const left = (this.pendingListens.get(key) ?? 1) - 1
      if (left > 0) this.pendingListens.set(key, left)
      else this.pendingListens.delete(key)
    }
  }

  private async paramHeaderMismatch(
    request: Request,
    view: CredentialView,
    body: unknown,
  ): Promise<Response | undefined> {
    const call = toolCallOf(body)
    if (!call) return undefined
    await this.options.runtime.whenStarted()
    const tool = listedTools(this.options.runtime, view).find((t) => (t as Tool).name === call.name) as Tool | undefined
    const declared = tool && paramHeadersOf(tool.inputSchema)
    const check = declared && checkParamHeaders(declared, call.args, request.headers)
    if (!check || check.ok) return undefined
    this.options.logger.debug(`http (2026-07-28): ${check.header} refused (${check.kind}) for tools/call ${call.name}`)
    return paramHeaderRefusal(check, call.id)
  }

  /**
   * The view of a principal's role and skills: made once, then the same for
   * every request that presents them (whoever presents them: what a 2026
   * request sees is a function of its authorization, nothing else).
   */
  private viewOf(principal: HttpPrincipal): CredentialView {
    const key = JSON.stringify([principal.role ?? null, [...new Set(principal.skills ?? [])].sort()])
    let view = this.views.get(key)
    if (view) {
      // Most recently used last.
      this.views.delete(key)
      this.views.set(key, view)
      return view
    }
    view = credentialView(this.options.viewFor(principal), this.options.runtime.loaded.config.namespace)
    this.views.set(key, view)
    if (this.views.size > MAX_VIEWS) this.views.delete(this.views.keys().next().value!)
    return view
  }

  /** Resolves once no request is being answered, or after `ms`: true when none was left. */
  drained(ms: number): Promise<boolean> {
    if (this.answering === 0) return Promise.resolve(true)
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.answering === 0), ms)
      timer.unref?.()
      this.idle.push(() => {
        clearTimeout(timer)
        resolve(true)
      })
    })
  }

  /** Ends the requests still being answered. */
  close(): Promise<void> {
    this.parked.close()
    return this.handler.close()
  }
}

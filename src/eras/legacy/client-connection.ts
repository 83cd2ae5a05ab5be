import { Server, ProtocolError } from '@modelcontextprotocol/server'
import type {
  ClientCapabilities,
  JSONRPCNotification,
  LoggingLevel,
  RequestId,
  Transport,
} from '@modelcontextprotocol/client'
import { InterceptTransport } from '../../protocol/intercept-transport.js'
import type { Cancellation } from '../../protocol/cancellation.js'
import type { RelayOutcome } from '../../protocol/request-relay.js'
import type { Runtime, ConnectionHandle, CallOrigin } from '../../runtime/runtime.js'
import { decodeCursor, ListPages, listAnswer, paginate } from '../../server/pagination.js'
import type { CallerEra } from '../../children/child-session.js'
import { coreTasksCapability } from './core-tasks.js'
import { SessionTasks } from './session-tasks.js'
import { askClient, canAnswer, elicitOf } from './client-asks.js'
import { registerSkillHandlers, type SkillSources } from '../../server/skills-handlers.js'
import { serverCapabilities } from '../../server/server-capabilities.js'
import {
  childForUri,
  completeVisible,
  getVisiblePrompt,
  instructionsFor,
  readVisibleResource,
  skillSourcesFor,
  tracedList,
  visiblePrompts,
  visibleResources,
  visibleTemplates,
  visibleList,
} from '../../server/principal-requests.js'
import { UpstreamRelay, type ForwardContext, type ForwardHandler } from '../../protocol/upstream-relay.js'
import { callVisibleTool, listedTools, type ToolCallContext } from '../../runtime/principal-tools.js'
import type { PrincipalView } from '../../principal/view.js'
import { SeenLists, type ListKindName } from '../../principal/seen-lists.js'
import { SessionAsks, type AskedState } from './session-asks.js'
import { RpcCode, isObject } from '../../protocol/facts.js'

export interface ClientConnectionOptions {
  runtime: Runtime
  view: PrincipalView
  /** Entries per page of myc's own list answers. */
  pageSize?: number
  /** Whose own OAuth logins its calls use (an HTTP principal's name: runtime/principal-tools.ts). */
  owner?: string
  /** Its HTTP session's id (2025 era), for its spans. */
  sessionId?: string
}

/**
 * What each forwarded request of a connection carries down to the child: who
 * calls (for the child's own requests during it), in what era, what a
 * built-in may use, and the connection itself (`self`: the one table of
 * forwarded methods serves every connection).
 */
type CallContext = ForwardContext &
  ToolCallContext & { caller: CallOrigin; callerEra: CallerEra; self: ClientConnection }

/** What a list method of myc's own needs of the capabilities (none: always served). */
type ListNeeds = 'prompts' | 'resources' | undefined

/** Answers one request of myc's own (a list, a subscription, the log level) for a connection. */
type OwnRequest = (connection: ClientConnection, params: Record<string, unknown>) => Promise<Record<string, unknown>>

/**
 * One client connected to myc: an SDK Server for the handshake and (through
 * its fallback handler) the list methods, and an UpstreamRelay for the
 * forwarded hot path; both answer from tables shared by every connection.
 * What the client sees is computed per request from the principal's view.
 */
export class ClientConnection implements ConnectionHandle {
  private srv: Server | undefined
  private readonly relay: UpstreamRelay<CallContext>
  private transport: InterceptTransport | undefined
  /** What the client asked outside its calls: subscriptions and the log level (session-asks.ts). */
  private readonly asks: SessionAsks
  private readonly pageSize: number
  private unsubscribeView: (() => void) | undefined
  private closed = false
  /** Called once when the client goes away. */
  onclose?: () => void
  /** Called when what a shared session store keeps changes: subscriptions, log level. */
  onstatechange?: () => void

  /** The 2025 core tasks this connection's calls created (session-tasks.ts), made at its first task. */
  private taskTable: SessionTasks | undefined

  /**
   * The forwarded methods, one table for every connection (a session holds
   * no handlers of its own): each forwarded call names its caller, so that
   * what the child asks during it comes back here (Runtime.originOf).
   */
  private static readonly forwarded: ReadonlyMap<string, ForwardHandler<CallContext>> = new Map<
    string,
    ForwardHandler<CallContext>
  >([
    ['tools/call', (params, ctx) => ctx.self.callTool(params, ctx)],
    ['prompts/get', (params, ctx) => ctx.self.getPrompt(params, ctx)],
    ['resources/read', (params, ctx) => ctx.self.readResource(params, ctx)],
    ['completion/complete', (params, ctx) => ctx.self.complete(params, ctx)],
    // Tasks (2025-11-25): routed to the child that created them through this connection.
    ['tasks/get', (params, ctx) => ctx.self.tasks.route('tasks/get', params, ctx)],
    ['tasks/result', (params, ctx) => ctx.self.tasks.route('tasks/result', params, ctx)],
    ['tasks/cancel', (params, ctx) => ctx.self.tasks.route('tasks/cancel', params, ctx)],
    ['tasks/list', (_params, ctx) => ctx.self.tasks.list(ctx)],
  ])

  constructor(private readonly options: ClientConnectionOptions) {
    const { runtime } = options
    this.pageSize = options.pageSize ?? 1_000
    this.seen = new SeenLists((kind) => visibleList(runtime, options.view, kind))
    this.asks = new SessionAsks(
      runtime,
      this,
      (uri) => this.childForUri(uri),
      () => this.onstatechange?.(),
    )
    this.relay = new UpstreamRelay<CallContext>(
      (message, sendOptions) => this.transport!.send(message, sendOptions),
      ClientConnection.forwarded,
      (error) => runtime.logger.debug(`relay: ${String(error)}`),
      (requestId, cancellation, onProgress) => this.calledBy(requestId, cancellation, onProgress),
    )
  }

  /** The connection's core tasks: made at the first task-augmented call or tasks/* request. */
  private get tasks(): SessionTasks {
    return (this.taskTable ??= new SessionTasks({
      runtime: this.options.runtime,
      view: this.options.view,
      clientCapabilities: () => this.clientCapabilities,
      ask: (server, method, params, signal, related) => this.forwardRequest(server, method, params, signal, related),
      tell: (params) => this.notify('notifications/tasks/status', params),
    }))
  }

  /** What a span of this connection's requests says of it: the revision it negotiated, and its HTTP session. */
  private spanCaller(): { protocolVersion?: string; sessionId?: string } {
    const protocolVersion = this.srv?.getNegotiatedProtocolVersion()
    return {
      ...(protocolVersion ? { protocolVersion } : {}),
      ...(this.options.sessionId !== undefined ? { sessionId: this.options.sessionId } : {}),
    }
  }

  /** A list this connection answers from the catalogue, as a SERVER span when tracing. */
  private tracedList<T>(
    method: string,
    params: Record<string, unknown> | undefined,
    list: () => T | Promise<T>,
  ): Promise<T> {
    return tracedList(this.options.runtime, this.view, method, params, list, this.spanCaller())
  }

  private calledBy(
    requestId: RequestId,
    cancellation: Cancellation,
    onProgress: ForwardContext['onProgress'],
  ): CallContext {
    // On every forwarded request: a literal and plain assignments, no spreads (they made this the costliest function of a relayed call).
    const ctx: CallContext = {
      requestId,
      cancellation,
      onProgress,
      caller: { connection: this, requestId },
      callerEra: this.callerEra(),
      self: this,
      builtin: () => ({ signal: cancellation.signal, elicit: elicitOf(this.server, requestId) }),
    }
    const protocolVersion = this.srv?.getNegotiatedProtocolVersion()
    if (protocolVersion) ctx.protocolVersion = protocolVersion
    if (this.options.sessionId !== undefined) ctx.sessionId = this.options.sessionId
    if (this.options.owner !== undefined) ctx.owner = ctx.principalName = this.options.owner
    return ctx
  }

  /** What a modern child is told of this client: a 2025 caller that declared what it declared (made once, after initialize; the hot path reuses it). */
  private era: { for: ClientCapabilities | undefined; era: CallerEra } | undefined
  private callerEra(): CallerEra {
    // A modern child asks (input_required) only what this client declared: the bridge asks it the 2025 way.
    const clientCapabilities = this.clientCapabilities
    if (!this.era || this.era.for !== clientCapabilities)
      this.era = {
        for: clientCapabilities,
        era: { era: 'legacy', ...(clientCapabilities ? { clientCapabilities } : {}) },
      }
    return this.era.era
  }

  /** The SDK server; exists once connect() has begun talking to the client. */
  get server(): Server {
    if (!this.srv) throw new ProtocolError(RpcCode.internalError, 'No MCP client is connected to mycelium yet')
    return this.srv
  }

  private get view(): PrincipalView {
    return this.options.view
  }

  /**
   * myc's own requests (lists, subscriptions, log level), one table for every
   * connection, answered by the SDK Server's fallback handler: a Server holds
   * no handler of its own for them (the SDK wraps each handler set on it
   * twice, ~400 bytes a session; docs/benchmarks.md). Their params were
   * checked on the way in (protocol/params-check.ts); a list whose
   * capability the connection lacks is not found, as an unset method is.
   */
  private static readonly own: ReadonlyMap<string, { needs: ListNeeds; answer: OwnRequest }> = new Map([
    ['tools/list', { needs: undefined, answer: (c, params) => c.listTools(params) }],
    ['prompts/list', { needs: 'prompts', answer: (c, params) => c.listPrompts(params) }],
    ['resources/list', { needs: 'resources', answer: (c, params) => c.listResources(params) }],
    ['resources/templates/list', { needs: 'resources', answer: (c, params) => c.listTemplates(params) }],
    ['resources/subscribe', { needs: 'resources', answer: (c, params) => c.asks.subscribe(String(params.uri)) }],
    ['resources/unsubscribe', { needs: 'resources', answer: (c, params) => c.asks.unsubscribe(String(params.uri)) }],
    ['logging/setLevel', { needs: undefined, answer: (c, params) => c.asks.setLogLevel(params.level as LoggingLevel) }],
  ] satisfies Array<[string, { needs: ListNeeds; answer: OwnRequest }]>)

  /** A request of myc's own (ClientConnection.own), or not found. */
  private answerOwn(method: string, params: Record<string, unknown> | undefined): Promise<Record<string, unknown>> {
    const own = ClientConnection.own.get(method)
    if (!own || (own.needs !== undefined && !this.server.getCapabilities()[own.needs]))
      throw new ProtocolError(RpcCode.methodNotFound, 'Method not found')
    return own.answer(this, params ?? {})
  }

  private registerHandlers(): void {
    const { server } = this
    // The SDK sets its own logging/setLevel for a server with logging; myc's (ClientConnection.own) answers instead.
    server.removeRequestHandler('logging/setLevel')
    server.fallbackRequestHandler = (request) => this.answerOwn(request.method, request.params)
    server.fallbackNotificationHandler = async (notification) => {
      if (notification.method === 'notifications/roots/list_changed') void this.options.runtime.rootsChanged()
    }
    if ((this.server.getCapabilities() as { extensions?: unknown }).extensions)
      registerSkillHandlers(server, this.skillSources(), this.pageSize)
    server.oninitialized = () => {
      // Children asked for roots before a client was there; let them ask again.
      if (this.clientHasRoots) void this.options.runtime.rootsChanged()
    }
  }

  private listTools(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.tracedList('tools/list', params, async () => {
      this.options.runtime.touch(this)
      await this.options.runtime.startLazy((s) => this.view.serverVisible(s))
      const tools = this.visibleTools()
      const offset = decodeCursor(params.cursor, 'tools')
      // The same visible list (a cached array) gives the same page, serialized once over stdio.
      return (this.toolPages ??= new ListPages()).page([tools], offset, () => {
        const page = paginate(tools, offset, this.pageSize, 'tools')
        return { tools: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }
      })
    })
  }

  private listPrompts(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.tracedList('prompts/list', params, async () => {
      await this.options.runtime.startLazy((s) => this.view.serverVisible(s))
      const visible = visiblePrompts(this.options.runtime, this.view)
      return listAnswer(visible, params.cursor, this.pageSize, 'prompts', 'prompts')
    })
  }

  private listResources(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.tracedList('resources/list', params, async () => {
      await this.options.runtime.startLazy((s) => this.view.serverVisible(s))
      const visible = visibleResources(this.options.runtime, this.view)
      return listAnswer(visible, params.cursor, this.pageSize, 'resources', 'resources')
    })
  }

  private listTemplates(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.tracedList('resources/templates/list', params, () => {
      const visible = visibleTemplates(this.options.runtime, this.view)
      return listAnswer(visible, params.cursor, this.pageSize, 'templates', 'resourceTemplates')
    })
  }

  /** This principal's skill sources: myc's own, and the visible children's. */
  private skillSources(): SkillSources {
    return skillSourcesFor(this.options.runtime, this.view)
  }

  /** The pages of tools/list as last served (made at the first list). */
  private toolPages: ListPages | undefined

  /** The wire tools this principal sees (one list cache for every face: runtime/principal-tools.ts). */
  private visibleTools(): readonly unknown[] {
    return listedTools(this.options.runtime, this.view)
  }

  private childForUri(uri: string) {
    return childForUri(this.options.runtime, this.view, uri)
  }

  /** No async frame (every relayed call passes here): the answer goes on in one promise reaction. */
  private callTool(params: Record<string, unknown> | undefined, ctx: CallContext): Promise<RelayOutcome | undefined> {
    this.options.runtime.touch(this)
    return callVisibleTool(this.options.runtime, this.view, params ?? {}, ctx).then((called) => {
      if (!called || ctx.cancellation.aborted) return undefined
      // A task-augmented call answers with a task: later tasks/* requests go to this child.
      if (called.outcome.ok && called.outcome.result.task !== undefined) this.tasks.called(called.outcome, called.child)
      return called.outcome
    })
  }

  private getPrompt(params: Record<string, unknown> | undefined, ctx: CallContext): Promise<RelayOutcome | undefined> {
    return getVisiblePrompt(this.options.runtime, this.view, params, ctx)
  }

  private readResource(
    params: Record<string, unknown> | undefined,
    ctx: CallContext,
  ): Promise<RelayOutcome | undefined> {
    return readVisibleResource(this.options.runtime, this.view, params, ctx)
  }

  private complete(params: Record<string, unknown> | undefined, ctx: CallContext): Promise<RelayOutcome | undefined> {
    return completeVisible(this.options.runtime, this.view, params, ctx)
  }

  /** What a shared session store keeps of this connection: resource subscriptions and the log level. */
  get sessionState(): AskedState {
    return this.asks.state
  }

  /** Takes back a session's state kept by another process (a session moved between replicas): session-asks.ts. */
  restoreSessionState(state: { subscriptions: readonly string[]; logLevel?: LoggingLevel }): Promise<void> {
    return this.asks.restore(state)
  }

  /** Connects to the client over the given transport (stdio, HTTP, in-memory). */
  async connect(transport: Transport): Promise<void> {
    const { runtime } = this.options
    // The client's initialize is read at once: its capabilities are what the
    // children are offered, and they initialize only then. myc's own
    // capabilities and instructions come from the children, so the handshake
    // waits (bounded) for their first start; the client's messages wait in
    // the transport until then.
    this.transport = new InterceptTransport(transport, this.relay.intercept)
    await this.transport.listen({
      peek: (message) => {
        const m = message as { method?: unknown; params?: { capabilities?: unknown } }
        if (m.method === 'initialize' && isObject(m.params?.capabilities))
          runtime.offerClientCapabilities(m.params.capabilities as ClientCapabilities)
      },
      // The client left without initializing: no client, nothing to offer, no reason to wait.
      closed: () => runtime.offerClientCapabilities({}),
    })
    await runtime.whenStarted()
    // Closed while waiting (an HTTP session refused or ended at once): never join the runtime.
    if (this.closed) return
    this.srv = new Server(
      { name: 'mycelium', version: runtime.deps.version },
      {
        capabilities: serverCapabilities(
          this.options.runtime,
          this.view,
          coreTasksCapability(this.options.runtime, this.view),
        ),
        instructions: instructionsFor(this.options.runtime, this.view),
      },
    )
    this.registerHandlers()
    runtime.addConnection(this)
    this.seen.rememberAll()
    // An escalation changes what exists for this principal: tools, and the prompts and resources of the servers it reaches.
    this.unsubscribeView = this.view.onChange(() => this.catalogueChanged(new Set(['tools', 'prompts', 'resources'])))
    this.server.onclose = () => this.dispose()
    await this.server.connect(this.transport)
  }

  private dispose(): void {
    if (this.closed) return
    this.closed = true
    this.relay.abortAll()
    this.taskTable?.close()
    this.unsubscribeView?.()
    this.options.runtime.removeConnection(this)
    this.onclose?.()
  }

  async close(): Promise<void> {
    await this.srv?.close().catch(() => {})
    this.dispose()
  }

  /** Sends a notification; `related` keeps it on the stream of that client request (Streamable HTTP). */
  private notify(method: string, params?: Record<string, unknown>, related?: RequestId): void {
    if (this.closed || !this.transport) return
    const message = params ? { jsonrpc: '2.0' as const, method, params } : { jsonrpc: '2.0' as const, method }
    void this.transport.send(message, related !== undefined ? { relatedRequestId: related } : undefined).catch(() => {})
  }

  // ConnectionHandle
  get clientCapabilities(): ClientCapabilities | undefined {
    return this.srv?.getClientCapabilities()
  }
  get clientHasRoots(): boolean {
    return Boolean(this.srv?.getClientCapabilities()?.roots)
  }
  /** Its person and HTTP session, for the instances of scoped servers (runtime/instance-routing.ts). */
  get who(): { owner?: string; sessionId?: string } {
    return this.options
  }

  reaches(server: string): boolean {
    return this.view.serverVisible(server)
  }

  /**
   * A list may have changed: the client hears of it only when what it can
   * see did change (a server it cannot reach changing its tools is none of
   * its business, and telling it would leak that the server exists).
   */
  catalogueChanged(kinds: ReadonlySet<ListKindName>): void {
    const caps = this.server.getCapabilities()
    if (kinds.has('tools') && this.seen.changed('tools')) this.notify('notifications/tools/list_changed')
    if (kinds.has('prompts') && caps.prompts && this.seen.changed('prompts'))
      this.notify('notifications/prompts/list_changed')
    if (kinds.has('resources') && caps.resources && this.seen.changed('resources'))
      this.notify('notifications/resources/list_changed')
  }

  /** What the client last heard of each list it sees (src/principal/seen-lists.ts). */
  private readonly seen: SeenLists

  childNotification(server: string, notification: JSONRPCNotification, related?: RequestId): void {
    if (!this.view.serverVisible(server)) return
    const params = (notification.params ?? {}) as Record<string, unknown>
    switch (notification.method) {
      case 'notifications/message':
        if (this.asks.logLevel === undefined && !this.server.getCapabilities().logging) return
        this.notify('notifications/message', { ...params, logger: server }, related)
        return
      case 'notifications/resources/updated':
        if (typeof params.uri === 'string' && this.asks.subscribed(params.uri))
          this.notify('notifications/resources/updated', params)
        return
      case 'notifications/tasks/status':
        this.taskTable?.told(server, params)
        return
      default:
        // An instance's list change (a scoped server's, docs/team.md), told only to its person's or session's connections.
        if (notification.method.endsWith('/list_changed')) this.notify(notification.method)
    }
  }

  canAnswer(method: string, params: Record<string, unknown> | undefined): boolean {
    return canAnswer(this.srv?.getClientCapabilities(), method, params)
  }

  async forwardRequest(
    server: string,
    method: string,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
    related?: RequestId,
  ): Promise<Record<string, unknown>> {
    // this.server throws while no client is connected: a rejection, as every refusal here.
    return askClient(this.server, server, method, params, signal, related)
  }
}

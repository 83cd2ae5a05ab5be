import { Server, ProtocolError } from '@modelcontextprotocol/server'
import type {
  ClientCapabilities,
  JSONRPCNotification,
  LoggingLevel,
  RequestId,
  Transport,
} from '@modelcontextprotocol/client'
import { InterceptTransport } from '../../protocol/intercept-transport.js'
import { passthrough } from '../../protocol/passthrough.js'
import type { Cancellation } from '../../protocol/cancellation.js'
import type { RelayOutcome } from '../../protocol/request-relay.js'
import type { Runtime, ConnectionHandle, CallOrigin } from '../../runtime/runtime.js'
import { decodeCursor, ListPages, paginate } from '../../server/pagination.js'
import type { CallerEra } from '../../children/child-session.js'
import { coreTasksCapability } from './core-tasks.js'
import { SessionTasks } from './session-tasks.js'
import { askClient, canAnswer } from './client-asks.js'
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
import { unwatchResource, watchResource } from '../../server/resource-watch.js'
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

/** What each forwarded request of a connection carries down to the child: who calls (for the child's own requests during it), in what era, and what a built-in may use. */
type CallContext = ForwardContext & ToolCallContext & { caller: CallOrigin; callerEra: CallerEra }

/**
 * One client connected to myc: an SDK Server for the handshake and the list
 * methods, and an UpstreamRelay for the forwarded hot path. What the client
 * sees is computed per request from the principal's view.
 */
export class ClientConnection implements ConnectionHandle {
  private srv: Server | undefined
  private readonly relay: UpstreamRelay<CallContext>
  private transport: InterceptTransport | undefined
  private readonly subscriptions = new Set<string>()
  private logLevel: LoggingLevel | undefined
  private readonly pageSize: number
  private unsubscribeView: (() => void) | undefined
  private closed = false
  /** Called once when the client goes away. */
  onclose?: () => void
  /** Called when what a shared session store keeps changes: subscriptions, log level. */
  onstatechange?: () => void

  /** The 2025 core tasks this connection's calls created (session-tasks.ts). */
  private readonly tasks: SessionTasks

  constructor(private readonly options: ClientConnectionOptions) {
    const { runtime } = options
    this.tasks = new SessionTasks({
      runtime,
      view: options.view,
      clientCapabilities: () => this.clientCapabilities,
      ask: (server, method, params, signal, related) => this.forwardRequest(server, method, params, signal, related),
    })
    this.pageSize = options.pageSize ?? 1_000
    this.seen = new SeenLists((kind) => visibleList(runtime, options.view, kind))
    // Each forwarded call names its caller, so that what the child asks during it comes back here (Runtime.originOf).
    const handlers = new Map<string, ForwardHandler<CallContext>>([
      ['tools/call', (params, ctx) => this.callTool(params, ctx)],
      ['prompts/get', (params, ctx) => this.getPrompt(params, ctx)],
      ['resources/read', (params, ctx) => this.readResource(params, ctx)],
      ['completion/complete', (params, ctx) => this.complete(params, ctx)],
      // Tasks (2025-11-25): routed to the child that created them through this connection.
      ['tasks/get', (params, ctx) => this.tasks.route('tasks/get', params, ctx)],
      ['tasks/result', (params, ctx) => this.tasks.route('tasks/result', params, ctx)],
      ['tasks/cancel', (params, ctx) => this.tasks.route('tasks/cancel', params, ctx)],
      ['tasks/list', (_params, ctx) => this.tasks.list(ctx)],
    ])
    this.relay = new UpstreamRelay<CallContext>(
      (message, sendOptions) => this.transport!.send(message, sendOptions),
      handlers,
      (error) => runtime.logger.debug(`relay: ${String(error)}`),
      (requestId, cancellation, onProgress) => this.calledBy(requestId, cancellation, onProgress),
    )
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
      builtin: () => ({ signal: cancellation.signal, elicit: this.elicitFn(requestId) }),
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

  private instructions(): string | undefined {
    return instructionsFor(this.options.runtime, this.view)
  }

  private registerHandlers(): void {
    const { server } = this
    server.setRequestHandler('tools/list', (request) =>
      this.tracedList('tools/list', request.params, async () => {
        this.options.runtime.touch(this)
        await this.options.runtime.startLazy((s) => this.view.serverVisible(s))
        const tools = this.visibleTools()
        const offset = decodeCursor(request.params?.cursor, 'tools')
        // The same visible list (a cached array) gives the same page, serialized once over stdio.
        return this.toolPages.page([tools], offset, () => {
          const page = paginate(tools, offset, this.pageSize, 'tools')
          return { tools: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }
        }) as never
      }),
    )
    if (this.server.getCapabilities().prompts) {
      server.setRequestHandler('prompts/list', (request) =>
        this.tracedList('prompts/list', request.params, async () => {
          await this.options.runtime.startLazy((s) => this.view.serverVisible(s))
          const visible = visiblePrompts(this.options.runtime, this.view)
          const page = paginate(visible, decodeCursor(request.params?.cursor, 'prompts'), this.pageSize, 'prompts')
          return { prompts: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) } as never
        }),
      )
    }
    if (this.server.getCapabilities().resources) {
      server.setRequestHandler('resources/list', (request) =>
        this.tracedList('resources/list', request.params, async () => {
          await this.options.runtime.startLazy((s) => this.view.serverVisible(s))
          const visible = visibleResources(this.options.runtime, this.view)
          const page = paginate(visible, decodeCursor(request.params?.cursor, 'resources'), this.pageSize, 'resources')
          return { resources: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) } as never
        }),
      )
      server.setRequestHandler('resources/templates/list', (request) =>
        this.tracedList('resources/templates/list', request.params, () => {
          const visible = visibleTemplates(this.options.runtime, this.view)
          const page = paginate(visible, decodeCursor(request.params?.cursor, 'templates'), this.pageSize, 'templates')
          return { resourceTemplates: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) } as never
        }),
      )
      server.setRequestHandler('resources/subscribe', async (request) => {
        const uri = request.params.uri
        const child = this.childForUri(uri)
        if (!child) throw new ProtocolError(RpcCode.invalidParams, `Resource not found: ${uri}`)
        // A 2026 child has no resources/subscribe: its subscriptions/listen asks for the resource instead.
        await watchResource(this.options.runtime, this, child, uri)
        this.subscriptions.add(uri)
        this.onstatechange?.()
        return {}
      })
      server.setRequestHandler('resources/unsubscribe', async (request) => {
        const uri = request.params.uri
        this.subscriptions.delete(uri)
        this.onstatechange?.()
        await unwatchResource(this.options.runtime, this, this.childForUri(uri), uri)
        return {}
      })
    }
    if ((this.server.getCapabilities() as { extensions?: unknown }).extensions)
      registerSkillHandlers(server, this.skillSources(), this.pageSize)
    server.setRequestHandler('logging/setLevel', async (request) => {
      this.logLevel = request.params.level
      this.onstatechange?.()
      await Promise.all(
        [...this.options.runtime.supervisor.children.values()]
          .filter((c) => c.state === 'RUNNING' && c.capabilities?.logging && this.view.serverVisible(c.key))
          .map((c) => c.request('logging/setLevel', { level: request.params.level }).catch(() => {})),
      )
      return {}
    })
    server.setNotificationHandler('notifications/roots/list_changed', () => {
      void this.options.runtime.rootsChanged()
    })
    server.oninitialized = () => {
      // Children asked for roots before a client was there; let them ask again.
      if (this.clientHasRoots) void this.options.runtime.rootsChanged()
    }
  }

  /** This principal's skill sources: myc's own, and the visible children's. */
  private skillSources(): SkillSources {
    return skillSourcesFor(this.options.runtime, this.view)
  }

  private readonly toolPages = new ListPages()

  /** The wire tools this principal sees (one list cache for every face: runtime/principal-tools.ts). */
  private visibleTools(): readonly unknown[] {
    return listedTools(this.options.runtime, this.view)
  }

  isSubscribed(uri: string): boolean {
    return this.subscriptions.has(uri)
  }

  private childForUri(uri: string) {
    return childForUri(this.options.runtime, this.view, uri)
  }

  private async callTool(
    params: Record<string, unknown> | undefined,
    ctx: CallContext,
  ): Promise<RelayOutcome | undefined> {
    this.options.runtime.touch(this)
    const called = await callVisibleTool(this.options.runtime, this.view, params ?? {}, ctx)
    if (!called || ctx.cancellation.aborted) return undefined
    // A task-augmented call answers with a task: later tasks/* requests go to this child.
    this.tasks.called(called.outcome, called.server)
    return called.outcome
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

  /** Elicitation for a built-in, asked on the stream of the client's request `related`. */
  private elicitFn(
    related: RequestId,
  ):
    | ((
        message: string,
        requestedSchema: Record<string, unknown>,
      ) => Promise<{ action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }>)
    | undefined {
    if (!this.server.getClientCapabilities()?.elicitation) return undefined
    return async (message, requestedSchema) => {
      const result = await this.server.request(
        { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema } },
        passthrough,
        { timeout: 10 * 60_000, relatedRequestId: related },
      )
      return result as { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }
    }
  }

  /** What a shared session store keeps of this connection: resource subscriptions and the log level. */
  get sessionState(): { subscriptions: string[]; logLevel?: LoggingLevel } {
    return { subscriptions: [...this.subscriptions], ...(this.logLevel ? { logLevel: this.logLevel } : {}) }
  }

  /**
   * Takes back a session's state kept by another process (a session moved
   * between replicas): its subscriptions (asked of the children again, best
   * effort) and its log level.
   */
  async restoreSessionState(state: { subscriptions: readonly string[]; logLevel?: LoggingLevel }): Promise<void> {
    if (state.logLevel) this.logLevel = state.logLevel
    for (const uri of state.subscriptions) {
      if (this.subscriptions.has(uri)) continue
      this.subscriptions.add(uri)
      const child = this.childForUri(uri)
      if (child) await watchResource(this.options.runtime, this, child, uri).catch(() => {})
    }
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
        instructions: this.instructions(),
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
        if (this.logLevel === undefined && !this.server.getCapabilities().logging) return
        this.notify('notifications/message', { ...params, logger: server }, related)
        return
      case 'notifications/resources/updated':
        if (typeof params.uri === 'string' && this.subscriptions.has(params.uri))
          this.notify('notifications/resources/updated', params)
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

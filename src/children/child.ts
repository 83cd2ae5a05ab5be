import path from 'node:path'
import {
  Client,
  type ClientCapabilities,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Implementation,
  type JSONRPCNotification,
  type Prompt,
  type Resource,
  type ResourceTemplateType,
  type ServerCapabilities,
  type Tool,
  type Transport,
} from '@modelcontextprotocol/client'
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio'
import { SKILLS_EXTENSION_ID, type Skill as SkillEntry } from '@modelcontextprotocol/core/ext/skills'
import type { ServerConfig } from '../config/schema.js'
import type { Logger } from '../logger.js'
import { InterceptTransport } from '../protocol/intercept-transport.js'
import { passthrough } from '../protocol/passthrough.js'
import { RequestRelay, type RelayOutcome, type RelayRequestOptions } from '../protocol/request-relay.js'
import { resolveCommand, type CommandHost } from './resolve-command.js'
import type { StopBudget } from './process-tree.js'
import { ChildStdioTransport } from './stdio-transport.js'

/** Lifecycle of one child (DESIGN.md: INITIALIZING / RUNNING / FAILED / STOPPED). */
export type ChildState = 'STOPPED' | 'INITIALIZING' | 'RUNNING' | 'FAILED'

/** The lists a child serves, each in the child's own order. */
export interface ChildLists {
  tools: Tool[]
  prompts: Prompt[]
  resources: Resource[]
  resourceTemplates: ResourceTemplateType[]
  /** Skills the child serves over the Skills extension (empty when it does not declare it). */
  skills: SkillEntry[]
}
export type ListKind = keyof ChildLists

const LIST_METHODS: Record<ListKind, { method: string; field: string; has: (caps: ServerCapabilities | undefined) => boolean }> = {
  tools: { method: 'tools/list', field: 'tools', has: (c) => Boolean(c?.tools) },
  prompts: { method: 'prompts/list', field: 'prompts', has: (c) => Boolean(c?.prompts) },
  resources: { method: 'resources/list', field: 'resources', has: (c) => Boolean(c?.resources) },
  resourceTemplates: { method: 'resources/templates/list', field: 'resourceTemplates', has: (c) => Boolean(c?.resources) },
  skills: { method: 'skills/list', field: 'skills', has: (c) => hasSkillsExtension(c) },
}
// The Skills extension announces skill changes with resources/list_changed.
const LIST_CHANGED: Record<string, ListKind[]> = {
  'notifications/tools/list_changed': ['tools'],
  'notifications/prompts/list_changed': ['prompts'],
  'notifications/resources/list_changed': ['resources', 'resourceTemplates', 'skills'],
}

/** Whether a server declares the Skills extension. */
export function hasSkillsExtension(caps: ServerCapabilities | undefined): boolean {
  return Boolean((caps as { extensions?: Record<string, unknown> } | undefined)?.extensions?.[SKILLS_EXTENSION_ID])
}
/** How long a health ping may take. */
const PING_TIMEOUT_MS = 5_000
/** A child that never stops paginating is cut off here. */
const MAX_PAGES = 1_000

/** What a child connection tells its owner. */
export interface ChildEvents {
  stateChanged(child: ChildConnection, previous: ChildState): void
  listsChanged(child: ChildConnection, kinds: readonly ListKind[]): void
  /** Notifications other than list changes (logging, resource updates…). */
  notification(child: ChildConnection, notification: JSONRPCNotification): void
  /** A request from the child to the client (elicitation, sampling, roots). */
  request(child: ChildConnection, method: string, params: Record<string, unknown> | undefined, signal: AbortSignal): Promise<Record<string, unknown>>
}

export interface ChildDeps {
  logger: Logger
  version: string
  host: CommandHost
  /** Base directory for a relative `cwd`. */
  configDir: string
  events: ChildEvents
  /** What the child is offered as client capabilities (the connected client's); may wait for that client. */
  clientCapabilities?: () => Promise<ClientCapabilities>
}

const EMPTY_LISTS: ChildLists = Object.freeze({ tools: [], prompts: [], resources: [], resourceTemplates: [], skills: [] }) as ChildLists

/**
 * One connection to one child server, over stdio or HTTP. Knows nothing of
 * other children, of roles or of the client: the supervisor restarts it, the
 * registry merges its lists. Forwarded calls go through a RequestRelay below
 * the SDK's request layer; discovery and child-initiated requests use the SDK.
 */
export class ChildConnection {
  state: ChildState = 'STOPPED'
  lists: ChildLists = EMPTY_LISTS
  lastError: string | undefined
  startedAt: Date | undefined
  capabilities: ServerCapabilities | undefined
  serverInfo: Implementation | undefined
  instructions: string | undefined
  pid: number | undefined

  private client: Client | undefined
  private relay: RequestRelay | undefined
  private transport: Transport | undefined
  private stopping = false
  private starting: Promise<void> | undefined

  constructor(
    readonly key: string,
    readonly config: ServerConfig,
    private readonly deps: ChildDeps,
  ) {}

  private setState(next: ChildState): void {
    const previous = this.state
    if (previous === next) return
    this.state = next
    this.deps.events.stateChanged(this, previous)
  }

  /** Starts the child; resolves when it is RUNNING, rejects (state FAILED) otherwise. Idempotent while starting. */
  start(): Promise<void> {
    if (this.state === 'RUNNING') return Promise.resolve()
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined
    })
    return this.starting
  }

  private async doStart(): Promise<void> {
    this.stopping = false
    this.lastError = undefined
    this.setState('INITIALIZING')
    const log = this.deps.logger.withTag(this.key)
    let client: Client | undefined
    try {
      const inner = this.createTransport(log)
      const transport = new InterceptTransport(inner)
      const relay = new RequestRelay((message) => transport.send(message))
      transport.interceptor = relay.intercept
      // Spawn now; initialize once the client's capabilities are known (they are what the child is offered).
      transport.listen().catch(() => {})
      const capabilities = (await this.deps.clientCapabilities?.()) ?? {}
      client = new Client({ name: 'mycelium', version: this.deps.version }, { capabilities, listMaxPages: 0 })
      this.wireClient(client, capabilities)
      await withTimeout(client.connect(transport, { timeout: this.config.startupTimeoutMs }), this.config.startupTimeoutMs, `did not finish initialize within ${this.config.startupTimeoutMs} ms (startupTimeoutMs)`)
      this.client = client
      this.relay = relay
      this.transport = transport
      this.pid = inner instanceof ChildStdioTransport ? inner.pid : undefined
      this.capabilities = client.getServerCapabilities()
      this.serverInfo = client.getServerVersion()
      this.instructions = client.getInstructions()
      client.onclose = () => this.onClosed()
      this.lists = await this.fetchLists(Object.keys(LIST_METHODS) as ListKind[], EMPTY_LISTS)
      this.startedAt = new Date()
      this.setState('RUNNING')
      this.startHealthChecks(client, log)
      this.deps.events.listsChanged(this, Object.keys(LIST_METHODS) as ListKind[])
    } catch (error) {
      this.lastError = describeStartError(error, this.config)
      this.client = undefined
      this.relay = undefined
      await client?.close().catch(() => {})
      this.setState(this.stopping ? 'STOPPED' : 'FAILED')
      throw new Error(`server "${this.key}" failed to start: ${this.lastError}`, { cause: error })
    }
  }

  private createTransport(log: Logger): Transport {
    const config = this.config
    if (config.type === 'stdio') {
      const resolved = resolveCommand(config.command, config.args, this.deps.host)
      if (resolved.resolvedFrom) log.debug(`resolved "${resolved.resolvedFrom}" to ${resolved.command}`)
      const env = { ...getDefaultEnvironment(), ...config.env }
      // npx and npm start `node` through a shebang: keep the resolved Node on PATH.
      if (this.deps.host.nodePath) {
        const nodeDir = path.dirname(this.deps.host.nodePath)
        const pathKey = Object.keys(env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH'
        const parts = (env[pathKey] ?? '').split(path.delimiter)
        if (!parts.includes(nodeDir)) env[pathKey] = [nodeDir, ...parts.filter(Boolean)].join(path.delimiter)
      }
      return new ChildStdioTransport({
        command: resolved.command,
        args: resolved.args,
        env,
        // Relative paths in a config mean the config's folder, whatever folder myc was started in.
        cwd: path.resolve(this.deps.configDir, config.cwd ?? '.'),
        onStderrLine: (line) => log.info(line),
      })
    }
    const url = new URL(config.url)
    const requestInit = { headers: config.headers }
    if (config.type === 'sse') return new SSEClientTransport(url, { requestInit })
    return new FallbackHttpTransport(url, requestInit, log)
  }

  private wireClient(client: Client, offered: ClientCapabilities): void {
    for (const [method, kinds] of Object.entries(LIST_CHANGED)) {
      client.setNotificationHandler(method as 'notifications/tools/list_changed', () => {
        void this.refresh(kinds)
      })
    }
    client.fallbackNotificationHandler = async (notification) => {
      this.deps.events.notification(this, notification as JSONRPCNotification)
    }
    // Only what the child was offered: anything else it asks gets the SDK's "method not found".
    const forwarded = [
      ...(offered.elicitation ? (['elicitation/create'] as const) : []),
      ...(offered.sampling ? (['sampling/createMessage'] as const) : []),
      ...(offered.roots ? (['roots/list'] as const) : []),
    ]
    for (const method of forwarded) {
      client.setRequestHandler(method, async (request, ctx) => {
        const result = await this.deps.events.request(this, method, request.params as Record<string, unknown> | undefined, ctx.mcpReq.signal)
        return result as never
      })
    }
    // A task the child created at the client (task-augmented sampling or elicitation) is polled through myc.
    // The SDK 2.x has no runtime for tasks, so these take pass-through params.
    if (offered.tasks) {
      for (const method of ['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']) {
        const register = client.setRequestHandler.bind(client) as (m: string, schemas: { params: typeof passthrough }, handler: (params: Record<string, unknown>, ctx: { mcpReq: { signal: AbortSignal } }) => Promise<unknown>) => void
        register(method, { params: passthrough }, (params, ctx) => this.deps.events.request(this, method, params, ctx.mcpReq.signal))
      }
    }
  }

  private healthTimer: NodeJS.Timeout | undefined

  /** Pings the child every pingIntervalMs; one that does not answer within 5 s is closed (and so restarted). */
  private startHealthChecks(client: Client, log: Logger): void {
    const every = this.config.pingIntervalMs
    if (!every) return
    this.healthTimer = setInterval(() => {
      if (this.state !== 'RUNNING' || this.client !== client) return
      client.ping({ timeout: Math.min(PING_TIMEOUT_MS, every) }).catch((error: unknown) => {
        if (this.state !== 'RUNNING' || this.client !== client) return
        log.warn(`no answer to ping (${error instanceof Error ? error.message : String(error)}); restarting it`)
        this.lastError = 'stopped answering pings'
        void client.close().catch(() => {})
      })
    }, every)
    this.healthTimer.unref()
  }

  /** Re-reads some of the child's lists (on its list_changed) and reports the change. */
  async refresh(kinds: readonly ListKind[]): Promise<void> {
    if (this.state !== 'RUNNING') return
    try {
      this.lists = await this.fetchLists(kinds, this.lists)
      this.deps.events.listsChanged(this, kinds)
    } catch (error) {
      this.deps.logger.withTag(this.key).warn(`could not refresh ${kinds.join(', ')}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  private async fetchLists(kinds: readonly ListKind[], current: ChildLists): Promise<ChildLists> {
    const next: ChildLists = { ...current }
    await Promise.all(
      kinds.map(async (kind) => {
        const spec = LIST_METHODS[kind]
        next[kind] = spec.has(this.capabilities) ? ((await this.listAll(spec.method, spec.field)) as never) : []
      }),
    )
    // A child's own skill files reach clients only through the skill mapping, never as plain resources.
    if (hasSkillsExtension(this.capabilities)) {
      next.resources = next.resources.filter((r) => !r.uri.startsWith('skill://'))
      next.resourceTemplates = next.resourceTemplates.filter((t) => !t.uriTemplate.startsWith('skill://'))
    }
    return next
  }

  /** Follows a list's pagination to the end. */
  private async listAll(method: string, field: string): Promise<unknown[]> {
    const client = this.client!
    const items: unknown[] = []
    const seen = new Set<string>()
    let cursor: string | undefined
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await client.request({ method, params: cursor === undefined ? {} : { cursor } }, passthrough, { timeout: this.config.timeoutMs })
      const pageItems = result[field]
      if (Array.isArray(pageItems)) items.push(...pageItems)
      const next = result.nextCursor
      if (typeof next !== 'string' || next === '' || seen.has(next)) return items
      seen.add(next)
      cursor = next
    }
    this.deps.logger.withTag(this.key).warn(`${method}: stopped after ${MAX_PAGES} pages`)
    return items
  }

  /**
   * Forwards one request to the child and returns its answer untouched. A
   * child that is not running answers with a connection error at once.
   */
  forward(method: string, params: Record<string, unknown> | undefined, options: Omit<RelayRequestOptions, 'timeoutMs'> & { timeoutMs?: number; caller?: object }): Promise<RelayOutcome> {
    const relay = this.relay
    if (this.state !== 'RUNNING' || !relay) {
      return Promise.resolve({ ok: false, error: { code: -32000, message: `Server "${this.key}" is not running (${this.state.toLowerCase()}${this.lastError ? `: ${this.lastError}` : ''})` } })
    }
    const outcome = relay.request(method, params, { ...options, timeoutMs: options.timeoutMs ?? this.config.timeoutMs })
    const caller = options.caller
    if (!caller) return outcome
    this.callers.add(caller)
    return outcome.finally(() => this.callers.delete(caller))
  }

  /** Who made each forwarded call in flight, oldest first (opaque here: the runtime routes this child's own requests by it). */
  private readonly callers = new Set<object>()

  /** The callers of the forwarded calls in flight, oldest first. */
  callersInFlight(): IterableIterator<object> {
    return this.callers.values()
  }

  /** Resolves once no forwarded call is waiting for this child, or after `ms`. */
  async drain(ms: number): Promise<void> {
    const deadline = Date.now() + ms
    while ((this.relay?.inFlight ?? 0) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
  }

  /** Sends a notification to the child (roots changed, cancelled…). Ignored when it is not running. */
  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    if (this.state !== 'RUNNING' || !this.transport) return
    await this.transport.send(params ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', method }).catch(() => {})
  }

  /** Sends a request through the SDK client (setLevel, subscribe, ping). */
  async request(method: string, params: Record<string, unknown> | undefined, timeoutMs = this.config.timeoutMs): Promise<Record<string, unknown>> {
    if (this.state !== 'RUNNING' || !this.client) throw new Error(`Server "${this.key}" is not running`)
    return this.client.request({ method, params: params ?? {} }, passthrough, { timeout: timeoutMs })
  }

  private onClosed(): void {
    clearInterval(this.healthTimer)
    const wasRunning = this.state === 'RUNNING'
    const exit = this.transport?.constructor === InterceptTransport ? ((this.transport as InterceptTransport).inner as Partial<ChildStdioTransport>).exitInfo : undefined
    this.relay?.failAll(`Server "${this.key}" stopped before answering${this.stopping ? '' : ' (it crashed and is being restarted)'}`)
    this.client = undefined
    this.relay = undefined
    this.transport = undefined
    this.pid = undefined
    this.lists = EMPTY_LISTS
    if (!wasRunning) return
    if (this.stopping) {
      this.setState('STOPPED')
    } else {
      this.lastError = this.lastError === 'stopped answering pings' ? this.lastError : exit ? `exited${exit.code !== null ? ` with code ${exit.code}` : ''}${exit.signal ? ` by ${exit.signal}` : ''}` : 'connection closed'
      this.setState('FAILED')
    }
    this.deps.events.listsChanged(this, Object.keys(LIST_METHODS) as ListKind[])
  }

  /** Stops the child and its whole process tree, within `budget`. */
  async stop(budget?: StopBudget): Promise<void> {
    this.stopping = true
    const inner = (this.transport as InterceptTransport | undefined)?.inner
    if (budget && inner instanceof ChildStdioTransport) inner.stopBudget = budget
    const client = this.client
    if (this.starting) await this.starting.catch(() => {})
    await (client ?? this.client)?.close().catch(() => {})
    if (this.state !== 'STOPPED') this.setState('STOPPED')
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms)
      timer.unref()
    }),
  ]).finally(() => clearTimeout(timer))
}

function describeStartError(error: unknown, config: ServerConfig): string {
  const e = error as NodeJS.ErrnoException
  if (e?.code === 'ENOENT' && config.type === 'stdio') return `command not found: "${config.command}" (install it or give its absolute path in "command")`
  if (e?.code === 'EACCES' && config.type === 'stdio') return `command not executable: "${config.command}"`
  return error instanceof Error ? error.message : String(error)
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
  ) {
    this.active = this.attach(new StreamableHTTPClientTransport(url, { requestInit }))
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
    if (!this.firstSend) return this.active.send(message, options)
    this.firstSend = false
    try {
      await this.active.send(message, options)
    } catch (error) {
      const status = (error as { code?: unknown; status?: unknown }).status ?? (error as { code?: unknown }).code
      const clientError = typeof status === 'number' && status >= 400 && status < 500
      if (this.triedFallback || !clientError) throw error
      this.triedFallback = true
      this.log.info(`${this.url.href} does not speak Streamable HTTP (${String(status)}); trying HTTP+SSE`)
      const old = this.active
      old.onclose = undefined
      await old.close().catch(() => {})
      this.active = this.attach(new SSEClientTransport(this.url, { requestInit: this.requestInit }))
      await this.active.start()
      await this.active.send(message, options)
    }
  }

  close(): Promise<void> {
    return this.active.close()
  }
}

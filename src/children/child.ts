import {
  Client,
  type ClientCapabilities,
  type Implementation,
  type JSONRPCNotification,
  type ServerCapabilities,
  type Transport,
} from '@modelcontextprotocol/client'
import type { ServerConfig } from '../config/server-schema.js'
import { mycCodeOf, type MycErrorCode } from '../errors.js'
import type { Logger } from '../logger.js'
import { InterceptTransport } from '../protocol/intercept-transport.js'
import type { LineParser } from '../protocol/line-parser.js'
import { RequestRelay, type RelayOutcome } from '../protocol/request-relay.js'
import type { CommandHost } from './resolve-command.js'
import type { PrespawnedChildren } from './prespawn.js'
import type { StopBudget } from './process-tree.js'
import { ChildStdioTransport } from './stdio-transport.js'
import { userSecrets, withSecrets } from './secret-refs.js'
import { EMPTY_LISTS, fetchLists, LIST_METHODS, type ChildLists, type ListKind } from './child-lists.js'
import {
  ChildProcessTransport,
  createChildTransport,
  connectFailure,
  describeStartError,
  isLateProbeAnswer,
  negotiationFor,
  ProbeClosedError,
  withTimeout,
} from './child-transports.js'
import type { TokenStore } from '../oauth/token-store.js'
import type { Reauthorize } from '../oauth/reauthorize.js'
import { RpcCode, type Era } from '../protocol/facts.js'
import { wireClient } from './child-client.js'
import { TaskHolds, TaskStatusLog } from './task-holds.js'
import { ChildRecord } from './child-record.js'
import type { ChildSession, ChildSessions, ForwardOptions, InputSource, SessionLink } from './child-session.js'

export { hasSkillsExtension, type ChildLists, type ListKind } from './child-lists.js'

/** Lifecycle of one child (INITIALIZING / RUNNING / FAILED / STOPPED; docs/proxy.md). */
export type ChildState = 'STOPPED' | 'INITIALIZING' | 'RUNNING' | 'FAILED'

/** How long a health ping may take. */
const PING_TIMEOUT_MS = 5_000
/** What a child connection tells its owner. */
export interface ChildEvents {
  stateChanged(child: ChildConnection, previous: ChildState): void
  listsChanged(child: ChildConnection, kinds: readonly ListKind[]): void
  /** Notifications other than list changes (logging, resource updates…). */
  notification(child: ChildConnection, notification: JSONRPCNotification): void
  /** A request from the child to the client (elicitation, sampling, roots). */
  request(
    child: ChildConnection,
    method: string,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>>
  /** The client that made a forwarded call (`forward`'s caller), to be asked what a modern child's `input_required` needs; undefined when it cannot be. */
  inputSource?(child: ChildConnection, caller: object): InputSource | undefined
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
  /** Children started before the runtime existed (`myc serve`): the first start takes its child over from here. */
  prespawned?: PrespawnedChildren
  /** A one-shot command (status, tools…): the child's stderr goes to `stderrLine`, not the log; its start chatter is at debug level. */
  oneShot?: { stderrLine: (line: string) => void }
  /** Whose OAuth logins an HTTP child's requests carry (default: the local user's). */
  tokenStore?: TokenStore
  /** Asks the person to authorize an HTTP child again while myc runs (oauth/reauthorize.ts); absent, a login gone bad fails the request with the fix. */
  reauthorize?: Reauthorize
  /** What each start spawns: the entry with its secrets filled in (default: `${secret:…}` from the local user's store; a scoped server's instance: children/instances.ts). */
  spawnConfig?: (config: ServerConfig) => Promise<ServerConfig>
  /** The session of each era (child-session.ts, implemented in src/eras/); a child gets the one of the era it negotiated. */
  childSessions: ChildSessions
  /** What clients asked of the child, its slot's (slot-records.ts: a scoped server's person's, kept for their next instance); default: its own. */
  record?: ChildRecord
  /** Parses a stdio child's large lines off the event loop (the supervisor's, for all its children); without it they are parsed on it. */
  lines?: LineParser
}

/**
 * One connection to one child server, over stdio or HTTP. Knows nothing of
 * other children, of roles or of the client: the supervisor restarts it, the
 * registry merges its lists. It connects the child in the era the config
 * asks for (negotiated with `server/discover` for `auto` and `modern`),
 * supervises its state, and hands a running child's traffic to the session
 * of the era it speaks (child-session.ts): forwarded calls go through a
 * RequestRelay below the SDK's request layer; discovery and child-initiated
 * requests use the SDK.
 */
export class ChildConnection {
  state: ChildState = 'STOPPED'
  lists: ChildLists = EMPTY_LISTS
  lastError: string | undefined
  /** The code of the error that ended the last start (a login needed: `needs_login`), when it had one. */
  lastErrorCode: MycErrorCode | undefined
  startedAt: Date | undefined
  capabilities: ServerCapabilities | undefined
  serverInfo: Implementation | undefined
  instructions: string | undefined
  pid: number | undefined
  /** The era spoken with the child (undefined until it ran once). */
  era: Era | undefined
  /** The protocol version negotiated with it (`initialize`, or `server/discover` in the modern era). */
  protocolVersion: string | undefined
  /** Set when the child exited on the era probe: later starts of this connection initialize at once. */
  private probeKills = false
  /** The running child's session, in the era it speaks. */
  private session: ChildSession | undefined
  /** The tasks its process runs for callers after their calls answered (child-tasks.ts): a scoped server's instance is busy while one is held. */
  readonly heldTasks = new TaskHolds()
  /** What it last told of its tasks' status (task-holds.ts). */
  readonly taskStatuses = new TaskStatusLog()
  /** What clients asked of it (the level they set, the resources they hold): kept across restarts, asked of each start again by its session. */
  readonly record: ChildRecord

  private client: Client | undefined
  private relay: RequestRelay | undefined
  private transport: Transport | undefined
  private stopping = false
  private starting: Promise<void> | undefined

  constructor(
    readonly key: string,
    readonly config: ServerConfig,
    private readonly deps: ChildDeps,
  ) {
    this.record = deps.record ?? new ChildRecord()
  }

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
    this.lastErrorCode = undefined
    this.setState('INITIALIZING')
    const log = this.deps.logger.withTag(this.key)
    // startupTimeoutMs counts from the moment the child is offered the client's capabilities (set by the first connect).
    const deadline: { at?: number } = {}
    try {
      let era = this.plannedEra()
      let connected: Connected
      try {
        connected = await this.connect(log, era, deadline)
      } catch (error) {
        // A 2025 server that exits on the unknown pre-initialize request: start it again and initialize at once.
        if (era !== 'auto' || !(error instanceof ProbeClosedError) || this.stopping) throw error
        log[this.deps.oneShot ? 'debug' : 'info'](
          'exited on the server/discover probe (a 2025-era server); starting it again with initialize',
        )
        era = 'legacy'
        connected = await this.connect(log, era, deadline)
        this.probeKills = true
      }
      const { client, relay, transport, inner } = connected
      this.client = client
      this.relay = relay
      this.transport = transport
      this.pid = inner instanceof ChildStdioTransport ? inner.pid : undefined
      this.capabilities = client.getServerCapabilities()
      this.serverInfo = client.getServerVersion()
      this.instructions = client.getInstructions()
      this.protocolVersion = client.getNegotiatedProtocolVersion()
      // The era the child negotiated chooses its session.
      const spoken: Era = client.getProtocolEra() === 'modern' ? 'modern' : 'legacy'
      const session = (this.session = this.deps.childSessions[spoken](this.link(connected, log)))
      this.record.attach(session)
      this.era = spoken
      log.debug(`speaks ${spoken === 'modern' ? 'MCP' : 'the 2025 era,'} ${this.protocolVersion ?? '?'}`)
      client.onclose = () => this.onClosed()
      await session.open()
      this.lists = await fetchLists(
        this.client!,
        this.capabilities,
        Object.keys(LIST_METHODS) as ListKind[],
        EMPTY_LISTS,
        this.listOptions(),
      )
      this.startedAt = new Date()
      this.setState('RUNNING')
      this.startHealthChecks(client, session, log)
      this.deps.events.listsChanged(this, Object.keys(LIST_METHODS) as ListKind[])
    } catch (error) {
      this.lastError = describeStartError(error, this.config)
      this.lastErrorCode = mycCodeOf(error)
      const client = this.client ?? this.connecting
      this.client = undefined
      this.relay = undefined
      this.connecting = undefined
      await client?.close().catch(() => {})
      this.setState(this.stopping ? 'STOPPED' : 'FAILED')
      throw new Error(`server "${this.key}" failed to start: ${this.lastError}`, { cause: error })
    }
  }

  /** What a session of this start is made with (child-session.ts). */
  private link(connected: Connected, log: Logger): SessionLink {
    return {
      key: this.key,
      config: this.config,
      client: connected.client,
      relay: connected.relay,
      transport: connected.transport,
      capabilities: this.capabilities,
      offered: connected.capabilities,
      protocolVersion: this.protocolVersion,
      clientInfo: { name: 'mycelium', version: this.deps.version },
      log,
      kept: this.record.kept,
      current: () => (this.state === 'RUNNING' ? this.relay : undefined),
      notRunning: () => this.notRunning(),
      inputSource: (caller) => this.deps.events.inputSource?.(this, caller),
    }
  }

  /** The era this start asks for: the config's, except that a child known to exit on the probe, or an HTTP+SSE one, is initialized at once. */
  private plannedEra(): 'auto' | Era {
    const era = this.config.era ?? 'legacy'
    if (era === 'auto' && (this.probeKills || this.config.type === 'sse')) return 'legacy'
    return era
  }

  /** The client being connected (closed if the start fails). */
  private connecting: Client | undefined

  /**
   * Spawns (or reaches) the child and connects an SDK client in `era`: for
   * `auto` and `modern` with the SDK's version negotiation (a
   * `server/discover` probe on the connection itself), for `legacy` with
   * the plain 2025 handshake.
   */
  private async connect(log: Logger, era: 'auto' | Era, deadline: { at?: number }): Promise<Connected> {
    if (era === 'modern' && this.config.type === 'sse')
      throw new Error('the HTTP+SSE transport is 2025-era only: use era "auto" or "legacy", or type "http"')
    const spawn = this.deps.spawnConfig ?? ((c: ServerConfig) => withSecrets(c, userSecrets(this.deps.host.env)))
    const inner = createChildTransport(await spawn(this.config), log, {
      key: this.key,
      host: this.deps.host,
      configDir: this.deps.configDir,
      prespawned: this.deps.prespawned,
      stderrLine: this.deps.oneShot?.stderrLine,
      tokenStore: this.deps.tokenStore,
      reauthorize: this.deps.reauthorize,
      lines: this.deps.lines,
    })
    const transport =
      inner instanceof ChildStdioTransport ? new ChildProcessTransport(inner) : new InterceptTransport(inner)
    const relay = new RequestRelay((message) => transport.send(message))
    // Once connected, a late answer to the probe (a slow 2025 server's -32601 after the timeout verdict) is dropped.
    let connected = false
    transport.interceptor =
      era === 'legacy'
        ? relay.intercept
        : (message) =>
            relay.intercept(message) ||
            (connected && (isLateProbeAnswer(message) || this.session?.screen(message) === true))
    // Spawn now; initialize once the client's capabilities are known (they are what the child is offered).
    transport.listen().catch(() => {})
    const capabilities = (await this.deps.clientCapabilities?.()) ?? {}
    deadline.at ??= Date.now() + this.config.startupTimeoutMs
    const remaining = Math.max(1, deadline.at - Date.now())
    const stdio = inner instanceof ChildStdioTransport
    const negotiation = negotiationFor(era, stdio, remaining)
    const client = new Client(
      { name: 'mycelium', version: this.deps.version },
      { capabilities, listMaxPages: 0, ...(negotiation ? { versionNegotiation: negotiation } : {}) },
    )
    this.connecting = client
    wireClient(client, capabilities, {
      refresh: (kinds) => void this.refresh(kinds),
      notification: (notification) => this.deps.events.notification(this, notification),
      request: (method, params, signal) => this.deps.events.request(this, method, params, signal),
    })
    try {
      await withTimeout(
        client.connect(transport, { timeout: remaining }),
        remaining,
        `did not finish ${era === 'legacy' ? 'initialize' : 'connecting'} within ${this.config.startupTimeoutMs} ms (startupTimeoutMs)`,
      )
    } catch (error) {
      await client.close().catch(() => {})
      if (this.connecting === client) this.connecting = undefined
      throw connectFailure(error, era, stdio ? inner.exitInfo : undefined)
    }
    connected = true
    if (this.connecting === client) this.connecting = undefined
    return { client, relay, transport, inner, capabilities }
  }

  private healthTimer: NodeJS.Timeout | undefined

  /** Pings the child every pingIntervalMs (its session's cheapest request); one that does not answer within 5 s is closed (and so restarted). */
  private startHealthChecks(client: Client, session: ChildSession, log: Logger): void {
    const every = this.config.pingIntervalMs
    if (!every) return
    this.healthTimer = setInterval(() => {
      if (this.state !== 'RUNNING' || this.client !== client) return
      session.alive(Math.min(PING_TIMEOUT_MS, every)).catch((error: unknown) => {
        if (this.state !== 'RUNNING' || this.client !== client) return
        log.warn(`no answer to ping (${error instanceof Error ? error.message : String(error)}); restarting it`)
        this.lastError = 'stopped answering pings'
        void client.close().catch(() => {})
      })
    }, every)
    this.healthTimer.unref()
  }

  private listOptions(): { timeoutMs: number; warn: (message: string) => void } {
    return { timeoutMs: this.config.timeoutMs, warn: (message) => this.deps.logger.withTag(this.key).warn(message) }
  }

  /** Re-reads some of the child's lists (on its list_changed) and reports the change. */
  async refresh(kinds: readonly ListKind[]): Promise<void> {
    if (this.state !== 'RUNNING') return
    try {
      this.lists = await fetchLists(this.client!, this.capabilities, kinds, this.lists, this.listOptions())
      this.deps.events.listsChanged(this, kinds)
    } catch (error) {
      this.deps.logger
        .withTag(this.key)
        .warn(`could not refresh ${kinds.join(', ')}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  /**
   * Forwards one request to the child through its session, which answers as
   * the caller's era is to get it. A child that is not running answers with
   * a connection error at once.
   */
  forward(method: string, params: Record<string, unknown> | undefined, options: ForwardOptions): Promise<RelayOutcome> {
    const session = this.session
    if (this.state !== 'RUNNING' || !this.relay || !session) return Promise.resolve(this.notRunning())
    const outcome = session.forward(method, params, options)
    const caller = options.caller
    if (!caller) return outcome
    this.callers.add(caller)
    return outcome.then(
      (o) => {
        this.callers.delete(caller)
        return o
      },
      (error: unknown) => {
        this.callers.delete(caller)
        throw error
      },
    )
  }

  /** The answer to a request while the child is not running: a connection error at once, with its state and last error. */
  private notRunning(): RelayOutcome {
    const why = `${this.state.toLowerCase()}${this.lastError ? `: ${this.lastError}` : ''}`
    return { ok: false, error: { code: RpcCode.serverError, message: `Server "${this.key}" is not running (${why})` } }
  }

  /** Who made each forwarded call in flight, oldest first (opaque here: the runtime routes this child's own requests by it). */
  private readonly callers = new Set<object>()

  /** The callers of the forwarded calls in flight, oldest first. */
  callersInFlight(): IterableIterator<object> {
    return this.callers.values()
  }

  /** Forwarded requests waiting for the child's answer now. */
  get inFlight(): number {
    return this.relay?.inFlight ?? 0
  }

  /** Resolves once no forwarded call is waiting for this child, or after `ms`. */
  async drain(ms: number): Promise<void> {
    const deadline = Date.now() + ms
    while (this.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
  }

  /** Sends a notification to the child (roots changed, cancelled…) through its session. Ignored when it is not running. */
  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    if (this.state !== 'RUNNING' || !this.transport) return
    await this.session?.notify(method, params)
  }

  /** Sends a request through the SDK client (ping…; the log level clients set is the record's: ChildRecord.setLevel). */
  async request(
    method: string,
    params: Record<string, unknown> | undefined,
    timeoutMs = this.config.timeoutMs,
  ): Promise<Record<string, unknown>> {
    if (this.state !== 'RUNNING' || !this.client || !this.session)
      throw new Error(`Server "${this.key}" is not running`)
    return this.session.request(method, params, timeoutMs)
  }

  private onClosed(): void {
    clearInterval(this.healthTimer)
    const wasRunning = this.state === 'RUNNING'
    const exit =
      this.transport instanceof InterceptTransport
        ? (this.transport.inner as Partial<ChildStdioTransport>).exitInfo
        : undefined
    this.relay?.failAll(
      `Server "${this.key}" stopped before answering${this.stopping ? '' : ' (it crashed and is being restarted)'}`,
    )
    this.client = undefined
    this.relay = undefined
    this.transport = undefined
    this.pid = undefined
    if (this.session) this.record.detach(this.session)
    this.session?.close()
    this.session = undefined
    this.lists = EMPTY_LISTS
    if (!wasRunning) return
    if (this.stopping) {
      this.setState('STOPPED')
    } else {
      // A running child's last error is set only when it stopped answering pings: that, else how it ended.
      this.lastError ??= exit
        ? `exited${exit.code !== null ? ` with code ${exit.code}` : ''}${exit.signal ? ` by ${exit.signal}` : ''}`
        : 'connection closed'
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

/** What connect() made: the SDK client over the transport, and the relay beside it. */
interface Connected {
  client: Client
  relay: RequestRelay
  transport: InterceptTransport
  inner: Transport
  /** What the child was offered. */
  capabilities: ClientCapabilities
}

import type { ClientCapabilities, JSONRPCNotification } from '@modelcontextprotocol/client'
import { capabilitiesForChildren } from '../children/client-capabilities.js'
import type { ChildConnection, ListKind } from '../children/child.js'
import type { CommandHost } from '../children/resolve-command.js'
import { URGENT_STOP_BUDGET } from '../children/process-tree.js'
import { ChildSupervisor } from '../children/supervisor.js'
import type { LoadedConfig } from '../config/load.js'
import { diffConfig, type ConfigDiff } from '../config/diff.js'
import type { Logger } from '../logger.js'
import { Catalogue } from '../registry/catalogue.js'

/** How long a list request waits for children still in their first start. */
export const FIRST_LIST_WAIT_MS = 5_000

const ALL_KINDS: readonly ListKind[] = ['tools', 'prompts', 'resources', 'resourceTemplates', 'skills']

/** How long a server removed or changed by a config reload may finish the calls it is running. */
export const RELOAD_DRAIN_MS = 10_000

/** How long children wait for a client's initialize before they initialize offering no client capabilities. */
export const CLIENT_INITIALIZE_WAIT_MS = 2_000

/** A connected client (one connection of the MCP server face), as the runtime sees it. */
export interface ConnectionHandle {
  catalogueChanged(kinds: ReadonlySet<'tools' | 'prompts' | 'resources'>): void
  childNotification(server: string, notification: JSONRPCNotification): void
  /** Whether this connection's principal reaches the server (so a child's request may go to it). */
  reaches(server: string): boolean
  forwardRequest(server: string, method: string, params: Record<string, unknown> | undefined, signal: AbortSignal): Promise<Record<string, unknown>>
  readonly clientHasRoots: boolean
  /** Whether this connection subscribed to updates of a resource. */
  isSubscribed(uri: string): boolean
}

export interface RuntimeDeps {
  loaded: LoadedConfig
  logger: Logger
  version: string
  host: CommandHost
  /**
   * A client is about to connect (`myc serve`): each child's initialize waits
   * for that client's capabilities (see offerClientCapabilities), at most this
   * long. Without it, children are offered no client capabilities at all.
   */
  waitForClientMs?: number
}

/**
 * Everything one `myc` process runs: the children, the merged catalogue and
 * the client connections. Built once by the command and passed down; there is
 * no other shared state.
 */
export class Runtime {
  readonly supervisor: ChildSupervisor
  readonly catalogue: Catalogue
  readonly connections = new Set<ConnectionHandle>()
  private lastActive: ConnectionHandle | undefined
  /** Conflicts already logged, so a rebuild does not repeat them. */
  private reportedConflicts = new Set<string>()

  /** The capabilities children are offered, once a client declared them. */
  private offered: ClientCapabilities | undefined
  /** While a client is awaited: settles with its offer, or with none after waitForClientMs. */
  private awaited: { promise: Promise<ClientCapabilities>; resolve: (caps: ClientCapabilities) => void } | undefined

  /** The config in force: the one loaded at start, or the last reload that validated. */
  loaded: LoadedConfig

  constructor(readonly deps: RuntimeDeps) {
    this.loaded = deps.loaded
    const { config } = deps.loaded
    if (deps.waitForClientMs !== undefined) {
      let resolve!: (caps: ClientCapabilities) => void
      this.awaited = { promise: new Promise((r) => (resolve = r)), resolve }
      setTimeout(() => resolve({}), deps.waitForClientMs).unref()
    }
    this.catalogue = new Catalogue([...config.servers.keys()], config.namespace)
    this.supervisor = new ChildSupervisor(config.servers, {
      logger: deps.logger,
      version: deps.version,
      host: deps.host,
      configDir: deps.loaded.dir,
      clientCapabilities: () => (this.offered ? Promise.resolve(this.offered) : (this.awaited?.promise ?? Promise.resolve({}))),
      events: {
        listsChanged: (child, kinds) => this.onListsChanged(child, kinds),
        notification: (child, n) => this.onChildNotification(child, n),
        request: (child, method, params, signal) => this.onChildRequest(child, method, params, signal),
      },
    })
  }

  get logger(): Logger {
    return this.deps.logger
  }

  /**
   * The connected client declared these capabilities: children that have not
   * initialized yet, and any that restart or start lazily later, are offered
   * the same (capabilitiesForChildren). The first offer wins.
   */
  offerClientCapabilities(caps: ClientCapabilities | undefined): void {
    if (this.offered) return
    this.offered = capabilitiesForChildren(caps)
    this.awaited?.resolve(this.offered)
  }

  private started: Promise<void> | undefined

  /** Starts the eager children (in parallel, each with its own timeout); resolves when each is up or failed. */
  start(): Promise<void> {
    this.started ??= this.supervisor.startAll()
    return this.started
  }

  /**
   * Waits for the eager children's first start, at most `maxMs`: a list
   * request should show what is coming up, but a slow child (an `npx` that
   * downloads) must not hold the client; its entries arrive with list_changed.
   */
  async whenStarted(maxMs = FIRST_LIST_WAIT_MS): Promise<void> {
    if (!this.started) return
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.started, new Promise<void>((resolve) => (timer = setTimeout(resolve, maxMs)))])
    clearTimeout(timer)
  }

  /**
   * Starts the lazy children a principal reaches that have not been started
   * yet ("first use" is the first list request that could show them).
   */
  async startLazy(reaches: (server: string) => boolean): Promise<void> {
    await this.whenStarted()
    const pending = [...this.supervisor.children.values()].filter((c) => c.config.startup === 'lazy' && c.state === 'STOPPED' && c.startedAt === undefined && reaches(c.key))
    await Promise.all(pending.map((c) => this.supervisor.ensureRunning(c.key)))
  }

  private readonly catalogueListeners = new Set<(kinds: readonly ListKind[]) => void>()

  /** Calls `listener` after every catalogue change, before the connections hear of it. */
  onCatalogueChange(listener: (kinds: readonly ListKind[]) => void): () => void {
    this.catalogueListeners.add(listener)
    return () => this.catalogueListeners.delete(listener)
  }

  private onListsChanged(child: ChildConnection, kinds: readonly ListKind[]): void {
    if (child.state === 'RUNNING') this.catalogue.setServer(child.key, child.lists, kinds)
    else this.catalogue.clearServer(child.key)
    this.announce(kinds)
  }

  /** Tells the catalogue's listeners and every connection that some lists changed; logs new conflicts. */
  private announce(kinds: readonly ListKind[]): void {
    for (const listener of this.catalogueListeners) listener(kinds)
    const current = new Set<string>()
    for (const conflict of this.catalogue.conflicts) {
      const key = `${conflict.kind}\0${conflict.name}\0${conflict.kept}\0${conflict.dropped}`
      current.add(key)
      if (this.reportedConflicts.has(key)) continue
      this.logger.error(
        conflict.kind === 'resource'
          ? `servers "${conflict.kept}" and "${conflict.dropped}" both serve the resource ${conflict.name}; reads go to "${conflict.kept}" (config order)`
          : `two ${conflict.kind}s would reach the client as "${conflict.name}": ${conflict.kept} and ${conflict.dropped}; ${conflict.dropped} is left out (rename a server key or change namespace.separator)`,
      )
    }
    this.reportedConflicts = current
    const changed = new Set<'tools' | 'prompts' | 'resources'>()
    // Skill changes travel as resources/list_changed, as the Skills extension does.
    for (const kind of kinds) changed.add(kind === 'resourceTemplates' || kind === 'skills' ? 'resources' : kind)
    for (const connection of this.connections) connection.catalogueChanged(changed)
  }

  private onChildNotification(child: ChildConnection, notification: JSONRPCNotification): void {
    for (const connection of this.connections) connection.childNotification(child.key, notification)
  }

  private onChildRequest(child: ChildConnection, method: string, params: Record<string, unknown> | undefined, signal: AbortSignal): Promise<Record<string, unknown>> {
    const connection = this.pickConnection(child.key)
    if (!connection) return Promise.reject(new Error(`no MCP client that reaches "${child.key}" is connected to mycelium`))
    return connection.forwardRequest(child.key, method, params, signal)
  }

  /** The connection a child's request goes to: the most recently active one that reaches the child. */
  private pickConnection(server: string): ConnectionHandle | undefined {
    if (this.lastActive && this.connections.has(this.lastActive) && this.lastActive.reaches(server)) return this.lastActive
    return [...this.connections].reverse().find((s) => s.reaches(server))
  }

  /** Marks a connection as the one that last sent a request. */
  touch(connection: ConnectionHandle): void {
    this.lastActive = connection
  }

  addConnection(connection: ConnectionHandle): void {
    this.connections.add(connection)
  }

  removeConnection(connection: ConnectionHandle): void {
    this.connections.delete(connection)
    if (this.lastActive === connection) this.lastActive = undefined
  }

  /**
   * Applies a reloaded config: servers added are started, servers removed are
   * stopped, servers whose entry changed are restarted with it, and every
   * other child is left as it is (its calls in flight included). Connections hear
   * of the entries that come and go through the usual list-changed path.
   * Resolves with what changed once the new children are up or failed.
   */
  async applyConfig(next: LoadedConfig, drainMs = RELOAD_DRAIN_MS): Promise<ConfigDiff> {
    const diff = diffConfig(this.loaded.config, next.config)
    this.loaded = next
    const { servers } = next.config
    if (diff.order) {
      this.catalogue.setServerOrder([...servers.keys()])
      this.announce(ALL_KINDS)
    }
    const gone = (child: ChildConnection) => {
      this.catalogue.clearServer(child.key)
      this.announce(ALL_KINDS)
    }
    await Promise.all([...diff.servers.removed, ...diff.servers.changed].map((key) => this.supervisor.remove(key, drainMs, gone)))
    await Promise.all([...diff.servers.changed, ...diff.servers.added].map((key) => this.supervisor.add(key, servers.get(key)!)))
    return diff
  }

  /** Tells every running child that the client's roots changed. */
  async rootsChanged(): Promise<void> {
    await Promise.all([...this.supervisor.children.values()].map((child) => child.notify('notifications/roots/list_changed')))
  }

  /** Stops every child and its process tree; `urgent` after a signal. */
  async close(options: { urgent?: boolean } = {}): Promise<void> {
    await this.supervisor.stopAll(options.urgent ? URGENT_STOP_BUDGET : undefined)
  }
}

import type { ClientCapabilities, LoggingLevel } from '@modelcontextprotocol/client'
import type { CallOrigin, ChildRequestOrigin, ConnectionHandle } from './connection.js'

export type { CallOrigin, ChildRequestOrigin, ConnectionHandle } from './connection.js'
import { capabilitiesForChildren } from '../children/client-capabilities.js'
import type { ChildConnection, ChildState, ListKind } from '../children/child.js'
import type { ChildSessions } from '../children/child-session.js'
import { AskedRecords } from './asked-records.js'
import type { ChildRecord } from '../children/child-record.js'
import type { CommandHost } from '../children/resolve-command.js'
import type { PrespawnedChildren } from '../children/prespawn.js'
import { URGENT_STOP_BUDGET } from '../children/process-tree.js'
import { ChildSupervisor } from '../children/supervisor.js'
import type { LoadedConfig } from '../config/load.js'
import { diffConfig, type ConfigDiff } from '../config/diff.js'
import type { Logger } from '../logger.js'
import { Catalogue, serverPrefixes, type WithheldEntry } from '../registry/catalogue.js'
import type { AuditSink } from '../audit.js'
import { PinGate } from '../pinning/gate.js'
import type { DefinitionLock } from '../pinning/lock.js'
import { WithheldReport } from './withheld-report.js'
import { ConflictReport } from './conflict-report.js'
import type { Tracing } from '../telemetry/tracing.js'
import type { Reauthorize } from '../oauth/reauthorize.js'
import { TokenStore } from '../oauth/token-store.js'
import { stateRoots } from '../config/state-roots.js'
import { InstanceLists } from './instance-routing.js'
import { ChildRouting } from './child-routing.js'
import { PersonSecretStores } from './person-secrets.js'

/** How long a list request waits for children still in their first start. */
const FIRST_LIST_WAIT_MS = 5_000

const ALL_KINDS: readonly ListKind[] = ['tools', 'prompts', 'resources', 'resourceTemplates', 'skills']

/** How long a server removed or changed by a config reload may finish the calls it is running. */
const RELOAD_DRAIN_MS = 10_000

/** How long children wait for a client's initialize before they initialize offering no client capabilities. */
export const CLIENT_INITIALIZE_WAIT_MS = 2_000

export interface RuntimeDeps {
  loaded: LoadedConfig
  logger: Logger
  version: string
  host: CommandHost
  /** The session of each era a child may speak (children/child-session.ts): src/eras/, handed in where the runtime is opened. */
  childSessions: ChildSessions
  /**
   * A client is about to connect (`myc serve`): each child's initialize waits
   * for that client's capabilities (see offerClientCapabilities), at most this
   * long. Without it, children are offered no client capabilities at all.
   */
  waitForClientMs?: number
  /** Children `myc serve` started before the runtime (children/prespawn.ts): their first start takes them over. */
  prespawned?: PrespawnedChildren
  /** A one-shot inspection command (children/supervisor.ts). */
  oneShot?: { failuresShown: boolean }
  /** OpenTelemetry tracing, when it is on (telemetry/open-tracing.ts); absent, nothing is traced and nothing is loaded. */
  tracing?: Tracing
  /** Asks the person to authorize an HTTP child again while this process runs (a person is there: serve on stdio, the agent). */
  reauthorize?: Reauthorize
  /** The definition lock (`mycelium.lock.json` beside the config); absent, pinning is off and only hidden text is withheld. */
  lock?: DefinitionLock
  /** Where withheld definitions are recorded (`audit.file`). */
  audit?: AuditSink
  /** Nothing is withheld (`myc pin` reads what the children offer and judges it itself). */
  ungated?: boolean
  /** The command reports what is withheld itself (`myc status`, `myc doctor`): no stderr line for each. */
  withheldShown?: boolean
  /** Where scoped servers' instances keep their folders (default: `.mycelium/instances` beside the config). */
  instancesDir?: string
}

/**
 * Everything one `myc` process runs: the children, the merged catalogue and
 * the client connections. Built once by the command and passed down; there is
 * no other shared state.
 */
export class Runtime {
  readonly supervisor: ChildSupervisor
  readonly catalogue: Catalogue
  /** The client connections, and where what children send them goes (child-routing.ts). */
  private readonly routing: ChildRouting
  private readonly instanceLists = new InstanceLists()

  /** A child's roots/list outside any call gets an empty list (a shared server over HTTP: whose roots would they be?). */
  rootsWithinCallsOnly = false

  /** The capabilities children are offered, once a client declared them. */
  private offered: ClientCapabilities | undefined
  /** While a client is awaited: settles with its offer, or with none after waitForClientMs. */
  private awaited: { promise: Promise<ClientCapabilities>; resolve: (caps: ClientCapabilities) => void } | undefined

  /** The config in force: the one loaded at start, or the last reload that validated. */
  loaded: LoadedConfig

  constructor(readonly deps: RuntimeDeps) {
    this.loaded = deps.loaded
    this.routing = new ChildRouting(
      deps.logger,
      (child) => this.supervisor.instanceOf(child),
      () => this.rootsWithinCallsOnly,
      (child) => this.supervisor.personalOwnerOf(child),
    )
    this.secrets = new PersonSecretStores(deps.host.env)
    const { config } = deps.loaded
    if (deps.waitForClientMs !== undefined) {
      let resolve!: (caps: ClientCapabilities) => void
      this.awaited = { promise: new Promise((r) => (resolve = r)), resolve }
      setTimeout(() => resolve({}), deps.waitForClientMs).unref()
    }
    this.pins = deps.ungated
      ? undefined
      : new PinGate(deps.lock, (server) => this.loaded.config.servers.get(server)?.dangerouslyAllowHiddenText === true)
    // An inspection command is no session: what it sees withheld is not the audit log's.
    this.withheldReport = new WithheldReport(
      deps.withheldShown ? undefined : deps.logger,
      deps.oneShot ? undefined : deps.audit,
    )
    this.conflictReport = new ConflictReport(deps.logger)
    this.catalogue = new Catalogue(
      [...config.servers.keys()],
      config.namespace,
      serverPrefixes(config.servers),
      this.pins,
    )
    this.supervisor = new ChildSupervisor(config.servers, {
      logger: deps.logger,
      version: deps.version,
      host: deps.host,
      configDir: deps.loaded.dir,
      childSessions: deps.childSessions,
      ...(deps.prespawned ? { prespawned: deps.prespawned } : {}),
      ...(deps.oneShot ? { oneShot: deps.oneShot } : {}),
      ...(deps.reauthorize ? { reauthorize: deps.reauthorize } : {}),
      instances: {
        ...(deps.instancesDir !== undefined ? { dir: deps.instancesDir } : {}),
        secrets: (person) => (name) => this.secrets.store(person).value(name),
        fix: (person, name) => this.secrets.fix(person, name),
        hidden: () => stateRoots(this.loaded, deps.host.env).map((p) => p.path),
      },
      clientCapabilities: () =>
        this.offered ? Promise.resolve(this.offered) : (this.awaited?.promise ?? Promise.resolve({})),
      events: {
        stateChanged: (child, previous) => this.childStateListeners.forEach((listener) => listener(child, previous)),
        listsChanged: (child, kinds) => this.onListsChanged(child, kinds),
        notification: (child, n) => this.routing.notification(child, n),
        request: (child, method, params, signal) => this.routing.request(child, method, params, signal),
        inputSource: (child, caller) => this.routing.inputSourceOf(child, caller as CallOrigin),
      },
    })
  }

  get logger(): Logger {
    return this.deps.logger
  }

  /** Decides what the catalogue withholds (docs/pinning.md); undefined when nothing is (`ungated`). */
  private readonly pins: PinGate | undefined
  private readonly withheldReport: WithheldReport
  private readonly conflictReport: ConflictReport

  /** Whether a lock is in force (without one, only hidden text is withheld). */
  get pinning(): boolean {
    return this.pins?.pinning === true
  }

  /** The lock was read again (it changed on disk) or removed: every definition is judged again at once, and clients hear of it. */
  setLock(lock: DefinitionLock | undefined): void {
    if (!this.pins) return
    this.pins.setLock(lock)
    this.catalogue.regate()
    this.announce(['tools', 'prompts'])
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

  /** Starts the lazy children a principal reaches, not started yet ("first use": the first list that could show them). */
  async startLazy(reaches: (server: string) => boolean): Promise<void> {
    await this.whenStarted()
    const pending = [...this.supervisor.children.values()].filter(
      (c) => c.config.startup === 'lazy' && c.state === 'STOPPED' && c.startedAt === undefined && reaches(c.key),
    )
    await Promise.all(pending.map((c) => this.supervisor.ensureRunning(c.key)))
  }

  private readonly childStateListeners = new Set<(child: ChildConnection, previous: ChildState) => void>()

  /** Calls `listener` on every state change of a child (after the supervisor planned its restart, if any). */
  onChildState(listener: (child: ChildConnection, previous: ChildState) => void): () => void {
    this.childStateListeners.add(listener)
    return () => this.childStateListeners.delete(listener)
  }

  private readonly catalogueListeners = new Set<(kinds: readonly ListKind[]) => void>()

  /** Calls `listener` after every catalogue change, before the connections hear of it. */
  onCatalogueChange(listener: (kinds: readonly ListKind[]) => void): () => void {
    this.catalogueListeners.add(listener)
    return () => this.catalogueListeners.delete(listener)
  }

  private onListsChanged(child: ChildConnection, kinds: readonly ListKind[]): void {
    const instance = this.supervisor.instanceOf(child)
    // An instance's lists are its person's only: told to them when they changed, never to the catalogue.
    if (instance) return this.routing.tell(child, instance, this.instanceLists.changed(child, kinds))
    if (child.state === 'RUNNING') this.catalogue.setServer(child.key, child.lists, kinds)
    else if (child.state === 'FAILED')
      this.catalogue.serverDown(child.key) // crashed: a call to its tools says so
    else this.catalogue.clearServer(child.key)
    this.announce(kinds)
  }

  /** Tells the catalogue's listeners and every connection that some lists changed; logs new conflicts. */
  private announce(kinds: readonly ListKind[]): void {
    for (const listener of this.catalogueListeners) listener(kinds)
    if (kinds.includes('tools') || kinds.includes('prompts'))
      this.withheldReport.update(this.catalogue.withheld(), (e: WithheldEntry) =>
        e.kind === 'tool' ? this.catalogue.toolById(e.id) !== undefined : this.catalogue.promptById(e.id) !== undefined,
      )
    this.conflictReport.update(this.catalogue.conflicts)
    const changed = new Set<'tools' | 'prompts' | 'resources'>()
    // Skill changes travel as resources/list_changed, as the Skills extension does.
    for (const kind of kinds) changed.add(kind === 'resourceTemplates' || kind === 'skills' ? 'resources' : kind)
    for (const connection of this.routing.connections) connection.catalogueChanged(changed)
  }

  /** Whose call, if any, is waiting on `child` now (ChildRouting.originOf). */
  originOf(child: Pick<ChildConnection, 'callersInFlight'>): ChildRequestOrigin {
    return this.routing.originOf(child)
  }

  /** Marks a connection as the one that last sent a request. */
  touch(connection: ConnectionHandle): void {
    this.routing.touch(connection)
  }

  addConnection(connection: ConnectionHandle): void {
    this.routing.connections.add(connection)
  }

  removeConnection(connection: ConnectionHandle): void {
    this.routing.remove(connection)
    // Its session ended: so do the instances of session-scoped servers it had (docs/team.md).
    if (connection.who?.sessionId !== undefined) void this.supervisor.endSession(connection.who.sessionId)
    this.asked.forget(connection)
  }

  /** Which records of what clients asked of children each connection holds something in (the records are the slots': children/slot-records.ts). */
  private readonly asked = new AskedRecords()

  /**
   * A connection wants the updates of `uri`, which `child` serves (a shared
   * child, or the instance of the connection's person or session): recorded
   * in the child's record (its slot's: the person's next instance takes it),
   * and asked of the child now and at every start (its session:
   * resources/subscribe, or its listen). Resolves once it is asked; rejects
   * when it refused (the subscription dropped).
   */
  async subscribeResource(connection: ConnectionHandle, child: ChildConnection, uri: string): Promise<void> {
    await this.holding(connection, () => this.asked.subscribe(connection, child.record, uri))
  }

  /** A connection unsubscribed from a resource: its child lets go of it when no other connection holds it. */
  async unsubscribeResource(connection: ConnectionHandle, uri: string): Promise<void> {
    await this.asked.unsubscribe(connection, uri)
  }

  /** A connection set the log level of what `record`'s children send (their slot's: a process running or not). Rejects when the running child refused. */
  async setLogLevel(connection: ConnectionHandle, record: ChildRecord, level: LoggingLevel): Promise<void> {
    await this.holding(connection, () => this.asked.setLevel(connection, record, level))
  }

  /** Records what `connection` asks; if it went away meanwhile (while its instance was starting), nothing stays asked for it. */
  private async holding(connection: ConnectionHandle, ask: () => Promise<void>): Promise<void> {
    try {
      await ask()
    } finally {
      if (!this.routing.connections.has(connection)) this.asked.forget(connection)
    }
  }

  /**
   * Applies a reloaded config: servers added are started, servers removed are
   * stopped, servers whose entry changed are restarted with it, and every
   * other child is left as it is (its calls in flight included). Connections hear
   * of the entries that come and go through the usual list-changed path; a
   * changed server's new processes take what clients asked of the old ones
   * (their slots' records). Resolves with what changed once the new children
   * are up or failed.
   */
  async applyConfig(next: LoadedConfig, drainMs = RELOAD_DRAIN_MS): Promise<ConfigDiff> {
    const diff = diffConfig(this.loaded.config, next.config)
    this.loaded = next
    const { servers } = next.config
    // A changed entry may have a new prefix: the names are made again (its child restarts below).
    if (diff.order || diff.servers.changed.length > 0) {
      this.catalogue.setServerOrder([...servers.keys()], serverPrefixes(servers))
      this.announce(ALL_KINDS)
    }
    const gone = (child: ChildConnection) => {
      this.catalogue.clearServer(child.key)
      this.announce(ALL_KINDS)
    }
    await Promise.all(
      [...diff.servers.removed, ...diff.servers.changed].map((key) => this.supervisor.remove(key, drainMs, gone)),
    )
    await Promise.all(
      [...diff.servers.changed, ...diff.servers.added].map((key) => this.supervisor.add(key, servers.get(key)!)),
    )
    return diff
  }

  /** Tells every running child that the client's roots changed (when children were offered roots at all). */
  async rootsChanged(): Promise<void> {
    if (this.offered && !this.offered.roots) return
    await Promise.all(
      [...this.supervisor.children.values()].map((child) => child.notify('notifications/roots/list_changed')),
    )
  }

  /** Stops every child and its process tree; `urgent` after a signal. */
  async close(options: { urgent?: boolean } = {}): Promise<void> {
    await this.supervisor.stopAll(options.urgent ? URGENT_STOP_BUDGET : undefined)
    // The last spans go out (bounded in time), after the children's last answers; every audit line is in its file.
    await Promise.all([this.deps.tracing?.shutdown(), this.deps.audit?.flush()])
  }

  /** Tracing, when it is on. */
  get tracing(): Tracing | undefined {
    return this.deps.tracing
  }

  /** People's own secrets (`{ "secret": "NAME" }` of a scoped server's env): where they are, and how one is set. */
  readonly secrets: PersonSecretStores

  private personalStores: ((owner: string) => TokenStore) | undefined

  /** Where `owner`'s own OAuth logins are (myc serve --http): the user's file, or what setPersonalStores says (the replicas' shared store). */
  personalStore(owner: string): TokenStore {
    return this.personalStores?.(owner) ?? TokenStore.forUser(owner)
  }

  setPersonalStores(stores: (owner: string) => TokenStore): void {
    this.personalStores = stores
  }
}

import { scopeOf, type ServerConfig, type StdioServerConfig } from '../config/server-schema.js'
import type { Logger } from '../logger.js'
import { backoffDelay } from './backoff.js'
import { ChildConnection, type ChildDeps, type ChildEvents, type ChildState } from './child.js'
import type { StopBudget } from './process-tree.js'
import { LineParser } from '../protocol/line-parser.js'
import type { CommandHost } from './resolve-command.js'
import { LOCAL_PRINCIPAL, type TokenStore } from '../oauth/token-store.js'
import { PersonalConnections } from './personal-connections.js'
import { instancesDir, userState } from '../config/state-roots.js'
import { SecretStore } from '../oauth/secret-store.js'
import { instanceFolders, removeFolders } from './instance-folders.js'
import { filledEntry, instanceEntry, makeEmptyFile, type InstanceStart } from './instance-spawn.js'
import {
  InstancePool,
  type Acquired,
  type InstanceInfo,
  type InstanceOwner,
  type InstanceSummary,
} from './instances.js'
import { userSecrets, type SecretLookup } from './secret-refs.js'
import type { ChildRecord } from './child-record.js'
import { OWN_SLOT, slotOf, SlotRecords } from './slot-records.js'

/** What the instances of scoped servers need from the process that runs them (docs/team.md). */
interface InstanceDeps {
  /** Where their folders are (default: `.mycelium/instances` beside the config). */
  dir?: string
  /** A person's own secrets (default: the user's sealed store, that person's entries). */
  secrets?: (person: string) => SecretLookup
  /** How a person gets a secret kept that is missing (the command, and the route where they may set it themselves). */
  fix?: (person: string, name: string) => string
  /** What a sandboxed instance must not see besides the instances folder and the secret store (every state root: config/state-roots.ts). */
  hidden?: () => readonly string[]
}

/** How a secret is set for a person from the machine myc runs on. */
export function secretCommand(person: string, name: string): string {
  return person === LOCAL_PRINCIPAL
    ? `run: myc secrets set ${name}`
    : `its operator runs: myc secrets set ${name} --principal ${person}`
}

/** What the supervisor reports to the runtime: its children's events (state changes optional). */
type SupervisorEvents = Omit<ChildEvents, 'stateChanged'> & Partial<Pick<ChildEvents, 'stateChanged'>>

export interface SupervisorDeps {
  logger: Logger
  version: string
  host: CommandHost
  configDir: string
  events: SupervisorEvents
  /** The session of each era (src/eras/), handed to every child. */
  childSessions: ChildDeps['childSessions']
  clientCapabilities?: ChildDeps['clientCapabilities']
  prespawned?: ChildDeps['prespawned']
  /** Asks the person to authorize an HTTP child again (not for the connections of other people: they log in through myc serve --http). */
  reauthorize?: ChildDeps['reauthorize']
  /** People's own connections (personalFor): how many are kept at once, and after how long unused one is let go (personal-connections.ts). */
  personal?: { max?: number; idleMs?: number; now?: () => number }
  random?: () => number
  /**
   * A one-shot command (status, tools, roles…): no restarts (it ends in a
   * moment), the children's stderr at debug level, and a child that fails
   * is logged as an error once, unless the command shows failures itself.
   */
  oneShot?: { failuresShown: boolean }
  instances?: InstanceDeps
}

/** How many of a one-shot command's child's last stderr lines are shown when it fails. */
const STDERR_TAIL_LINES = 10

/** A child that stayed up this long starts its restart count afresh. */
const STABLE_AFTER_MS = 30_000

/**
 * Owns every child: starts them in parallel (eager) or on first use (lazy),
 * restarts a crashed one with jittered exponential backoff, and stops them all.
 * A failure of one child never touches the others.
 */
export class ChildSupervisor {
  readonly children = new Map<string, ChildConnection>()
  /** What clients asked of each server's own process and of each person's or session's instances, kept across processes. */
  readonly records = new SlotRecords()
  private readonly attempts = new Map<string, number>()
  /** How many times each server has been restarted after a failure, since this process began (never reset: a counter). */
  readonly restarts = new Map<string, number>()
  private readonly timers = new Map<string, NodeJS.Timeout>()
  /** The restart each timer stands for: when it starts, and its number. */
  private readonly planned = new Map<string, { at: number; attempt: number }>()
  /** Servers whose restarts are used up: they stay FAILED until a reload or a restart of myc. */
  private readonly givenUp = new Set<string>()
  private closing = false
  /** One worker for the large lines of every child (started at the first one). */
  private readonly lines = new LineParser()

  constructor(
    servers: ReadonlyMap<string, ServerConfig>,
    private readonly deps: SupervisorDeps,
  ) {
    this.personal = new PersonalConnections(deps, (key) => this.children.get(key), this.records)
    for (const [key, config] of servers) if (!config.disabled) this.children.set(key, this.connection(key, config))
  }

  private connection(key: string, config: ServerConfig): ChildConnection {
    const { deps } = this
    return new ChildConnection(key, config, {
      // A scoped server's own process lists its tools for everyone and serves the local person: it runs as their instance.
      ...(scopeOf(config) !== 'shared' ? { spawnConfig: (c) => this.localEntry(key, c as StdioServerConfig) } : {}),
      ...this.childBasics(),
      // A reload that changes the server: its next process takes what clients asked of this one.
      record: this.records.take(key, OWN_SLOT),
      ...(deps.prespawned ? { prespawned: deps.prespawned } : {}),
      ...(deps.reauthorize ? { reauthorize: deps.reauthorize } : {}),
      ...(deps.oneShot ? { oneShot: { stderrLine: (line: string) => this.keepStderr(key, line) } } : {}),
      events: {
        stateChanged: (child, previous) => this.onStateChanged(child, previous),
        // A child replaced by a reload may still report on its way down: only the current one speaks.
        listsChanged: (child, kinds) =>
          this.children.get(child.key) === child && deps.events.listsChanged(child, kinds),
        notification: (child, n) => this.children.get(child.key) === child && deps.events.notification(child, n),
        request: (child, method, params, signal) => deps.events.request(child, method, params, signal),
        inputSource: (child, caller) => deps.events.inputSource?.(child, caller),
      },
    })
  }

  /** A server added to the config while running: started at once when eager. Resolves when up or failed. */
  async add(key: string, config: ServerConfig): Promise<void> {
    if (this.closing || this.children.has(key)) return
    const child = this.connection(key, config)
    this.children.set(key, child)
    // A failed start was logged when the child turned FAILED (onStateChanged), before its restart was planned.
    if (config.startup !== 'lazy') await child.start().catch(() => {})
  }

  /**
   * A server removed from the config while running: calls in flight get
   * `drainMs` to finish, then it stops with its process tree. Its entries
   * leave the catalogue through `onRemoved`.
   */
  async remove(key: string, drainMs: number, onRemoved: (child: ChildConnection) => void): Promise<void> {
    const child = this.children.get(key)
    if (!child) return
    clearTimeout(this.timers.get(key))
    this.timers.delete(key)
    this.planned.delete(key)
    this.givenUp.delete(key)
    this.attempts.delete(key)
    await child.drain(drainMs)
    this.children.delete(key)
    onRemoved(child)
    await Promise.all([child.stop(), this.pools.get(key)?.stopAll()])
    this.records.release(key, OWN_SLOT, child.record)
    this.pools.delete(key)
    await this.dropLocalFolders(key, child.config)
  }

  /** Starts every eager child in parallel; resolves when each is RUNNING or FAILED. */
  async startAll(): Promise<void> {
    // A failed start was logged when the child turned FAILED (onStateChanged), before its restart was planned.
    await Promise.all(
      [...this.children.values()]
        .filter((child) => child.config.startup !== 'lazy')
        .map((child) => child.start().catch(() => {})),
    )
  }

  /** For a lazy child: starts it if needed and waits. Resolves false when it could not start. */
  async ensureRunning(key: string): Promise<boolean> {
    const child = this.children.get(key)
    if (!child) return false
    if (child.state === 'RUNNING') return true
    if (this.closing) return false
    try {
      await child.start()
      return true
    } catch {
      return false
    }
  }

  private onStateChanged(child: ChildConnection, previous: ChildState): void {
    this.deps.logger.debug(
      `[${child.key}] ${previous} → ${child.state}${child.lastError ? `: ${child.lastError}` : ''}`,
    )
    if (child.state === 'RUNNING') this.givenUp.delete(child.key)
    if (child.state === 'FAILED' && !this.closing && this.children.get(child.key) === child)
      this.scheduleRestart(child, previous === 'RUNNING')
    // After the restart is planned: whoever hears of the state can tell when the next start is.
    this.deps.events.stateChanged?.(child, previous)
  }

  /** The restart planned for a FAILED child: when it starts (epoch ms), its number and how many there may be; undefined when none is. */
  plannedRestart(key: string): { at: number; attempt: number; of: number } | undefined {
    const plan = this.planned.get(key)
    const child = this.children.get(key)
    return plan && child ? { ...plan, of: child.config.restart.maxRetries } : undefined
  }

  /** The number of the restart under way for a child that is starting again, and how many there may be; undefined for a first start. */
  restartUnderWay(key: string): { attempt: number; of: number } | undefined {
    const child = this.children.get(key)
    const attempt = this.attempts.get(key) ?? 0
    return child?.state === 'INITIALIZING' && attempt > 0 && !this.planned.has(key)
      ? { attempt, of: child.config.restart.maxRetries }
      : undefined
  }

  /** Whether the restarts of a FAILED child are used up (it stays down until a reload or a new myc). */
  gaveUp(key: string): boolean {
    return this.givenUp.has(key)
  }

  private scheduleRestart(child: ChildConnection, crashed: boolean): void {
    if (this.timers.has(child.key)) return
    const ranFor = child.startedAt ? Date.now() - child.startedAt.getTime() : 0
    if (crashed && ranFor >= STABLE_AFTER_MS) this.attempts.set(child.key, 0)
    const attempt = this.attempts.get(child.key) ?? 0
    const delay = backoffDelay(attempt, child.config.restart, this.deps.random)
    const log = this.deps.logger.withTag(child.key)
    if (this.deps.oneShot) {
      const words = `${crashed ? 'stopped unexpectedly' : 'could not start'}: ${child.lastError ?? 'unknown error'}`
      if (this.deps.oneShot.failuresShown) log.debug(`${words} (not restarted: a one-shot command)`)
      else log.error(`${words} (\`myc status\` shows every server)`)
      // Its stderr is the likeliest reason: shown now, whatever the log level.
      const tail = this.stderrTails.get(child.key) ?? []
      if (tail.length > 0)
        log.warn(`its last ${tail.length === 1 ? 'line' : `${tail.length} lines`} on stderr:\n${tail.join('\n')}`)
      this.stderrTails.delete(child.key)
      return
    }
    // What happened first, then what is planned: the start's failure is logged before its restart.
    if (!crashed) log.error(`could not start: ${child.lastError ?? 'unknown error'}`)
    if (delay === undefined) {
      this.givenUp.add(child.key)
      log.error(`giving up after ${attempt} restarts${crashed ? `: ${child.lastError ?? 'unknown error'}` : ''}`)
      return
    }
    if (crashed) log.warn(`stopped unexpectedly (${child.lastError ?? 'unknown'}); restarting in ${delay} ms`)
    else log.warn(`restarting in ${delay} ms (attempt ${attempt + 1} of ${child.config.restart.maxRetries})`)
    this.attempts.set(child.key, attempt + 1)
    this.planned.set(child.key, { at: Date.now() + delay, attempt: attempt + 1 })
    const timer = setTimeout(() => {
      this.timers.delete(child.key)
      this.planned.delete(child.key)
      if (this.closing) return
      this.restarts.set(child.key, (this.restarts.get(child.key) ?? 0) + 1)
      child.start().then(
        () => log.success('running again'),
        () => {},
      )
    }, delay)
    timer.unref()
    this.timers.set(child.key, timer)
  }

  private readonly stderrTails = new Map<string, string[]>()

  /** One-shot: a child's stderr line at debug level (`--verbose`), its last lines kept to show should it fail. */
  private keepStderr(key: string, line: string): void {
    this.deps.logger.withTag(key).debug(line)
    const tail = this.stderrTails.get(key) ?? []
    tail.push(line)
    if (tail.length > STDERR_TAIL_LINES) tail.shift()
    this.stderrTails.set(key, tail)
  }

  /** Connections of an HTTP server that carry one person's own OAuth login (personal-connections.ts). */
  private readonly personal: PersonalConnections

  /** HTTP server `key`'s connection for `owner`'s own OAuth login (`store`): PersonalConnections.connectionFor. */
  personalFor(key: string, owner: string, store: TokenStore): Promise<ChildConnection | undefined> {
    return this.closing ? Promise.resolve(undefined) : this.personal.connectionFor(key, owner, store)
  }

  /** How many people's connections are open now. */
  get personalCount(): number {
    return this.personal.count
  }

  /** Stops every child (and its process tree) in parallel, every scoped server's instances with them. */
  async stopAll(budget?: StopBudget): Promise<void> {
    this.closing = true
    for (const timer of this.timers.values()) clearTimeout(timer)
    this.timers.clear()
    this.planned.clear()
    await Promise.all([
      ...[...this.children.values()].map((child) => child.stop(budget)),
      this.personal.stopAll(budget),
      ...[...this.pools.values()].map((pool) => pool.stopAll(budget)),
    ])
    await Promise.all([...this.children.values()].map((child) => this.dropLocalFolders(child.key, child.config)))
    this.pools.clear()
    this.lines.close()
  }

  /** The instances of scoped servers, by server; and the stops under way of those stopped for good, by folder. */
  private readonly pools = new Map<string, InstancePool>()
  private readonly leaving = new Map<string, Promise<void>>()
  private readonly instanceInfo = new WeakMap<ChildConnection, InstanceInfo>()

  /** The person whose own OAuth login `child` carries, when it is one of people's own connections (personalFor). */
  personalOwnerOf(child: ChildConnection): string | undefined {
    return this.personal.ownerOf(child)
  }

  /** Whom `child` runs for, when it is an instance of a scoped server (not its own process, which is the local person's). */
  instanceOf(child: ChildConnection): InstanceInfo | undefined {
    return this.instanceInfo.get(child)
  }

  /**
   * The running instance of scoped server `key` for `owner`, started or
   * made if need be (children/instances.ts), or why there is none now.
   * Undefined for a server not in the config, or not scoped.
   */
  async instanceFor(key: string, owner: InstanceOwner): Promise<Acquired | undefined> {
    const shared = this.children.get(key)
    if (!shared || this.closing || shared.config.type !== 'stdio' || scopeOf(shared.config) === 'shared')
      return undefined
    let pool = this.pools.get(key)
    // A reload that changed the server: its old instances go.
    if (pool && pool.config !== shared.config) {
      void pool.stopAll()
      pool = undefined
    }
    if (!pool) {
      pool = this.pool(key, shared.config)
      this.pools.set(key, pool)
    }
    return pool.acquire(owner)
  }

  /** What `owner`'s clients ask of scoped server `key`, an instance running or not; undefined where instanceFor has none. */
  recordFor(key: string, owner: InstanceOwner): ChildRecord | undefined {
    const shared = this.children.get(key)
    if (!shared || shared.config.type !== 'stdio' || scopeOf(shared.config) === 'shared') return undefined
    return this.records.of(key, slotOf(owner))
  }

  /** What `owner`'s clients ask of a server logged in per person (personalFor), a connection of theirs open or not. */
  personalRecord(key: string, owner: string): ChildRecord {
    return this.records.of(key, slotOf({ person: owner }))
  }

  /** Every scoped server's instances now. */
  instances(): InstanceSummary[] {
    return [...this.pools.values()].flatMap((pool) => pool.list())
  }

  /** How many instances each scoped server runs now (those without any included), besides its own process. */
  instanceCounts(): Map<string, number> {
    const counts = new Map<string, number>()
    for (const [key, child] of this.children) if (scopeOf(child.config) !== 'shared') counts.set(key, 0)
    for (const [key, pool] of this.pools) counts.set(key, pool.size)
    return counts
  }

  /** A session ended: its instances stop (scope session), and what its clients asked of them goes. */
  async endSession(session: string): Promise<void> {
    this.records.endSession(session)
    await Promise.all([...this.pools.values()].map((pool) => pool.endSession(session)))
  }

  /** A person's secrets changed: their idle instances stop, so that the next call starts one with the new values. */
  async personChanged(person: string): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.personChanged(person)))
  }

  /** What every child connection of this supervisor is made with: a server's own process and each instance. */
  private childBasics() {
    const { lines, deps } = this
    const { logger, version, host, configDir, childSessions, clientCapabilities: caps } = deps
    return { logger, version, host, configDir, childSessions, lines, ...(caps && { clientCapabilities: caps }) }
  }

  private pool(key: string, config: StdioServerConfig): InstancePool {
    const { deps } = this
    return new InstancePool(key, config, {
      logger: deps.logger,
      child: this.childBasics(),
      events: deps.events,
      start: (owner) => this.instanceStart(owner),
      dir: this.instancesDir,
      records: this.records.forServer(key),
      leaving: this.leaving,
      made: (child, info) => this.instanceInfo.set(child, info),
      restarted: (server) => this.restarts.set(server, (this.restarts.get(server) ?? 0) + 1),
      ...(deps.random ? { random: deps.random } : {}),
    })
  }

  private get instancesDir(): string {
    return this.deps.instances?.dir ?? instancesDir(this.deps.configDir)
  }

  private machineSecrets: SecretLookup | undefined
  private sandboxProbe: Promise<string | undefined> | undefined
  private emptyFile: string | undefined

  /** What an instance's start needs for `owner` (instance-spawn.ts), its folders aside. */
  private instanceStart(owner: InstanceOwner): Omit<InstanceStart, 'folders'> {
    const { deps } = this
    const { person } = owner
    const own = deps.instances?.secrets?.(person)
    return {
      machine: (this.machineSecrets ??= userSecrets(deps.host.env)),
      person: {
        person,
        lookup: own ?? ((name) => SecretStore.forUser(deps.host.env, { principal: person }).value(name)),
        fix: (name) => deps.instances?.fix?.(person, name) ?? secretCommand(person, name),
      },
      host: deps.host,
      configDir: deps.configDir,
      hidden: [this.instancesDir, userState(deps.host.env).configDir.path, ...(deps.instances?.hidden?.() ?? [])],
      sandboxProblem: () => (this.sandboxProbe ??= this.probeSandbox()),
      emptyFile: () => (this.emptyFile ??= makeEmptyFile()),
    }
  }

  private async probeSandbox(): Promise<string | undefined> {
    const { ExecutorProbe } = await import('../sandbox/probe.js')
    const report = await new ExecutorProbe().probe('bubblewrap')
    return report.works ? undefined : `${report.reason} (fix: ${report.fix})`
  }

  /** What a scoped server's own process starts with: the local person's instance (their secrets, their folders). */
  private async localEntry(key: string, config: StdioServerConfig): Promise<ServerConfig> {
    const start = { ...this.instanceStart({ person: LOCAL_PRINCIPAL }), folders: this.localFolders(key) }
    return instanceEntry(await filledEntry(config, start), start)
  }

  private localFolders(key: string) {
    return instanceFolders(this.instancesDir, key, LOCAL_PRINCIPAL)
  }

  /** A scoped server's own process stopped for good: its folders go, unless persist. */
  private async dropLocalFolders(key: string, config: ServerConfig): Promise<void> {
    if (scopeOf(config) === 'shared' || (config.type === 'stdio' && config.persist)) return
    await removeFolders(this.localFolders(key)).catch(() => {})
  }
}

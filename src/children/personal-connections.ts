import type { Logger } from '../logger.js'
import type { TokenStore } from '../oauth/token-store.js'
import { ChildConnection, type ChildDeps, type ChildEvents } from './child.js'
import type { StopBudget } from './process-tree.js'
import type { CommandHost } from './resolve-command.js'
import { slotOf, type SlotRecords } from './slot-records.js'

/** What the people's connections need of the supervisor's deps (SupervisorDeps has them all). */
export interface PersonalDeps {
  logger: Logger
  version: string
  host: CommandHost
  configDir: string
  childSessions: ChildDeps['childSessions']
  clientCapabilities?: ChildDeps['clientCapabilities']
  events: Pick<ChildEvents, 'request' | 'inputSource' | 'notification'>
  /** How many are kept at once, and after how long unused one is let go (defaults MAX_PERSONAL, PERSONAL_IDLE_MS). */
  personal?: { max?: number; idleMs?: number; now?: () => number }
}

/** People's own connections kept at once; beyond, the one unused longest is let go. */
const MAX_PERSONAL = 256
/** A person's connection unused this long is let go; their next call opens it again. */
const PERSONAL_IDLE_MS = 10 * 60_000

/**
 * The connections of HTTP servers that carry one person's own OAuth login
 * (`myc serve --http`), by server and owner, least recently used first.
 * Their lists and state are their own, never the catalogue's (the shared
 * connection lists the tools).
 */
export class PersonalConnections {
  private readonly open = new Map<string, ChildConnection>()
  private readonly used = new Map<string, number>()
  /** Whose login each connection carries. */
  private readonly owners = new WeakMap<ChildConnection, string>()

  constructor(
    private readonly deps: PersonalDeps,
    private readonly shared: (key: string) => ChildConnection | undefined,
    /** What each person's clients asked of a server (log level, subscriptions): their slot's record, kept across their connections. */
    private readonly records: SlotRecords,
  ) {}

  /**
   * The connection of HTTP server `key` whose requests carry `owner`'s own
   * OAuth login (`store`, that principal's entries): made on first use and
   * started whenever it is not running (a person who has just logged in is
   * tried again at once; no restart timer). The child's questions during a
   * call reach the caller as any child's do. Undefined for a server not in
   * the config, or not over HTTP.
   */
  async connectionFor(key: string, owner: string, store: TokenStore): Promise<ChildConnection | undefined> {
    const shared = this.shared(key)
    if (!shared || shared.config.type === 'stdio') return undefined
    const id = `${key}\0${owner}`
    let child = this.open.get(id)
    // A reload that changed the server: the old person's connection goes.
    if (child && child.config !== shared.config) {
      void this.retire(child)
      child = undefined
    }
    child ??= this.connection(shared, owner, store)
    // Most recently used last; the others are let go when idle too long or too many.
    this.open.delete(id)
    this.open.set(id, child)
    this.used.set(id, (this.deps.personal?.now ?? Date.now)())
    this.letGo(id)
    if (child.state !== 'RUNNING') await child.start().catch(() => {})
    return child
  }

  /** The person whose own login `child` carries, when it is one of these connections. */
  ownerOf(child: ChildConnection): string | undefined {
    return this.owners.get(child)
  }

  /** How many are open now. */
  get count(): number {
    return this.open.size
  }

  /** Stops them all (myc is stopping). */
  async stopAll(budget?: StopBudget): Promise<void> {
    const all = [...this.open.values()]
    this.open.clear()
    this.used.clear()
    await Promise.all(all.map((child) => this.retire(child, budget)))
  }

  /** Stops a connection for good; its person's record stays while it holds something (their next connection takes it). */
  private async retire(child: ChildConnection, budget?: StopBudget): Promise<void> {
    const owner = this.owners.get(child)
    await child.stop(budget)
    if (owner !== undefined) this.records.release(child.key, slotOf({ person: owner }), child.record)
  }

  private connection(shared: ChildConnection, owner: string, store: TokenStore): ChildConnection {
    const { deps } = this
    const key = shared.key
    const child = new ChildConnection(key, shared.config, {
      // The person's level and subscriptions, asked again at each start of this connection and of their next.
      record: this.records.take(key, slotOf({ person: owner })),
      logger: deps.logger,
      version: deps.version,
      host: deps.host,
      configDir: deps.configDir,
      childSessions: deps.childSessions,
      tokenStore: store,
      ...(deps.clientCapabilities ? { clientCapabilities: deps.clientCapabilities } : {}),
      events: {
        stateChanged: (c, previous) =>
          deps.logger.debug(`[${key}, for ${owner}] ${previous} → ${c.state}${c.lastError ? `: ${c.lastError}` : ''}`),
        listsChanged: () => {},
        // Heard by the person only (ChildRouting asks ownerOf): a log message during a call goes to its caller.
        notification: (c, notification) => deps.events.notification(c, notification),
        request: (c, method, params, signal) => deps.events.request(c, method, params, signal),
        inputSource: (c, caller) => deps.events.inputSource?.(c, caller),
      },
    })
    this.owners.set(child, owner)
    return child
  }

  /** Stops connections unused for PERSONAL_IDLE_MS, and the least recently used beyond MAX_PERSONAL; never one with a call in flight, nor `keep`. */
  private letGo(keep: string): void {
    const max = this.deps.personal?.max ?? MAX_PERSONAL
    const idleBefore = (this.deps.personal?.now ?? Date.now)() - (this.deps.personal?.idleMs ?? PERSONAL_IDLE_MS)
    for (const [id, child] of this.open) {
      if (id === keep || !child.callersInFlight().next().done) continue
      if (this.open.size <= max && (this.used.get(id) ?? 0) > idleBefore) continue
      this.open.delete(id)
      this.used.delete(id)
      void this.retire(child)
    }
  }
}

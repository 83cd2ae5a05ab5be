import type { StdioServerConfig } from '../config/server-schema.js'
import { DEFAULT_INSTANCE_IDLE_MS, DEFAULT_MAX_INSTANCES } from '../config/server-schema.js'
import type { Logger } from '../logger.js'
import { backoffDelay } from './backoff.js'
import { ChildConnection, type ChildDeps, type ChildEvents, type ChildState } from './child.js'
import { instanceFolders, removeFolders, type InstanceFolders } from './instance-folders.js'
import { filledEntry, fingerprint, instanceEntry, type InstanceStart } from './instance-spawn.js'
import type { StopBudget } from './process-tree.js'
import { missingSecretIn } from './secret-refs.js'
import { sessionSlot, slotOf, type ServerRecords } from './slot-records.js'

/**
 * The instances of one scoped server (docs/team.md): one process per person
 * (`scope: "principal"`) or per MCP session (`"session"`), each a child
 * connection of its own with its own folders and its person's secrets.
 * Started on first use, kept while used (a call in flight, or a task it runs
 * for its person), stopped after `idleMs` without a request, at most
 * `maxInstances` at once (the least recently used idle one makes room; none
 * idle, the call is refused at once), restarted after a crash with backoff
 * of its own: one person's instance never touches another's. What a
 * person's clients asked (their subscriptions, their log level) is their
 * slot's, not an instance's (slot-records.ts): each instance made for them
 * is asked for it at its start. It keeps no instance running: none runs
 * between an idle stop and the person's next call.
 */

/** Whom an instance runs for. */
export interface InstanceOwner {
  /** The person: an HTTP token's `name`, `jwt:<sub>`, or `local` (whoever runs myc). */
  person: string
  /** The MCP session (`scope: "session"` and a 2025 session). */
  session?: string
}

/** What is known of an instance (the runtime routes its messages by it; spans and the audit log name it). */
export interface InstanceInfo extends InstanceOwner {
  server: string
  scope: 'principal' | 'session'
}

/** An instance as `GET /instances` lists it. */
export interface InstanceSummary {
  server: string
  scope: 'principal' | 'session'
  principal: string
  session?: string
  pid: number | null
  state: ChildState
  /** Requests it is answering now. */
  inFlight: number
  /** Tasks it runs for its callers now (each keeps it from being stopped while idle, task-holds.ts). */
  tasks: number
  startedAt: string | null
  lastUsed: string
}

/** A call's instance, or why there is none now (a tool error's text: temporary, or the fix). */
export type Acquired = { child: ChildConnection; instance: InstanceInfo } | { refused: string }

export interface PoolDeps {
  logger: Logger
  /** What every child connection shares (version, host, client capabilities…). */
  child: Omit<ChildDeps, 'events' | 'spawnConfig'>
  /** Where the instance's messages go (the runtime tells them only to their person's sessions). */
  events: Omit<ChildEvents, 'stateChanged'>
  /** Its start's secrets, sandbox and hidden paths, for whom it runs. */
  start(owner: InstanceOwner): Omit<InstanceStart, 'folders'>
  /** The instances folder (instance-folders.ts). */
  dir: string
  /** The stops under way of instances stopped for good, by their folder (shared by the pools of every reload: a new one starts after). */
  leaving: Map<string, Promise<void>>
  /** What clients asked of each slot (person or session), which every instance made for it takes (slot-records.ts). */
  records: ServerRecords
  /** Told of every instance made (the supervisor's `instanceOf`). */
  made(child: ChildConnection, info: InstanceInfo): void
  /** Told of every restart after a failure (`myc_child_restarts_total`). */
  restarted(server: string): void
  now?: () => number
  random?: () => number
}

interface Instance {
  info: InstanceInfo
  child: ChildConnection
  folders: InstanceFolders
  lastUsed: number
  /** Handed to a caller that has not sent its request yet (cleared once it has). */
  reserved: boolean
  attempts: number
  restart?: NodeJS.Timeout
  /** What its running process was started with (a changed secret means a new one). */
  started?: string
  /** Its last start found its person's secret missing: no restart can help until it is set. */
  missing?: boolean
}

/** A child that stayed up this long starts its restart count afresh. */
const STABLE_AFTER_MS = 30_000

export class InstancePool {
  /** By key, least recently used first. */
  private readonly instances = new Map<string, Instance>()
  private sweeper: NodeJS.Timeout | undefined
  private closing = false

  constructor(
    readonly server: string,
    readonly config: StdioServerConfig,
    private readonly deps: PoolDeps,
  ) {}

  private get idleMs(): number {
    return this.config.idleMs ?? DEFAULT_INSTANCE_IDLE_MS
  }

  private get max(): number {
    return this.config.maxInstances ?? DEFAULT_MAX_INSTANCES
  }

  private now(): number {
    return (this.deps.now ?? Date.now)()
  }

  get size(): number {
    return this.instances.size
  }

  /**
   * The running instance for `owner`, started (or made) now if need be; or
   * why the call cannot have one: every instance busy at the cap, restarting
   * after a crash, its person's secret not kept, or a start that failed.
   */
  async acquire(owner: InstanceOwner): Promise<Acquired> {
    if (this.closing) return { refused: `Server "${this.server}" is stopping` }
    const key = slotOf(owner)
    this.sweep(key)
    let instance = this.instances.get(key)
    if (instance) {
      const stale = await this.staleness(instance)
      if (stale !== undefined) return stale
      instance = this.instances.get(key)
    }
    if (!instance) {
      if (!this.makeRoom())
        return { refused: `${this.server}: every instance is busy (maxInstances ${this.max}); retry shortly` }
      instance = this.make(key, owner)
    }
    return this.ready(instance)
  }

  /** Starts `instance` unless it runs; marks it used and held for its caller until the request is sent. */
  private async ready(instance: Instance): Promise<Acquired> {
    this.use(instance)
    if (instance.restart)
      return {
        refused: `Server "${this.server}" is restarting for you after it stopped (${instance.child.lastError ?? 'unknown'}); retry shortly`,
      }
    if (instance.child.state !== 'RUNNING') {
      try {
        await instance.child.start()
      } catch (error) {
        const missing = missingSecretIn(error)
        if (missing) {
          void this.remove(instance)
          return { refused: `Server "${this.server}" ${missing.message}` }
        }
        return { refused: `Server "${this.server}" could not start for you: ${instance.child.lastError ?? 'unknown'}` }
      }
    }
    this.use(instance)
    instance.reserved = true
    // Held until the caller's request is on its way (it sends it in the same turn): no other caller's room-making stops it meanwhile.
    setImmediate(() => (instance.reserved = false))
    return { child: instance.child, instance: instance.info }
  }

  /**
   * A running instance whose secrets changed since it started is replaced
   * when idle (the next one gets the new values); one whose person's secret
   * is gone is stopped when idle, and the call is refused naming the secret:
   * never a fallback to anyone else's value.
   */
  private async staleness(instance: Instance): Promise<Acquired | undefined> {
    if (instance.child.state !== 'RUNNING' || instance.started === undefined) return undefined
    let now: string
    try {
      now = fingerprint(await filledEntry(this.config, this.startOf(instance)))
    } catch (error) {
      const missing = missingSecretIn(error)
      if (!missing) return undefined
      if (!this.busy(instance)) void this.remove(instance)
      return { refused: `Server "${this.server}" ${missing.message}` }
    }
    if (now !== instance.started && !this.busy(instance)) {
      this.deps.logger.debug(`[${this.server}, for ${this.who(instance.info)}] its secrets changed: a new instance`)
      await this.remove(instance)
    }
    return undefined
  }

  private use(instance: Instance): void {
    instance.lastUsed = this.now()
    const key = this.keyOf(instance)
    this.instances.delete(key)
    this.instances.set(key, instance)
  }

  private keyOf(instance: Instance): string {
    return slotOf(instance.info)
  }

  /** Whether a request is on its way to the instance, in flight, or its start is under way, or it runs a task for its person (child-tasks.ts). */
  private busy(instance: Instance): boolean {
    const { child } = instance
    return instance.reserved || child.inFlight > 0 || child.state === 'INITIALIZING' || child.heldTasks.any()
  }

  /** Below the cap, or one idle instance (the least recently used) stopped to make room; false when every one is busy. */
  private makeRoom(): boolean {
    if (this.instances.size < this.max) return true
    for (const instance of this.instances.values()) {
      if (this.busy(instance)) continue
      this.deps.logger.debug(
        `[${this.server}] maxInstances ${this.max}: stopping ${this.who(instance.info)}'s, unused longest`,
      )
      void this.remove(instance)
      return true
    }
    return false
  }

  private who(info: InstanceInfo): string {
    return info.session !== undefined ? `session ${info.session.slice(0, 8)}` : info.person
  }

  private startOf(instance: Instance): InstanceStart {
    return { ...this.deps.start(instance.info), folders: instance.folders }
  }

  private make(key: string, owner: InstanceOwner): Instance {
    const info: InstanceInfo = {
      server: this.server,
      scope: owner.session !== undefined ? 'session' : 'principal',
      person: owner.person,
      ...(owner.session !== undefined ? { session: owner.session } : {}),
    }
    const folders = instanceFolders(
      this.deps.dir,
      this.server,
      owner.session !== undefined ? `session:${owner.session}` : owner.person,
    )
    const { events } = this.deps
    const instance: Instance = { info, folders, lastUsed: this.now(), reserved: false, attempts: 0 } as Instance
    const current = () => this.instances.get(key) === instance
    instance.child = new ChildConnection(this.server, this.config, {
      ...this.deps.child,
      // What its person's (or session's) clients asked is the slot's: every instance made for it is asked again.
      record: this.deps.records.take(key),
      spawnConfig: async () => {
        // Its slot's last instance may be stopping still: it starts once that one's folders (the same) are gone.
        await this.deps.leaving.get(folders.root)
        const start = this.startOf(instance)
        const filled = await filledEntry(this.config, start).catch((error: unknown) => {
          instance.missing = missingSecretIn(error) !== undefined
          throw error
        })
        instance.missing = false
        instance.started = fingerprint(filled)
        return instanceEntry(filled, start)
      },
      events: {
        stateChanged: (_child, previous) => this.stateChanged(instance, previous),
        listsChanged: (child, kinds) => current() && events.listsChanged(child, kinds),
        notification: (child, n) => current() && events.notification(child, n),
        request: (child, method, params, signal) => events.request(child, method, params, signal),
        inputSource: (child, caller) => events.inputSource?.(child, caller),
      },
    })
    this.deps.made(instance.child, info)
    this.instances.set(key, instance)
    this.sweepEvery()
    return instance
  }

  private stateChanged(instance: Instance, previous: ChildState): void {
    const { child } = instance
    this.deps.logger.debug(
      `[${this.server}, for ${this.who(instance.info)}] ${previous} → ${child.state}${child.lastError ? `: ${child.lastError}` : ''}`,
    )
    if (child.state !== 'FAILED' || this.closing || this.instances.get(this.keyOf(instance)) !== instance) return
    // A secret not kept: the call that started it says so, and the instance goes.
    if (instance.missing) return void this.remove(instance)
    this.scheduleRestart(instance, previous === 'RUNNING')
  }

  /** Restarts a failed instance after its own backoff (the server's `restart` settings); gives up after maxRetries, until its person calls again. */
  private scheduleRestart(instance: Instance, crashed: boolean): void {
    if (instance.restart) return
    const { child } = instance
    const ranFor = child.startedAt ? this.now() - child.startedAt.getTime() : 0
    if (crashed && ranFor >= STABLE_AFTER_MS) instance.attempts = 0
    const delay = backoffDelay(instance.attempts, this.config.restart, this.deps.random)
    const log = this.deps.logger.withTag(`${this.server}, for ${this.who(instance.info)}`)
    if (delay === undefined) {
      log.warn(`giving up after ${instance.attempts} restarts: ${child.lastError ?? 'unknown error'}`)
      instance.attempts = 0
      return
    }
    log.warn(
      `${crashed ? 'stopped unexpectedly' : 'could not start'} (${child.lastError ?? 'unknown'}); restarting in ${delay} ms`,
    )
    instance.attempts++
    instance.restart = setTimeout(() => {
      instance.restart = undefined
      if (this.closing || this.instances.get(this.keyOf(instance)) !== instance) return
      this.deps.restarted(this.server)
      child.start().then(
        () => log.success('running again'),
        () => {},
      )
    }, delay)
    instance.restart.unref()
  }

  /** Stops the instances idle longer than idleMs (never `keep`, never a busy one). */
  private sweep(keep?: string): void {
    const before = this.now() - this.idleMs
    for (const [key, instance] of this.instances) {
      if (key === keep || this.busy(instance) || instance.lastUsed > before) continue
      this.deps.logger.debug(
        `[${this.server}] ${this.who(instance.info)}'s instance was idle ${this.idleMs} ms: stopped`,
      )
      void this.remove(instance)
    }
  }

  /** Sweeps a few times per idleMs while there are instances (unref'd: never keeps myc running). */
  private sweepEvery(): void {
    if (this.sweeper) return
    this.sweeper = setInterval(
      () => {
        this.sweep()
        if (this.instances.size === 0) {
          clearInterval(this.sweeper)
          this.sweeper = undefined
        }
      },
      Math.min(60_000, Math.max(50, Math.floor(this.idleMs / 4))),
    )
    this.sweeper.unref()
  }

  /**
   * Stops an instance with its process tree, and removes its folders unless
   * `persist`. It leaves the pool at once: the next instance of its slot may
   * be made meanwhile, and starts once this one is gone (`leaving`).
   */
  private async remove(instance: Instance, budget?: StopBudget): Promise<void> {
    const key = this.keyOf(instance)
    if (this.instances.get(key) === instance) this.instances.delete(key)
    clearTimeout(instance.restart)
    instance.restart = undefined
    const { leaving } = this.deps
    const root = instance.folders.root
    const gone = this.stopped(instance, key, budget)
    leaving.set(root, gone)
    await gone
    if (leaving.get(root) === gone) leaving.delete(root)
  }

  /** Stops its process tree; then its slot's record is let go of (kept if anything is held in it) and its folders removed unless `persist`. */
  private async stopped(instance: Instance, key: string, budget: StopBudget | undefined): Promise<void> {
    await instance.child.stop(budget)
    this.deps.records.release(key, instance.child.record)
    if (!this.config.persist) await removeFolders(instance.folders).catch(() => {})
  }

  /** Stops the instance of a session that ended (its DELETE, its idle end, its client gone). */
  async endSession(session: string): Promise<void> {
    const instance = this.instances.get(sessionSlot(session))
    if (instance) await this.remove(instance)
  }

  /** Stops `person`'s idle instances (their secrets changed: the next call starts one with the new values). */
  async personChanged(person: string): Promise<void> {
    const theirs = [...this.instances.values()].filter((i) => i.info.person === person && !this.busy(i))
    await Promise.all(theirs.map((i) => this.remove(i)))
  }

  /** What is running now, least recently used first. */
  list(): InstanceSummary[] {
    return [...this.instances.values()].map(({ info, child, lastUsed }) => ({
      server: info.server,
      scope: info.scope,
      principal: info.person,
      ...(info.session !== undefined ? { session: info.session } : {}),
      pid: child.pid ?? null,
      state: child.state,
      inFlight: child.inFlight,
      tasks: child.heldTasks.count(),
      startedAt: child.startedAt?.toISOString() ?? null,
      lastUsed: new Date(lastUsed).toISOString(),
    }))
  }

  /** Stops every instance (their folders removed unless persist); nothing starts after. */
  async stopAll(budget?: StopBudget): Promise<void> {
    this.closing = true
    clearInterval(this.sweeper)
    this.sweeper = undefined
    await Promise.all([...this.instances.values()].map((i) => this.remove(i, budget)))
  }
}

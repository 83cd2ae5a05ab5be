import type { LoggingLevel } from '@modelcontextprotocol/client'
import type { ChildSession, SessionLink } from './child-session.js'

/**
 * What myc's clients asked of a child: which client (a holder, opaque here)
 * wants the updates of which resource, and the log level each set
 * (logging/setLevel; the one set last is in force). The record is a
 * slot's, not a process's (slot-records.ts): a shared child's, or a scoped
 * server's person's or session's, whichever process serves it now. It
 * outlives the child's restarts and its instances: every session of a child
 * that holds it asks for it again at its start (`kept`: a 2025 child with
 * logging/setLevel and resources/subscribe, a 2026 child with its listen
 * and envelopes), and the running session (`attach`) is told of each change.
 */
export class ChildRecord {
  /** What each start's session asks for (SessionLink.kept): the level in force, the resources anyone holds. */
  readonly kept: SessionLink['kept'] = { resourceUris: [] }
  private readonly holders = new Map<string, Set<object>>()
  /** The level each holder set, the one set last at the end. */
  private readonly levels = new Map<object, LoggingLevel>()
  /** The session of the process that serves the slot now, if one runs. */
  private session: ChildSession | undefined

  /** `emptied`: told when the last holder let go of everything (its slot may then forget the record). */
  constructor(private readonly emptied: () => void = () => {}) {}

  /** `session` serves the record's slot now: it is told of every change. */
  attach(session: ChildSession): void {
    this.session = session
  }

  /** `session`'s process stopped: nothing more is told to it. */
  detach(session: ChildSession): void {
    if (this.session === session) this.session = undefined
  }

  /** Whether no one holds anything here. */
  get empty(): boolean {
    return this.holders.size === 0 && this.levels.size === 0
  }

  /**
   * `holder` wants the updates of `uri`: recorded, and the child asked for
   * them when it runs (else at its next start). Resolves once it is asked;
   * rejects when it refused them (the record taken back).
   */
  async watch(holder: object, uri: string): Promise<void> {
    let holders = this.holders.get(uri)
    if (holders?.has(holder)) return
    const first = !holders
    if (!holders) this.holders.set(uri, (holders = new Set()))
    holders.add(holder)
    try {
      await this.changed(first ? uri : undefined)
    } catch (error) {
      if (this.drop(uri, holder)) void this.changed().catch(() => {}) // nothing is asked of a child when a resource is let go
      this.settle()
      throw error
    }
  }

  /** `holder` no longer wants the updates of `uri`: the child is let go of it when no one else wants it. Never rejects. */
  async unwatch(holder: object, uri: string): Promise<void> {
    const told = this.drop(uri, holder) ? this.changed() : undefined
    this.settle()
    // Letting go asks nothing that can fail the caller: a child that went away or refuses sends no more updates either way.
    await told?.catch(() => {})
  }

  /**
   * `holder` set the log level `level`: it is the one in force (kept for
   * every later start), and the running child is sent it. Rejects when the
   * running child refused it (it stays recorded).
   */
  async setLevel(holder: object, level: LoggingLevel): Promise<void> {
    this.levels.delete(holder)
    this.levels.set(holder, level)
    this.kept.logLevel = level
    await this.session?.levelChanged()
  }

  /**
   * `holder` is gone: everything it wanted is let go of (the resources no
   * one else wants), and its level with it (the one set last by another
   * holder is in force, and sent to the running child; with none left, a
   * later start is sent none). Never rejects.
   */
  async forget(holder: object): Promise<void> {
    let shrank = false
    for (const uri of [...this.holders.keys()]) shrank = this.drop(uri, holder) || shrank
    const before = this.kept.logLevel
    if (this.levels.delete(holder)) this.kept.logLevel = [...this.levels.values()].at(-1)
    const told = [
      shrank ? this.changed() : undefined,
      this.kept.logLevel !== before && this.kept.logLevel !== undefined ? this.session?.levelChanged() : undefined,
    ]
    this.settle()
    // As unwatch: letting go cannot fail anyone.
    await Promise.all(told.map((t) => t?.catch(() => {})))
  }

  /** Takes `holder` off `uri`; true when no one wants `uri` any more. */
  private drop(uri: string, holder: object): boolean {
    const holders = this.holders.get(uri)
    if (!holders?.delete(holder) || holders.size > 0) return false
    this.holders.delete(uri)
    return true
  }

  /** The resources held changed: the running session (if any) is told; a new one asks for them at its start. */
  private changed(added?: string): Promise<void> {
    this.kept.resourceUris = [...this.holders.keys()].sort()
    return this.session?.resourcesChanged(added) ?? Promise.resolve()
  }

  /** Tells the slot when nothing is held any more. */
  private settle(): void {
    if (this.empty) this.emptied()
  }
}

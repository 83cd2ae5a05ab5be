import type { ChildSession } from './child-session.js'

/**
 * What myc's clients asked of one child's resources: which client (a
 * holder, opaque here) wants the updates of which resource. The record is
 * the ChildConnection's (a shared child's, or one instance's of a scoped
 * server), outlives the child's restarts, and is the one thing every
 * session asks of its child: the resources anyone holds are
 * `kept.resourceUris`, which each start's session asks for again (a 2025
 * child with resources/subscribe, a 2026 child with its listen) and which
 * the running session is told of when they change (resourcesChanged).
 */
export class ChildResources {
  private readonly holders = new Map<string, Set<object>>()

  constructor(
    private readonly kept: { resourceUris: readonly string[] },
    private readonly session: () => ChildSession | undefined,
  ) {}

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
      throw error
    }
  }

  /** `holder` no longer wants the updates of `uri`: the child is let go of it when no one else wants it. Never rejects. */
  async unwatch(holder: object, uri: string): Promise<void> {
    // Letting go asks nothing that can fail the caller: a child that went away or refuses sends no more updates either way.
    if (this.drop(uri, holder)) await this.changed().catch(() => {})
  }

  /** `holder` is gone: everything it wanted is let go of (the resources no one else wants). Never rejects. */
  async forget(holder: object): Promise<void> {
    let shrank = false
    for (const uri of [...this.holders.keys()]) shrank = this.drop(uri, holder) || shrank
    // As unwatch: letting go cannot fail anyone.
    if (shrank) await this.changed().catch(() => {})
  }

  /** What `from` holds (a connection this one replaces: a reload changed the server's entry) is held here too, and asked of this child. */
  adopt(from: ChildResources): Promise<void> {
    for (const [uri, holders] of from.holders) {
      const mine = this.holders.get(uri)
      if (mine) for (const holder of holders) mine.add(holder)
      else this.holders.set(uri, new Set(holders))
    }
    return this.changed()
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
    return this.session()?.resourcesChanged(added) ?? Promise.resolve()
  }
}

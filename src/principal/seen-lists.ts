/**
 * What changed for one principal: the lists a client last heard of, kept
 * per client (a 2025 connection, a 2026 `subscriptions/listen` stream), so
 * that it hears of a list change only when what *it* can see changed. A
 * server it cannot reach changing its tools is none of its business, and
 * telling it would leak that the server exists. What it sees now comes from
 * the same walk the faces list with (server/principal-requests.ts
 * `visibleList`), so a change is judged by what the client would be answered.
 */

/** The lists a client hears of changes to (skills and templates travel as resources, as the Skills extension does). */
export type ListKindName = 'tools' | 'prompts' | 'resources'

const LIST_KINDS: readonly ListKindName[] = ['tools', 'prompts', 'resources']

/** Whether two snapshots of a list hold the same definitions, in the same order (by identity). */
export function sameList(before: readonly unknown[], now: readonly unknown[]): boolean {
  return before.length === now.length && now.every((x, i) => x === before[i])
}

/**
 * The lists one client last heard of. `changed(kind)` compares what it sees
 * now with what it saw, and remembers what it sees now: a kind never seen
 * counts as changed.
 */
export class SeenLists {
  private readonly seen = new Map<ListKindName, readonly unknown[]>()

  constructor(private readonly now: (kind: ListKindName) => readonly unknown[]) {}

  /** Remembers what the client sees now of every kind (it has just been told, or has just come). */
  rememberAll(): void {
    for (const kind of LIST_KINDS) this.seen.set(kind, this.now(kind))
  }

  /** Whether the visible list of a kind differs from what the client last heard of (and remembers it). */
  changed(kind: ListKindName): boolean {
    const now = this.now(kind)
    const before = this.seen.get(kind)
    this.seen.set(kind, now)
    return before === undefined || !sameList(before, now)
  }
}

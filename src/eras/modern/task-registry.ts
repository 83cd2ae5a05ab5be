import type { ChildTask } from '../../children/child-tasks.js'
import { HostedTasks, MAX_TASK_TTL_MS, taskKey } from './hosted-tasks.js'

/** An entry kept this long when the child gives no `ttlMs`. */
export const DEFAULT_TASK_TTL_MS = 3_600_000
/** Tasks remembered at most per runtime; beyond it the least recently used is forgotten. */
const MAX_TASKS = 10_000

/** How long an entry is kept from now, by the task's `ttlMs` (null: as long as myc keeps anything). */
export function keepFor(ttlMs: number | null | undefined): number {
  if (ttlMs === null) return MAX_TASK_TTL_MS
  return Math.min(ttlMs ?? DEFAULT_TASK_TTL_MS, MAX_TASK_TTL_MS)
}

interface LedgerEntry<H> {
  holder: H
  expiresAt: number
}

/**
 * Which child holds each task, by credential: the pure part of the routing
 * (`H`, the holder: a ChildTask, the connection and process run that made
 * it). An entry lives for its task's `ttlMs` from the last time the child
 * answered about it, and the map holds at most `max` of them (the least
 * recently used goes first; `forgotten` hears of each entry it drops).
 */
export class TaskLedger<H> {
  private readonly entries = new Map<string, LedgerEntry<H>>()

  constructor(
    private readonly now: () => number = Date.now,
    private readonly max = MAX_TASKS,
    private readonly forgotten: (holder: H) => void = () => {},
  ) {}

  get size(): number {
    return this.entries.size
  }

  /** `owner`'s task `taskId` is held by `holder`, for `ttlMs` from now (remembered again: pushed back, the most recently used). */
  remember(owner: string, taskId: string, holder: H, ttlMs: number | null | undefined): void {
    const key = taskKey(owner, taskId)
    this.entries.delete(key)
    this.entries.set(key, { holder, expiresAt: this.now() + keepFor(ttlMs) })
    if (this.entries.size > this.max) this.evict()
  }

  /** What holds `owner`'s task `taskId`; undefined for a task `owner` has not (any longer): another's included. */
  holderOf(owner: string, taskId: string): H | undefined {
    const key = taskKey(owner, taskId)
    const entry = this.entries.get(key)
    if (!entry) return undefined
    if (entry.expiresAt <= this.now()) {
      this.drop(key, entry)
      return undefined
    }
    return entry.holder
  }

  private drop(key: string, entry: LedgerEntry<H>): void {
    this.entries.delete(key)
    this.forgotten(entry.holder)
  }

  /** The expired entries first; then, while still too many, the least recently used. */
  private evict(): void {
    const now = this.now()
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.drop(key, entry)
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.max) break
      this.drop(key, entry)
    }
  }
}

/**
 * The tasks a runtime's 2026-07-28 faces answer for: which child holds each
 * task a child made (the ledger), and the tasks myc holds itself for 2025
 * children (hosted-tasks.ts). One per runtime, made where the runtime is
 * served (`myc serve` on stdio, `serve --http`) and handed to every 2026
 * face, so the per-request servers come and go while the tasks outlive
 * them. Tasks are keyed by credential, so no caller finds another's.
 */
export class TaskRegistry {
  readonly ledger: TaskLedger<ChildTask>
  readonly hosted: HostedTasks

  constructor(parts: { ledger?: TaskLedger<ChildTask>; hosted?: HostedTasks } = {}) {
    // A task forgotten (its ttl over, or too many) no longer holds its instance.
    this.ledger = parts.ledger ?? new TaskLedger<ChildTask>(Date.now, MAX_TASKS, (task) => task.release())
    this.hosted = parts.hosted ?? new HostedTasks()
  }

  /** Cancels every task myc still runs and forgets them all. */
  close(): void {
    this.hosted.close()
  }
}

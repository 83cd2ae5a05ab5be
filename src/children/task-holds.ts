/** A task held for its caller: whether the process that runs it is still that one (child-tasks.ts). */
export interface HeldTask {
  readonly alive: boolean
}

/**
 * The tasks a child's process runs for its callers after the call that made
 * them has answered (a task goes on in the background). While one is held, a
 * scoped server's instance counts as busy: neither `idleMs` nor
 * `maxInstances` stops it (instances.ts). A hold ends when its task is seen
 * to end (terminal, cancelled, its result read), when its caller's session
 * goes, at its ttl, or with the process that ran it.
 */
export class TaskHolds {
  private readonly held = new Map<HeldTask, number>()

  /** `task` runs until `until` (epoch ms) at the latest. */
  hold(task: HeldTask, until: number): void {
    this.held.set(task, until)
  }

  release(task: HeldTask): void {
    this.held.delete(task)
  }

  /** Whether a task of the running process is held now (one past its time, or of a process gone, is let go). */
  any(now = Date.now()): boolean {
    return this.count(now) > 0
  }

  /** How many tasks of the running process are held now (one past its time, or of a process gone, is let go). */
  count(now = Date.now()): number {
    for (const [task, until] of this.held) if (until <= now || !task.alive) this.held.delete(task)
    return this.held.size
  }
}

/**
 * The last notifications/tasks/status a child sent, by task id (a few
 * dozen). A task that ends at once can be told ended before the answer
 * that made it has reached its caller's connection: that connection finds
 * the status here when it learns of the task (eras/legacy/session-tasks.ts).
 */
export class TaskStatusLog {
  private readonly last = new Map<string, Record<string, unknown>>()

  note(params: Record<string, unknown> | undefined): void {
    if (typeof params?.taskId !== 'string') return
    this.last.delete(params.taskId)
    this.last.set(params.taskId, params)
    if (this.last.size > STATUSES_KEPT) this.last.delete(this.last.keys().next().value!)
  }

  get(taskId: string): Record<string, unknown> | undefined {
    return this.last.get(taskId)
  }
}

const STATUSES_KEPT = 64

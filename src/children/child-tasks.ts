import type { ChildConnection } from './child.js'

/**
 * A task a child made for a caller (the tasks extension's, or a 2025 core
 * task), remembered with the connection that made it and the run of its
 * process. A scoped server's instance is one person's own (docs/team.md), so
 * a task's follow-ups go to that instance and nowhere else; and since a task
 * lives in one process, a restart (after a crash) or an instance that
 * stopped (its session's end, myc's) loses it: it then answers as failed,
 * saying so, at once (`lostMessage`), never by asking another process.
 */
export class ChildTask {
  /** The start of the process that made it (a new one for every start of the connection). */
  private readonly run: Date | undefined
  /** When it was first seen lost: its lastUpdatedAt from then on. */
  private lostAt: string | undefined

  constructor(
    readonly child: ChildConnection,
    readonly taskId: string,
    /** What the child said when it made it: when, and how long it keeps it (ms; null: no limit). */
    readonly made: { createdAt: string; ttlMs: number | null },
  ) {
    this.run = child.startedAt
  }

  /** Whether the process that made it still runs. */
  get alive(): boolean {
    return this.child.state === 'RUNNING' && this.child.startedAt === this.run
  }

  /** Still running for `ms` at most: its instance counts as busy meanwhile (task-holds.ts). */
  hold(ms: number): void {
    this.child.heldTasks.hold(this, Date.now() + ms)
  }

  /** Seen to end (terminal, cancelled, its result read), or no one can ask for it any more. */
  release(): void {
    this.child.heldTasks.release(this)
  }

  /** When it was found lost (the same time for every answer about it). */
  get lostSince(): string {
    return (this.lostAt ??= new Date().toISOString())
  }

  /** What its caller is told once its process is gone. */
  lostMessage(): string {
    const { child } = this
    const why =
      child.state === 'RUNNING' || child.state === 'INITIALIZING'
        ? 'it was restarted'
        : child.state === 'FAILED'
          ? `it stopped: ${child.lastError ?? 'unknown error'}`
          : 'it was stopped: its session ended, or mycelium stopped it'
    return `Task ${this.taskId} failed: the process of server "${child.key}" that ran it is gone (${why}); call the tool again`
  }
}

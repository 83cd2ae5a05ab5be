import { appendFile, mkdir } from 'node:fs/promises'
import path from 'node:path'

/** The instance of a scoped server that served a call (docs/team.md): whose, and its process. */
export interface AuditInstance {
  scope: 'principal' | 'session'
  principal: string
  session?: string
  pid?: number
}

/** One line of the audit log (JSON Lines). Never carries argument values. */
export type AuditEvent =
  | { event: 'session_start'; role: string; skills: string[]; transport: string }
  | { event: 'skill_activated' | 'skill_deactivated'; role: string; skill: string; by: 'agent' | 'person' }
  | { event: 'skill_refused'; role: string; skill: string; reason: string }
  | {
      event: 'tool_call'
      role: string
      tool: string
      outcome: 'ok' | 'error' | 'denied'
      durationMs: number
      argumentKeys?: string[]
      /** The run_code run the call was made in (docs/code-mode.md). */
      runId?: string
      /** The instance of a scoped server that served it. */
      instance?: AuditInstance
    }
  | { event: 'session_end'; role: string }
  | {
      /** A child's tool or prompt withheld (docs/pinning.md): its definition is not the pinned one, or it holds hidden text. */
      event: 'definition_withheld'
      server: string
      kind: 'tool' | 'prompt'
      name: string
      reason: 'changed' | 'added' | 'unpinned' | 'hidden'
      text?: string[]
    }
  | {
      event: 'memory_saved' | 'memory_forgotten'
      role: string
      id: string
      type: string
      bytes: number
      by: 'agent' | 'operator'
    }

/** Where audit events go; `undefined` file means nowhere. */
export interface AuditSink {
  write(event: AuditEvent): void
  /** Resolves when every write so far has reached the file. */
  flush(): Promise<void>
}

/**
 * Appends audit events to a JSON Lines file (`audit.file`), one write at a
 * time so lines never interleave. A write failure is reported once through
 * `onError` and does not stop the session.
 */
export function fileAuditSink(file: string | undefined, onError: (error: unknown) => void): AuditSink {
  let chain: Promise<void> = Promise.resolve()
  let failed = false
  let ready: Promise<unknown> | undefined
  return {
    write(event) {
      if (!file) return
      const line = `${JSON.stringify({ time: new Date().toISOString(), ...event })}\n`
      ready ??= mkdir(path.dirname(file), { recursive: true })
      chain = chain
        .then(() => ready)
        .then(() => appendFile(file, line, 'utf8'))
        .catch((error: unknown) => {
          if (!failed) onError(error)
          failed = true
        })
    },
    flush: () => chain,
  }
}

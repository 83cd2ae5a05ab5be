import type { AuditSink } from '../audit.js'
import type { Logger } from '../logger.js'
import { withholdingText } from '../pinning/gate.js'
import type { WithheldEntry } from '../registry/catalogue.js'

/**
 * Tells the person of each tool or prompt the catalogue withholds, once
 * while it stays withheld: one stderr line (`withheld fs:read_file: its
 * definition changed since it was pinned; review with myc pin`) and one
 * audit event. One that is served again is said to be, on one line.
 */
export class WithheldReport {
  /** What was told, by kind, id and reason. */
  private told = new Map<string, WithheldEntry>()

  constructor(
    private readonly logger: Logger | undefined,
    private readonly audit: AuditSink | undefined,
  ) {}

  /** The catalogue changed: `withheld` is what it withholds now; `served` says whether an id is served now. */
  update(withheld: readonly WithheldEntry[], served: (entry: WithheldEntry) => boolean): void {
    const now = new Map<string, WithheldEntry>()
    for (const entry of withheld) {
      const key = `${entry.kind}\0${entry.id}\0${entry.reason}`
      now.set(key, entry)
      if (this.told.has(key)) continue
      this.logger?.warn(`withheld ${entry.kind === 'prompt' ? 'prompt ' : ''}${entry.id}: ${withholdingText(entry)}`)
      this.audit?.write({
        event: 'definition_withheld',
        server: entry.server,
        kind: entry.kind,
        name: entry.name,
        reason: entry.reason,
        ...(entry.text ? { text: [...entry.text] } : {}),
      })
    }
    for (const [key, entry] of this.told)
      if (!now.has(key) && served(entry))
        this.logger?.info(`${entry.kind === 'prompt' ? 'prompt ' : ''}${entry.id} is served again`)
    this.told = now
  }
}

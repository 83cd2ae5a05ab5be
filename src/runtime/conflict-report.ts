import type { Logger } from '../logger.js'
import type { Conflict } from '../registry/catalogue.js'

/**
 * Tells the person of each name conflict in the catalogue (two tools or
 * prompts that would reach clients by one name, two servers serving one
 * resource) once while it lasts: a rebuild does not repeat it.
 */
export class ConflictReport {
  /** The conflicts already told. */
  private told = new Set<string>()

  constructor(private readonly logger: Logger) {}

  /** The catalogue was rebuilt: `conflicts` are the ones it has now. */
  update(conflicts: readonly Conflict[]): void {
    const now = new Set<string>()
    for (const conflict of conflicts) {
      const key = `${conflict.kind}\0${conflict.name}\0${conflict.kept}\0${conflict.dropped}`
      now.add(key)
      if (this.told.has(key)) continue
      this.logger.error(
        conflict.kind === 'resource'
          ? `servers "${conflict.kept}" and "${conflict.dropped}" both serve the resource ${conflict.name}; reads go to "${conflict.kept}" (config order)`
          : `two ${conflict.kind}s would reach the client as "${conflict.name}": ${conflict.kept} and ${conflict.dropped}; ${conflict.dropped} is left out (rename a server key or change namespace.separator)`,
      )
    }
    this.told = now
  }
}

import type { Tool } from '@modelcontextprotocol/client'

/** A server `myc add` has just written, with the definitions its trial start listed. */
export interface AddedServer {
  /** The config file it was written to. */
  configFile: string
  key: string
  tools: readonly Tool[]
}

/**
 * Pins an added server's tool definitions in the project's lock file
 * (`mycelium.lock.json`, `myc pin`) when the project has one, so that what
 * the trial start saw is what is trusted from then on.
 *
 * A NO-OP FOR NOW: the lock file is being built beside this (issue 33, the
 * trust issue). `myc add` calls it in one place, `writeAdded`
 * (config-target.ts), after the trial start and the write, for a registry
 * server and for each server `--from-client` imports alike. When the lock
 * lands, this function pins `added.tools` under `added.key` if a lock file
 * exists beside `added.configFile`, and does nothing otherwise.
 */
export async function pinAdded(added: AddedServer): Promise<void> {
  void added
}

import { existsSync } from 'node:fs'
import path from 'node:path'
import type { Prompt, Tool } from '@modelcontextprotocol/client'
import type { Logger } from '../logger.js'
import { lockPathOf, pinServer } from '../pinning/lock-file.js'

/** A server `myc add` has just written, with the definitions its trial start listed. */
export interface AddedServer {
  /** The config file it was written to. */
  configFile: string
  key: string
  tools: readonly Tool[]
  prompts: readonly Prompt[]
}

/**
 * Pins an added server's tool and prompt definitions in the project's lock
 * file (`mycelium.lock.json` beside the config, docs/pinning.md) when the
 * project has one, so what the trial start saw is what is trusted from then
 * on; without a lock pinning is off and nothing is written. `myc add` calls
 * it in one place, `writeAdded` (config-target.ts), after the trial start and
 * the write. Definitions with hidden text are left out of the lock (and stay
 * withheld); the person is told which. Returns the lock's path when it pinned.
 */
export async function pinAdded(added: AddedServer, logger: Logger): Promise<string | undefined> {
  const lockPath = lockPathOf(path.dirname(added.configFile))
  if (!existsSync(lockPath)) return undefined
  const { hidden } = await pinServer(lockPath, added.key, { tools: added.tools, prompts: added.prompts })
  for (const item of hidden)
    logger.warn(
      `${added.key}:${item.name} (a ${item.kind}) was not pinned: it holds hidden text (${item.text.join(', ')}), so it stays withheld`,
    )
  return lockPath
}

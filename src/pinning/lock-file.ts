import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { MycError } from '../errors.js'
import { withFileLock, writeFileAtomic } from '../memory/atomic-file.js'
import { recordOffered, type HiddenItem, type Offered } from './compare.js'
import { lockText, parseLock, type DefinitionLock } from './lock.js'

/** The lock's file name, beside the config file (meant to be committed with it). */
export const LOCK_FILE = 'mycelium.lock.json'

/** The lock of the config in `configDir`. */
export function lockPathOf(configDir: string): string {
  return path.join(configDir, LOCK_FILE)
}

/** Reads a lock; undefined when there is none (pinning is off). Throws MycError('config_invalid') for one that cannot be read or is malformed. */
export async function readLockFile(file: string): Promise<DefinitionLock | undefined> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new MycError('config_invalid', `Cannot read ${file}: ${(error as Error).message}`, {
      fix: 'make it readable, or delete it to turn pinning off',
    })
  }
  return parseLock(text, file)
}

/** Writes a lock whole (a reader sees the old file or the new one, never half of one). */
async function writeLockFile(file: string, lock: DefinitionLock): Promise<void> {
  await writeFileAtomic(file, lockText(lock))
}

/** Runs `update` on the lock as it is on disk now and writes what it returns, one writer at a time. */
export async function updateLockFile<T>(
  file: string,
  update: (lock: DefinitionLock | undefined) => { lock: DefinitionLock; result: T },
): Promise<T> {
  const guard = path.join(path.dirname(file), `.${path.basename(file)}.lock`)
  return withFileLock(guard, async () => {
    const { lock, result } = update(await readLockFile(file))
    await writeLockFile(file, lock)
    return result
  })
}

/**
 * Pins one server's current definitions into the lock at `lockPath`
 * (created if there is none), leaving every other server's entries as they
 * are: what a command that adds a server (`myc add`) calls with the
 * definitions the new child lists. Items with hidden text are left out
 * (unless `allowHiddenText`: the server's `dangerouslyAllowHiddenText`) and
 * returned, to be reported.
 */
export async function pinServer(
  lockPath: string,
  server: string,
  definitions: Offered,
  options: { allowHiddenText?: boolean } = {},
): Promise<{ hidden: HiddenItem[] }> {
  return updateLockFile(lockPath, (current) => {
    const kept = new Set([...(current?.servers.keys() ?? [])].filter((key) => key !== server))
    const { lock, hidden } = recordOffered(current, new Map([[server, definitions]]), {
      allowsHiddenText: () => options.allowHiddenText === true,
      kept,
    })
    return { lock, result: { hidden } }
  })
}

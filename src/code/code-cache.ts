import { lstatSync } from 'node:fs'

/**
 * `dir` when the launcher outside would use it (build/launcher.cjs keeps the
 * same rules): a real folder, not a link, of this user's, that no one else
 * may write. Never made here: a missing one means no cache.
 */
export function trustedCacheDir(dir: string): string | undefined {
  const stat = lstatSync(dir, { throwIfNoEntry: false })
  if (!stat?.isDirectory() || (stat.mode & 0o077) !== 0) return undefined
  return typeof process.getuid !== 'function' || stat.uid === process.getuid() ? dir : undefined
}

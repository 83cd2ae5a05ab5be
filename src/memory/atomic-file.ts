import { randomBytes } from 'node:crypto'
import { open, rename, unlink } from 'node:fs/promises'
import { hostname } from 'node:os'
import path from 'node:path'

/**
 * Replaces a file's contents atomically: a temporary file in the same folder,
 * written and fsynced, renamed over the target, then the folder fsynced. A
 * crash leaves the old file or the new one, never a torn one.
 */
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  const temp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  )
  const handle = await open(temp, 'wx', 0o644)
  try {
    await handle.writeFile(text, 'utf8')
    await handle.sync()
  } catch (error) {
    await handle.close().catch(() => {})
    await unlink(temp).catch(() => {})
    throw error
  }
  await handle.close()
  try {
    await rename(temp, file)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
  await syncFolder(path.dirname(file))
}

/** fsync of a folder, so a rename in it is durable; not possible on every platform (Windows), so failures are ignored. */
async function syncFolder(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch {
    // best effort
  }
}

export interface LockOptions {
  /** Give up after this long (ms). */
  timeoutMs?: number
  /** A lock older than this (ms) is taken over even if its holder cannot be checked. */
  staleMs?: number
}

/**
 * Runs `fn` holding an exclusive lock shared by every process on the machine:
 * a lock file created with O_EXCL next to the file it guards, removed after.
 * A lock left by a process that died (same host, pid gone) or older than
 * `staleMs` is taken over. Holders keep it for milliseconds.
 */
export async function withFileLock<T>(lockFile: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000
  const staleMs = options.staleMs ?? 60_000
  const deadline = Date.now() + timeoutMs
  const me = JSON.stringify({ pid: process.pid, host: hostname(), time: new Date().toISOString() })
  let wait = 2
  for (;;) {
    try {
      const handle = await open(lockFile, 'wx', 0o644)
      try {
        await handle.writeFile(me, 'utf8')
      } finally {
        await handle.close()
      }
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    if (await isStale(lockFile, staleMs)) {
      await unlink(lockFile).catch(() => {})
      continue
    }
    if (Date.now() > deadline)
      throw new Error(
        `${lockFile} is held by another process for more than ${Math.round(timeoutMs / 1000)} s (if no myc is running, delete the file)`,
      )
    await new Promise((r) => setTimeout(r, wait + Math.random() * wait))
    wait = Math.min(wait * 2, 50)
  }
  try {
    return await fn()
  } finally {
    await unlink(lockFile).catch(() => {})
  }
}

async function isStale(lockFile: string, staleMs: number): Promise<boolean> {
  let text: string
  let mtimeMs: number
  try {
    const handle = await open(lockFile, 'r')
    try {
      mtimeMs = (await handle.stat()).mtimeMs
      text = await handle.readFile('utf8')
    } finally {
      await handle.close()
    }
  } catch {
    return false // gone already: the next attempt takes it
  }
  if (Date.now() - mtimeMs > staleMs) return true
  try {
    const holder = JSON.parse(text) as { pid?: unknown; host?: unknown }
    if (holder.host !== hostname() || typeof holder.pid !== 'number') return false
    process.kill(holder.pid, 0)
    return false
  } catch (error) {
    // ESRCH: no such process (the holder died); EPERM: it lives under another user. A half-written file: not stale yet.
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
}

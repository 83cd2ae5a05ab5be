import { watch, type FSWatcher } from 'node:fs'
import path from 'node:path'
import type { ConfigDiff } from '../config/diff.js'
import { loadConfig, type LoadedConfig } from '../config/load.js'
import type { Logger } from '../logger.js'
import { LOCK_FILE, lockPathOf, readLockFile } from '../pinning/lock-file.js'
import { isPolicyMode, loadSources, type PolicyMode } from '../principal/policy-mode.js'
import type { Runtime } from './runtime.js'

export interface LiveConfigOptions {
  runtime: Runtime
  mode: PolicyMode
  logger: Logger
  env: Record<string, string | undefined>
  /** Where SIGHUP comes from (the process by default). */
  signals?: NodeJS.EventEmitter
  debounceMs?: number
}

/** One line for the log: what a reload did. */
export function describeDiff(diff: ConfigDiff): string {
  const parts: string[] = []
  const { added, removed, changed } = diff.servers
  if (added.length) parts.push(`started ${added.join(', ')}`)
  if (removed.length) parts.push(`stopped ${removed.join(', ')}`)
  if (changed.length) parts.push(`restarted ${changed.join(', ')}`)
  if (diff.policy) parts.push('rebuilt the policy')
  if (diff.order && parts.length === 0) parts.push('took the new server order')
  return parts.length ? parts.join('; ') : 'nothing to change'
}

/**
 * Keeps a running `myc serve` on its config file and the lock beside it: a
 * change on disk (a moment after the last write) or SIGHUP reloads them. A
 * config that does not validate is logged (file, key path, fix) and the
 * running one kept; one that does is applied by the runtime (servers
 * started, stopped, restarted; the rest untouched) and, in policy mode, the
 * skills and roles are rebuilt. A lock read again is judged against at once
 * (a bad one is logged and the running one kept). Returns a function that
 * stops watching. `reload` and `reloadLock` are exposed for tests.
 */
export function watchConfig(options: LiveConfigOptions): {
  stop: () => void
  reload: () => Promise<ConfigDiff | undefined>
  reloadLock: () => Promise<void>
} {
  const { runtime, logger } = options
  const file = runtime.loaded.file
  let chain: Promise<ConfigDiff | undefined> = Promise.resolve(undefined)

  const reloadOnce = () => reloadConfig(options)
  const reload = () => (chain = chain.then(reloadOnce, reloadOnce))
  const lockOnce = () => reloadLockFile(runtime, logger)
  const reloadLock = async () => void (await (chain = chain.then(lockOnce, lockOnce)))

  if (!file) return { stop: () => {}, reload, reloadLock }
  let timer: NodeJS.Timeout | undefined
  const pending = { config: false, lock: false }
  const schedule = (what: 'config' | 'lock') => {
    pending[what] = true
    clearTimeout(timer)
    timer = setTimeout(() => {
      if (pending.config) void reload()
      if (pending.lock) void reloadLock()
      pending.config = pending.lock = false
    }, options.debounceMs ?? 200)
    timer.unref()
  }
  // The folder, not the file: editors save by writing a new file and renaming it over the old one.
  let watcher: FSWatcher | undefined
  try {
    watcher = watch(path.dirname(file), (_event, name) => {
      if (name === null || name === path.basename(file)) schedule('config')
      if (name === null || name === LOCK_FILE) schedule('lock')
    })
    watcher.on('error', (error) => logger.warn(`watching ${file}: ${error.message}`))
    watcher.unref()
  } catch (error) {
    logger.warn(`cannot watch ${file} for changes (${(error as Error).message}); send SIGHUP to reload it`)
  }
  const signals = options.signals ?? process
  const onHup = () => {
    logger.info('SIGHUP: reloading the config and the lock')
    void reload()
    void reloadLock()
  }
  signals.on('SIGHUP', onHup)
  return {
    reload,
    reloadLock,
    stop: () => {
      clearTimeout(timer)
      watcher?.close()
      signals.off('SIGHUP', onHup)
    },
  }
}

/** Reads the config again and applies it; a config that does not load leaves the running one (said on stderr). */
async function reloadConfig(options: LiveConfigOptions): Promise<ConfigDiff | undefined> {
  const { runtime, mode, logger } = options
  const file = runtime.loaded.file
  let next: LoadedConfig
  let sources: Awaited<ReturnType<typeof loadSources>> | undefined
  try {
    next = await loadConfig({ configPath: file, cwd: runtime.loaded.dir, env: options.env })
    if (mode.kind === 'policy') sources = await loadSources(next, logger)
  } catch (error) {
    logger.error(`config not reloaded, the running one is kept: ${(error as Error).message}`)
    return undefined
  }
  if (isPolicyMode(next) !== (mode.kind === 'policy'))
    logger.warn(`${file}: switching between open mode and policy mode (the "skills" key) takes effect after a restart`)
  // The policy first: skills that name a server being added or removed are judged against the new config.
  if (sources && mode.kind === 'policy') mode.state.replace(sources)
  const diff = await runtime.applyConfig(next)
  logger.info(`config reloaded: ${describeDiff(diff)}`)
  if (diff.needsRestart.length)
    logger.warn(`${file}: changes to ${diff.needsRestart.map((k) => `"${k}"`).join(', ')} take effect after a restart`)
  return diff
}

/** Reads the lock again; one that does not load leaves the running one (said on stderr). */
async function reloadLockFile(runtime: Runtime, logger: Logger): Promise<undefined> {
  const lockFile = lockPathOf(runtime.loaded.dir)
  try {
    runtime.setLock(await readLockFile(lockFile))
    logger.info(`${lockFile} read again`)
  } catch (error) {
    logger.error(`${LOCK_FILE} not reloaded, the running one is kept: ${(error as Error).message}`)
  }
  return undefined
}

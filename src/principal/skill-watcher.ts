import { existsSync, watch, type FSWatcher } from 'node:fs'
import type { LoadedConfig } from '../config/load.js'
import type { Logger } from '../logger.js'
import { loadSources, watchedFolders } from './policy-mode.js'
import type { PolicyState } from './policy-state.js'

/**
 * Reloads the skills when their files (or `roles/`) change on disk, a moment
 * after the last change, and swaps them into the policy state, whose
 * listeners re-filter every client connection and send the list-changed
 * notifications. A reload that fails keeps the skills already loaded. The
 * folders are looked at again whenever the policy is swapped (a live config
 * reload can name new `skills.dirs`, or one created since). Returns a
 * function that stops watching.
 */
export function watchSkills(
  current: LoadedConfig | (() => LoadedConfig),
  state: PolicyState,
  logger: Logger,
  debounceMs = 200,
): () => void {
  // The config in force at each reload (a live config reload may have changed roles or limits).
  const config = typeof current === 'function' ? current : () => current
  let timer: NodeJS.Timeout | undefined
  let reloading: Promise<void> = Promise.resolve()
  const reload = () => {
    reloading = reloading.then(async () => {
      try {
        state.replace(await loadSources(config(), logger))
        logger.info(`skills reloaded: ${state.sources.skills.length} skills`)
      } catch (error) {
        logger.error(`skills not reloaded (${(error as Error).message}); keeping the ones loaded before`)
      }
    })
  }
  const schedule = () => {
    clearTimeout(timer)
    timer = setTimeout(reload, debounceMs)
    timer.unref()
  }
  /** The folders watched now; synced again whenever the policy is swapped (a reload may name new folders). */
  const watchers = new Map<string, FSWatcher>()
  const sync = () => {
    const wanted = new Set(watchedFolders(config()).filter((folder) => existsSync(folder)))
    for (const [folder, w] of watchers) {
      if (wanted.has(folder)) continue
      w.close()
      watchers.delete(folder)
    }
    for (const folder of wanted) {
      if (watchers.has(folder)) continue
      try {
        const w = watch(folder, { recursive: true }, schedule)
        w.on('error', (error) => logger.warn(`watching ${folder}: ${error.message}`))
        w.unref()
        watchers.set(folder, w)
      } catch (error) {
        logger.warn(`cannot watch ${folder} for skill changes: ${(error as Error).message}`)
      }
    }
  }
  sync()
  // A live config reload swaps the policy, then applies the config: look again once it is in force (the same turn of the event loop sets it).
  let syncTimer: NodeJS.Immediate | undefined
  const stopListening = state.onDisabledChange(() => {
    if (syncTimer) return
    syncTimer = setImmediate(() => {
      syncTimer = undefined
      sync()
    })
    syncTimer.unref()
  })
  return () => {
    clearTimeout(timer)
    if (syncTimer) clearImmediate(syncTimer)
    stopListening()
    for (const w of watchers.values()) w.close()
    watchers.clear()
  }
}

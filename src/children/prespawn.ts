import type { LoadedConfig } from '../config/load.js'
import { scopeOf } from '../config/server-schema.js'
import { signalTree } from './process-tree.js'
import { hasSecretRefs } from './secret-refs.js'
import type { CommandHost } from './resolve-command.js'
import { sameSpawn, stdioSpawnSpec, type StdioSpawnSpec } from './spawn-spec.js'
import { startEarly, type EarlyChild } from './stdio-transport.js'

/**
 * The stdio children of a config, started as the very first thing `myc
 * serve` does, before the rest of myc is loaded: a child's own start-up
 * (often the longest part: a Node or Python server loading its modules)
 * overlaps myc's. Each is taken over by its connection when the supervisor
 * starts it, if it is still to be started exactly so; one that is not taken
 * (the config failed to load, the spec changed) is stopped.
 */
export class PrespawnedChildren {
  private readonly waiting = new Map<string, { spec: StdioSpawnSpec; early: EarlyChild }>()
  private readonly stopOnExit = () => this.stopAll()

  private constructor() {
    process.once('exit', this.stopOnExit)
  }

  /** Starts every eager, enabled stdio server of `loaded`. One whose start throws (a NUL byte in an argument) is left to its normal start, and its error. */
  static start(loaded: LoadedConfig, host: CommandHost): PrespawnedChildren {
    const prespawned = new PrespawnedChildren()
    for (const [key, config] of loaded.config.servers) {
      // One that names a sealed secret waits for its normal start, which reads the secret (secret-refs.ts); a scoped one runs in its person's folder.
      if (config.type !== 'stdio' || config.disabled || config.startup === 'lazy' || hasSecretRefs(config)) continue
      if (scopeOf(config) !== 'shared') continue
      // A server that cannot be started so is left to its normal start, and to the error it reports there.
      try {
        const spec = stdioSpawnSpec(config, host, loaded.dir)
        prespawned.waiting.set(key, { spec, early: startEarly(spec) })
      } catch {
        // Named above: left to its normal start.
      }
    }
    return prespawned
  }

  get size(): number {
    return this.waiting.size
  }

  /** The child started early for `key`, if it was started with exactly `spec` (else it is stopped, and the caller starts its own). */
  take(key: string, spec: StdioSpawnSpec): EarlyChild | undefined {
    const entry = this.waiting.get(key)
    if (!entry) return undefined
    this.waiting.delete(key)
    if (this.waiting.size === 0) process.off('exit', this.stopOnExit)
    if (sameSpawn(entry.spec, spec)) return entry.early
    stop(entry.early)
    return undefined
  }

  /** Stops every child not taken over. */
  stopAll(): void {
    for (const { early } of this.waiting.values()) stop(early)
    this.waiting.clear()
    process.off('exit', this.stopOnExit)
  }
}

function stop(early: EarlyChild): void {
  early.release()
  if (early.error) return
  signalTree(early.process, 'SIGKILL')
  // Its output is not anyone's now: let it drain so its pipes close.
  early.process.stdout?.resume()
  early.process.stderr?.resume()
}

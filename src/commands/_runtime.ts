import type { Logger } from '../logger.js'
import { openRuntime } from '../runtime/open-runtime.js'
import type { Runtime } from '../runtime/runtime.js'
import { version } from '../version.js'

/**
 * For inspection commands: load the config, start every child (lazy ones
 * too: the point is to see them), run `use`, and always stop the children.
 */
export async function withStartedRuntime<T>(options: { configPath?: string; logger: Logger }, use: (runtime: Runtime) => Promise<T>): Promise<T> {
  const { runtime } = await openRuntime({ configPath: options.configPath, logger: options.logger, version })
  try {
    await Promise.all([...runtime.supervisor.children.keys()].map((key) => runtime.supervisor.ensureRunning(key)))
    return await use(runtime)
  } finally {
    await runtime.close()
  }
}

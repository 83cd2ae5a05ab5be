import type { Runtime } from './runtime.js'

/**
 * If myc is ended abruptly (an uncaught error, process.exit), still take the
 * children's process groups down: SIGKILL to each one on the process's
 * `exit`. Returns a function that removes the hook (after a clean stop).
 */
export function killChildrenOnExit(runtime: Runtime): () => void {
  const killOnExit = () => {
    for (const child of runtime.supervisor.children.values()) {
      if (child.pid !== undefined && process.platform !== 'win32') {
        try {
          process.kill(-child.pid, 'SIGKILL')
        } catch {
          // The group is gone already (ESRCH): nothing left to kill.
        }
      }
    }
  }
  process.once('exit', killOnExit)
  return () => process.off('exit', killOnExit)
}

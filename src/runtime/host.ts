import { currentHost, type CommandHost } from '../children/resolve-command.js'
import { singleExecutable } from '../single-executable.js'

/** The command host for this process; commands are looked up in `env` (this process's by default). In a single executable, process.execPath is myc itself. */
export function hostForThisProcess(env: Record<string, string | undefined> = process.env): CommandHost {
  return { ...currentHost(singleExecutable() !== undefined), env }
}

import { currentHost, type CommandHost } from '../children/resolve-command.js'

/** Whether this process is a single executable (Node SEA), where process.execPath is myc itself. */
function isSingleExecutable(): boolean {
  try {
    const sea = process.getBuiltinModule?.('node:sea') as { isSea?: () => boolean } | undefined
    return sea?.isSea?.() === true
  } catch {
    return false
  }
}

/** The command host for this process; commands are looked up in `env` (this process's by default). */
export function hostForThisProcess(env: Record<string, string | undefined> = process.env): CommandHost {
  return { ...currentHost(isSingleExecutable()), env }
}

import path from 'node:path'
import { DEFAULT_CONFIG_FILES, type LoadedConfig } from './load.js'

/** A path myc reads to decide policy or keeps for a principal (see sandbox/protected-paths.ts). */
export interface StatePath {
  path: string
  kind: 'dir' | 'file'
  access: 'hidden'
}

/**
 * Everything myc reads to decide policy or keeps for a principal, which no
 * command it runs may read or write: the config file (and the default names
 * that would be found before it), `.mycelium/` beside it (sessions, memory,
 * failure contexts, the default audit file), every skills folder, `roles/`,
 * and `memory.dir`, `agent.sessionsDir`, `audit.file` and `sandbox.hide`
 * wherever they point. One list, used by every executor; a feature that
 * keeps state adds its path here.
 */
export function mycStatePaths(loaded: Pick<LoadedConfig, 'file' | 'dir' | 'config'>): StatePath[] {
  const at = (p: string, kind: 'dir' | 'file'): StatePath => ({
    path: path.resolve(loaded.dir, p),
    kind,
    access: 'hidden',
  })
  const { config } = loaded
  const configs = loaded.file
    ? [loaded.file, ...earlierDefaults(loaded.file)]
    : DEFAULT_CONFIG_FILES.map((n) => path.join(loaded.dir, n))
  return [
    ...configs.map((f) => at(f, 'file')),
    at('.mycelium', 'dir'),
    ...(config.skills?.dirs ?? ['skills']).map((d) => at(d, 'dir')),
    at('roles', 'dir'),
    at(config.memory.dir, 'dir'),
    ...(config.agent.sessionsDir ? [at(config.agent.sessionsDir, 'dir')] : []),
    ...(config.audit.file ? [at(config.audit.file, 'file')] : []),
    ...(config.sandbox.hide ?? []).map((p) => at(p, p.endsWith('/') ? 'dir' : 'file')),
  ]
}

/** Default config names found before this one in its folder (a new one there would take its place). */
function earlierDefaults(file: string): string[] {
  const index = (DEFAULT_CONFIG_FILES as readonly string[]).indexOf(path.basename(file))
  return index <= 0 ? [] : DEFAULT_CONFIG_FILES.slice(0, index).map((n) => path.join(path.dirname(file), n))
}

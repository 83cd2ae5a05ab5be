import path from 'node:path'

/**
 * A path the sandbox guards. `hidden`: myc's own state (config, skills,
 * roles, memory, sessions, audit), neither readable nor writable inside, so
 * a command can neither rewrite the policy nor learn from it. `read-only`:
 * files the host runs later on its own (git hooks and config, direnv), which
 * a command may read but never change. Either way a path that does not exist
 * cannot be created while the command runs.
 */
export interface ProtectedPath {
  /** Absolute. */
  path: string
  /** What to hold in its place when it does not exist yet. */
  kind: 'dir' | 'file'
  access: 'hidden' | 'read-only'
}

/**
 * Paths under every workspace that run on the host later: `.git` as a whole
 * (hooks, config with `core.fsmonitor`/aliases, attributes; a rename and copy
 * of it must not give a writable one) and direnv's `.envrc`.
 */
export const WORKSPACE_RUN_PATHS: ReadonlyArray<{ name: string; kind: 'dir' | 'file' }> = [
  { name: '.git', kind: 'dir' },
  { name: '.envrc', kind: 'file' },
]

/** Shell and tool start-up files, guarded when the workspace is the home folder (elsewhere nothing reads them). */
export const HOME_RUN_PATHS: ReadonlyArray<{ name: string; kind: 'dir' | 'file' }> = [
  ...[
    '.bashrc',
    '.bash_profile',
    '.bash_login',
    '.bash_logout',
    '.profile',
    '.zshrc',
    '.zprofile',
    '.zshenv',
    '.zlogin',
    '.inputrc',
    '.gitconfig',
    '.npmrc',
  ].map((name) => ({ name, kind: 'file' as const })),
  ...['.ssh', '.config', '.local/bin', 'bin'].map((name) => ({ name, kind: 'dir' as const })),
]

/**
 * The read-only paths of a workspace: the defaults above plus the
 * configured `sandbox.protect` entries (relative to the workspace, or
 * absolute; one that does not exist is held as a folder when it ends in `/`).
 */
export function hostRunPaths(workspace: string, home: string, extra: readonly string[] = []): ProtectedPath[] {
  const names = [...WORKSPACE_RUN_PATHS, ...(path.resolve(home) === path.resolve(workspace) ? HOME_RUN_PATHS : [])]
  return [
    ...names.map((n) => ({ path: path.join(workspace, n.name), kind: n.kind, access: 'read-only' as const })),
    ...extra.map((p) => ({
      path: path.resolve(workspace, p),
      kind: p.endsWith('/') ? ('dir' as const) : ('file' as const),
      access: 'read-only' as const,
    })),
  ]
}

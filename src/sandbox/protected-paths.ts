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
const WORKSPACE_RUN_PATHS: ReadonlyArray<{ name: string; kind: 'dir' | 'file' }> = [
  { name: '.git', kind: 'dir' },
  { name: '.envrc', kind: 'file' },
]

/**
 * What the person's shells and tools read from the home folder and run, or
 * let name a program to run: shell start-up files, editors', debuggers' and
 * REPLs' start-up files, tools' configs that name commands (git, npm, yarn,
 * cargo, docker, kubectl, aws, gradle), folders of programs on PATH or of
 * plugins. Guarded wherever the home folder lies in the workspace (a home
 * outside it is a fresh, empty folder inside the sandbox).
 */
const HOME_RUN_PATHS: ReadonlyArray<{ name: string; kind: 'dir' | 'file' }> = [
  ...[
    ...['.bashrc', '.bash_profile', '.bash_login', '.bash_logout', '.bash_aliases', '.profile', '.inputrc'],
    ...['.zshrc', '.zprofile', '.zshenv', '.zlogin', '.zlogout', '.cshrc', '.tcshrc', '.kshrc', '.mkshrc'],
    ...['.pam_environment', '.xprofile', '.xinitrc', '.xsession', '.xsessionrc', '.selected_editor', '.mailcap'],
    ...['.vimrc', '.gvimrc', '.exrc', '.emacs', '.tmux.conf', '.screenrc', '.lessfilter'],
    ...['.gdbinit', '.lldbinit', '.psqlrc', '.irbrc', '.pryrc', '.Rprofile', '.hgrc', '.wgetrc', '.curlrc'],
    ...['.gitconfig', '.npmrc', '.yarnrc', '.yarnrc.yml', '.gemrc', '.cargo/config', '.cargo/config.toml'],
    ...['.docker/config.json', '.kube/config', '.aws/config', '.gradle/init.gradle', '.gradle/init.gradle.kts'],
  ].map((name) => ({ name, kind: 'file' as const })),
  ...[
    ...['.ssh', '.config', '.local', 'bin', '.gnupg', '.vim', '.emacs.d', '.oh-my-zsh', '.zsh', '.ipython'],
    ...['.node_modules', '.node_libraries', '.cargo/bin', '.docker/cli-plugins', '.gradle/init.d'],
  ].map((name) => ({ name, kind: 'dir' as const })),
]

/**
 * The read-only paths of a workspace: the defaults above (the home
 * folder's when the home folder is the workspace or lies inside it) plus
 * the configured `sandbox.protect` entries (relative to the workspace, or
 * absolute; one that does not exist is held as a folder when it ends in `/`).
 */
export function hostRunPaths(workspace: string, home: string, extra: readonly string[] = []): ProtectedPath[] {
  const at = (dir: string, names: typeof HOME_RUN_PATHS) =>
    names.map((n) => ({ path: path.join(dir, n.name), kind: n.kind, access: 'read-only' as const }))
  return [
    ...at(workspace, WORKSPACE_RUN_PATHS),
    ...(homeInWorkspace(workspace, home) ? at(path.resolve(home), HOME_RUN_PATHS) : []),
    ...extra.map((p) => ({
      path: path.resolve(workspace, p),
      kind: p.endsWith('/') ? ('dir' as const) : ('file' as const),
      access: 'read-only' as const,
    })),
  ]
}

/** Whether the home folder is the workspace or lies inside it: then the workspace shows it, start-up files and all. */
export function homeInWorkspace(workspace: string, home: string): boolean {
  const ws = path.resolve(workspace)
  const h = path.resolve(home)
  return h === ws || h.startsWith(ws.endsWith(path.sep) ? ws : `${ws}${path.sep}`)
}

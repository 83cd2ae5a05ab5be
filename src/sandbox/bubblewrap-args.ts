import path from 'node:path'
import type { Mask } from './masks.js'
import { homeInWorkspace } from './protected-paths.js'
import { MINIMAL_PATH, type TrustLevel } from './types.js'

/** Everything the bubblewrap argument builder needs; paths already resolved (realpath). */
export interface BwrapInput {
  trust: Exclude<TrustLevel, 'unrestricted'>
  workspace: string
  home: string
  /** Protected paths, parents first (see masks.ts): myc's state hidden, what the host runs later read-only. */
  masks: readonly Mask[]
  /** An empty read-only file to show in place of a hidden file. */
  emptyFile?: string
  /** One file to show read-only although it lies in a hidden folder (run_script's script). */
  exposeFile?: string
  env: Record<string, string>
  argv: readonly string[]
  /** Extra binds for the network proxy socket. */
  extraBinds?: ReadonlyArray<{ source: string; target: string }>
}

/**
 * What every bubblewrap sandbox of myc starts with: every namespace
 * unshared, the user namespace included, nested user namespaces disabled,
 * every capability dropped (as root without those, a command inside can
 * remount `/` read-write), killed with its parent, in a session of its own.
 */
export const ISOLATION_ARGS: readonly string[] = [
  '--unshare-all',
  '--unshare-user',
  '--disable-userns',
  '--cap-drop',
  'ALL',
  '--die-with-parent',
  '--new-session',
]

/** The host's filesystem read-only, with a new `/dev` and `/proc` and empty `/tmp` and `/run`: where a command's sandbox starts from. */
export const HOST_VIEW_ARGS: readonly string[] = [
  '--ro-bind',
  '/',
  '/',
  '--dev',
  '/dev',
  '--proc',
  '/proc',
  '--tmpfs',
  '/tmp',
  '--tmpfs',
  '/run',
]

/**
 * The bwrap argument vector (pure, exact). Every namespace is unshared,
 * the user namespace included, nested user namespaces are disabled and every
 * capability dropped: as root without those, a command inside can remount
 * `/` read-write. `/` is read-only, `/tmp`, `/run` and the home folder
 * (unless the workspace holds it: then its start-up files are masked) are
 * fresh tmpfs (host sockets there stay out of reach), `/dev` and `/proc`
 * are new; the workspace is bound read-write (`sandboxed`) or read-only
 * (`restricted`) after them. Then the masks: a hidden folder becomes an empty
 * tmpfs (made read-only last, after the exposed script is bound into it), a
 * hidden file an empty read-only file, a read-only path is re-bound
 * read-only (a mount point: it cannot be renamed, removed or replaced), a
 * pinned folder is bound onto itself (a mount point too, as writable as
 * the workspace).
 * A mask in the fresh home outside the workspace is left out: nothing of the
 * host is there to hide, and its mount would only show that the path exists.
 */
export function bubblewrapArgs(input: BwrapInput): string[] {
  const args = [...ISOLATION_ARGS, ...HOST_VIEW_ARGS]
  const freshHome = input.home !== '/' && !homeInWorkspace(input.workspace, input.home)
  if (freshHome) args.push('--tmpfs', input.home)
  args.push(input.trust === 'sandboxed' ? '--bind' : '--ro-bind', input.workspace, input.workspace)
  const hiddenDirs: string[] = []
  for (const m of input.masks) {
    if (freshHome && within(m.path, input.home) && !within(m.path, input.workspace)) continue
    if (m.kind === 'hide-dir') {
      args.push('--tmpfs', m.path)
      hiddenDirs.push(m.path)
    } else if (m.kind === 'hide-file') args.push('--ro-bind', input.emptyFile ?? '/dev/null', m.path)
    else if (m.kind === 'pin') args.push(input.trust === 'sandboxed' ? '--bind' : '--ro-bind', m.path, m.path)
    else args.push('--ro-bind', m.path, m.path)
  }
  if (input.exposeFile) args.push('--ro-bind', input.exposeFile, input.exposeFile)
  for (const d of hiddenDirs) args.push('--remount-ro', d)
  for (const b of input.extraBinds ?? []) args.push('--bind', b.source, b.target)
  args.push('--clearenv')
  const env: Record<string, string> = {
    PATH: MINIMAL_PATH,
    HOME: input.home,
    TMPDIR: '/tmp',
    LANG: 'C.UTF-8',
    ...input.env,
  }
  for (const key of Object.keys(env).sort()) args.push('--setenv', key, env[key]!)
  args.push('--chdir', input.workspace, '--', ...input.argv)
  return args
}

/** Whether `p` is `dir` or lies below it. */
function within(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith(path.sep) ? dir : `${dir}${path.sep}`)
}

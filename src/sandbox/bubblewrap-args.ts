import { MINIMAL_PATH, type TrustLevel } from './types.js'

/** Everything the bubblewrap argument builder needs; paths already resolved (realpath). */
export interface BwrapInput {
  trust: Exclude<TrustLevel, 'unrestricted'>
  workspace: string
  home: string
  /** Paths under the workspace to re-bind read-only (that exist): .git/hooks, .git/config, the config, rc files. */
  readOnlyInWorkspace: readonly string[]
  env: Record<string, string>
  argv: readonly string[]
  /** Extra binds for the network proxy socket. */
  extraBinds?: ReadonlyArray<{ source: string; target: string }>
}

/** Shell start-up files that must not be rewritten from inside (they run on the host later). */
export const RC_FILES = ['.bashrc', '.bash_profile', '.profile', '.zshrc', '.zprofile', '.zshenv', '.envrc', '.git/hooks', '.git/config']

/**
 * The bwrap argument vector (pure, exact). Every namespace is unshared,
 * the user namespace included, nested user namespaces are disabled and every
 * capability dropped: as root without those, a command inside can remount
 * `/` read-write. `/` is read-only, `/tmp`, `/run` and the home folder are
 * fresh tmpfs (host sockets there stay out of reach), `/dev` and `/proc`
 * are new; the workspace is bound read-write (`sandboxed`) or read-only
 * (`restricted`) after them, with its sensitive files re-bound read-only.
 */
export function bubblewrapArgs(input: BwrapInput): string[] {
  const args = ['--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--die-with-parent', '--new-session', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/run']
  if (input.home !== '/' && input.home !== input.workspace) args.push('--tmpfs', input.home)
  args.push(input.trust === 'sandboxed' ? '--bind' : '--ro-bind', input.workspace, input.workspace)
  if (input.trust === 'sandboxed') for (const p of input.readOnlyInWorkspace) args.push('--ro-bind', p, p)
  for (const b of input.extraBinds ?? []) args.push('--bind', b.source, b.target)
  args.push('--clearenv')
  const env: Record<string, string> = { PATH: MINIMAL_PATH, HOME: input.home, TMPDIR: '/tmp', LANG: 'C.UTF-8', ...input.env }
  for (const key of Object.keys(env).sort()) args.push('--setenv', key, env[key]!)
  args.push('--chdir', input.workspace, '--', ...input.argv)
  return args
}

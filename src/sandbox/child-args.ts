import { HOST_VIEW_ARGS, ISOLATION_ARGS } from './bubblewrap-args.js'

/** Everything the argument builder for one scoped server's instance needs; paths absolute and real. */
export interface ChildSandboxInput {
  /** The instance's own folder (its HOME and scratch inside): the only place it may write, bound read-write. */
  own: string
  /** Folders and files it must not see (myc's state, the secret store, the other instances): each exists; hidden behind an empty one. */
  hidden: ReadonlyArray<{ path: string; kind: 'dir' | 'file' }>
  /** The operator's home folder: an empty tmpfs in its place, unless the command or its folder lies inside it. */
  hostHome?: string
  /** An empty read-only file to show in place of a hidden file. */
  emptyFile: string
  /**
   * Folders of the command itself (its working folder, the folders of its
   * program and of the files its arguments name) that lie in the host's
   * `/tmp`, which the instance gets a new one of: bound back read-only, so a
   * server kept there (a checkout in /tmp) still starts.
   */
  keptInTmp?: readonly string[]
  env: Record<string, string>
  cwd: string
  argv: readonly string[]
}

/**
 * The bwrap argument vector of a scoped server's instance that sets
 * `sandbox: true` (pure, exact): every namespace unshared but the network
 * (a server such as GitHub's must reach its API), nested user namespaces
 * disabled, every capability dropped, killed with myc, a session of its own;
 * `/` read-only, new `/dev`, `/proc` (its own processes only: myc's
 * environment is not there), `/tmp` (the command's own folders in it bound
 * back read-only) and `/run`, the operator's home folder emptied; myc's state, the secret store and every instance folder hidden
 * behind empty read-only ones, then the instance's own folder bound
 * read-write into its place: it sees its person's folder and no one else's.
 * The environment is cleared and set to `env`.
 */
export function childSandboxArgs(input: ChildSandboxInput): string[] {
  const args = [...ISOLATION_ARGS, '--share-net', ...HOST_VIEW_ARGS]
  if (input.hostHome) args.push('--tmpfs', input.hostHome)
  for (const folder of input.keptInTmp ?? []) args.push('--ro-bind', folder, folder)
  const hiddenDirs: string[] = []
  for (const h of input.hidden) {
    if (h.kind === 'dir') {
      args.push('--tmpfs', h.path)
      hiddenDirs.push(h.path)
    } else args.push('--ro-bind', input.emptyFile, h.path)
  }
  // Its own folder into the emptied state folder, then that one read-only: a nested bind keeps its own write access.
  args.push('--bind', input.own, input.own)
  for (const d of hiddenDirs) args.push('--remount-ro', d)
  args.push('--clearenv')
  for (const key of Object.keys(input.env).sort()) args.push('--setenv', key, input.env[key]!)
  args.push('--chdir', input.cwd, '--', ...input.argv)
  return args
}

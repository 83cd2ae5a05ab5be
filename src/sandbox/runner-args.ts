import path from 'node:path'
import { ISOLATION_ARGS } from './bubblewrap-args.js'
import type { Mask } from './masks.js'
import type { OwnFiles } from './own-files.js'

/** Everything the argument builder for code mode's runner needs; paths absolute and real. */
export interface RunnerSandboxInput {
  /** The runner's own files (own-files.ts), bound read-only at their real paths, and the links that lead to them. */
  own: OwnFiles
  /** The launcher's code cache folder (real path, already judged trusted), bound read-only: the runner reads it, nothing in the sandbox can write it. */
  codeCache?: string
  /** `codeMode.mounts`: folders or files shown read-only at their own paths. */
  mounts: readonly string[]
  /** myc's state inside those mounts, hidden (the kinds `hide-dir` and `hide-file` only). */
  masks: readonly Mask[]
  /** An empty read-only file to show in place of a hidden file. */
  emptyFile: string
  /** The size of the scratch folder `/tmp`, in bytes (a tmpfs lives in memory). */
  scratchBytes: number
  /** The file descriptor bubblewrap reads the seccomp filter from. */
  seccompFd: number
  env: Record<string, string>
  argv: readonly string[]
}

/**
 * The bwrap argument vector for code mode's runner (pure, exact): every
 * namespace unshared (no network at all: the sandbox has only its own
 * loopback), nested user namespaces disabled, every capability dropped, a new
 * session, the seccomp filter that allows no new process; the root an empty
 * tmpfs holding only the runner's own files, the mounts and a size-capped
 * scratch `/tmp`, then made read-only; `/dev` read-only (no writable
 * `/dev/shm` outside the size cap); `/proc` of the sandbox's own processes;
 * the environment cleared. Nothing of myc's state, the workspace or the
 * home folder is there unless a mount names it, and myc's state inside a
 * mount is hidden.
 */
export function runnerArgs(input: RunnerSandboxInput): string[] {
  const args = [
    ...ISOLATION_ARGS,
    '--seccomp',
    String(input.seccompFd),

    '--tmpfs',
    '/',
    '--dev',
    '/dev',
    '--remount-ro',
    '/dev',
    '--proc',
    '/proc',
    '--size',
    String(input.scratchBytes),
    '--tmpfs',
    '/tmp',
  ]
  for (const file of input.own.files) args.push('--ro-bind', file, file)
  // A link's folders are real ones (own-files.ts follows them first): made, then the link in them.
  const folders = new Set(input.own.links.map((l) => path.dirname(l.path)))
  for (const folder of folders) if (folder !== '/') args.push('--dir', folder)
  for (const link of input.own.links) args.push('--symlink', link.target, link.path)
  if (input.codeCache !== undefined) args.push('--ro-bind', input.codeCache, input.codeCache)
  for (const mount of input.mounts) args.push('--ro-bind', mount, mount)
  const hiddenDirs: string[] = []
  for (const m of input.masks) {
    if (m.kind === 'hide-dir') {
      args.push('--tmpfs', m.path)
      hiddenDirs.push(m.path)
    } else if (m.kind === 'hide-file') args.push('--ro-bind', input.emptyFile, m.path)
  }
  for (const d of hiddenDirs) args.push('--remount-ro', d)
  args.push('--remount-ro', '/', '--clearenv')
  for (const key of Object.keys(input.env).sort()) args.push('--setenv', key, input.env[key]!)
  args.push('--chdir', '/tmp', '--', ...input.argv)
  return args
}

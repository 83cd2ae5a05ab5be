import path from 'node:path'
import type { Mask } from './masks.js'
import type { TrustLevel } from './types.js'

export interface DockerInput {
  trust: Exclude<TrustLevel, 'unrestricted'>
  name: string
  image: string
  workspace: string
  uid: number
  gid: number
  env: Record<string, string>
  argv: readonly string[]
  /** Protected paths, parents first; only those in the workspace are mounted at all. */
  masks?: readonly Mask[]
  /** An empty file to show in place of a hidden file. */
  emptyFile?: string
  /** One file shown read-only although it lies in a hidden folder (run_script's script). */
  exposeFile?: string
  pidsLimit?: number
  memory?: string
  cpus?: string
}

/**
 * The `docker run` argument vector (pure, exact): no network, read-only root,
 * every capability dropped, no new privileges, limits, the caller's uid, a
 * tmpfs /tmp, the workspace mounted (read-only when `restricted`), a name so
 * a timeout can kill it. Never the Docker socket. Then the masks, at their
 * places under /workspace: a hidden folder an empty tmpfs no one inside may
 * write (mode 0555, the caller's uid is not root), a hidden file an empty
 * read-only file, a read-only path bound again read-only, a pinned folder
 * bound onto itself (a mount point no rename moves).
 */
export function dockerRunArgs(input: DockerInput): string[] {
  const args = [
    'run',
    '--rm',
    '--init',
    '--name',
    input.name,
    '--network',
    'none',
    '--read-only',
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
    '--pids-limit',
    String(input.pidsLimit ?? 256),
    '--memory',
    input.memory ?? '1g',
    '--cpus',
    input.cpus ?? '1',
    '--user',
    `${input.uid}:${input.gid}`,
    '--tmpfs',
    '/tmp:rw,nosuid,nodev,size=256m',
    '--mount',
    `type=bind,source=${input.workspace},target=/workspace${input.trust === 'restricted' ? ',readonly' : ''}`,
    '--workdir',
    '/workspace',
  ]
  const inside = (p: string) => {
    const rel = path.relative(input.workspace, p)
    return rel === '' || rel.startsWith('..') || path.isAbsolute(rel)
      ? undefined
      : path.posix.join('/workspace', ...rel.split(path.sep))
  }
  for (const m of input.masks ?? []) {
    const target = inside(m.path)
    if (!target) continue
    if (m.kind === 'hide-dir') args.push('--mount', `type=tmpfs,destination=${target},tmpfs-mode=0555`)
    else if (m.kind === 'pin')
      args.push(
        '--mount',
        `type=bind,source=${m.path},target=${target}${input.trust === 'restricted' ? ',readonly' : ''}`,
      )
    else
      args.push(
        '--mount',
        `type=bind,source=${m.kind === 'hide-file' ? (input.emptyFile ?? '/dev/null') : m.path},target=${target},readonly`,
      )
  }
  const script = input.exposeFile ? inside(input.exposeFile) : undefined
  if (input.exposeFile && script) args.push('--mount', `type=bind,source=${input.exposeFile},target=${script},readonly`)
  for (const key of Object.keys(input.env).sort()) args.push('--env', `${key}=${input.env[key]}`)
  args.push('--', input.image, ...input.argv)
  return args
}

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
  pidsLimit?: number
  memory?: string
  cpus?: string
}

/**
 * The `docker run` argument vector (pure, exact): no network, read-only root,
 * every capability dropped, no new privileges, limits, the caller's uid, a
 * tmpfs /tmp, the workspace mounted (read-only when `restricted`), a name so
 * a timeout can kill it. Never the Docker socket.
 */
export function dockerRunArgs(input: DockerInput): string[] {
  const args = [
    'run', '--rm', '--init', '--name', input.name,
    '--network', 'none', '--read-only', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges',
    '--pids-limit', String(input.pidsLimit ?? 256), '--memory', input.memory ?? '1g', '--cpus', input.cpus ?? '1',
    '--user', `${input.uid}:${input.gid}`,
    '--tmpfs', '/tmp:rw,nosuid,nodev,size=256m',
    '--mount', `type=bind,source=${input.workspace},target=/workspace${input.trust === 'restricted' ? ',readonly' : ''}`,
    '--workdir', '/workspace',
  ]
  for (const key of Object.keys(input.env).sort()) args.push('--env', `${key}=${input.env[key]}`)
  args.push('--', input.image, ...input.argv)
  return args
}

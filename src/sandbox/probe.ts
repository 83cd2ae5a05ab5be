import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { homeFolder } from '../config/state-roots.js'
import { bubblewrapArgs } from './bubblewrap-args.js'
import { sandboxExecArgs } from './seatbelt-profile.js'
import type { ExecutorName } from './types.js'

/** Whether an executor works here, and if not, what a person can do about it. */
export interface ExecutorReport {
  executor: ExecutorName
  works: boolean
  reason?: string
  fix?: string
}

function run(argv: string[], timeoutMs = 10_000): Promise<{ code: number | null; stderr: string; missing: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      resolve({ code: null, stderr: e.message, missing: e.code === 'ENOENT' })
    })
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stderr, missing: false })
    })
  })
}

/** Turns a failed bwrap probe into a reason and a fix (pure, for tests). */
export function explainBwrapFailure(stderr: string, missing: boolean): { reason: string; fix: string } {
  if (missing)
    return {
      reason: 'bubblewrap (bwrap) is not installed',
      fix: 'install it: apt-get install bubblewrap (Debian/Ubuntu), dnf install bubblewrap (Fedora)',
    }
  if (/apparmor/i.test(stderr) || /setting up uid map: Permission denied/.test(stderr)) {
    return {
      reason: `user namespaces are refused (${stderr.trim().split('\n')[0]})`,
      fix: 'on Ubuntu 23.10+ AppArmor restricts unprivileged user namespaces: add an AppArmor profile for /usr/bin/bwrap, or set sysctl kernel.apparmor_restrict_unprivileged_userns=0',
    }
  }
  if (/No permissions to create new namespace|Operation not permitted|user namespace/i.test(stderr)) {
    return {
      reason: `user namespaces are disabled (${stderr.trim().split('\n')[0]})`,
      fix: 'enable them: sysctl kernel.unprivileged_userns_clone=1 (Debian) or user.max_user_namespaces=15000; in a container, run it with --security-opt seccomp=unconfined or use the docker executor',
    }
  }
  return {
    reason: `bwrap failed: ${stderr.trim().split('\n')[0] || 'no message'}`,
    fix: 'run `bwrap --ro-bind / / true` to see why',
  }
}

/** Turns a failed `docker info` into a reason and a fix (pure). */
export function explainDockerFailure(stderr: string, missing: boolean): { reason: string; fix: string } {
  if (missing)
    return { reason: 'the docker client is not installed', fix: 'install Docker, or choose another executor' }
  if (
    /Cannot connect to the Docker daemon|Is the docker daemon running|error during connect|permission denied.*docker\.sock/i.test(
      stderr,
    )
  ) {
    return {
      reason: `no Docker engine answers (${stderr.trim().split('\n')[0]})`,
      fix: 'start the Docker engine (or Docker Desktop), or add your user to the docker group',
    }
  }
  return {
    reason: `docker info failed: ${stderr.trim().split('\n')[0] || 'no message'}`,
    fix: 'run `docker info` to see why',
  }
}

/**
 * Probes the executors by really running each once (a `true` inside the
 * sandbox). One instance caches its answers: build one per process.
 */
export class ExecutorProbe {
  private cache = new Map<ExecutorName, Promise<ExecutorReport>>()

  probe(executor: ExecutorName): Promise<ExecutorReport> {
    let p = this.cache.get(executor)
    if (!p) {
      p = this.run(executor)
      this.cache.set(executor, p)
    }
    return p
  }

  async all(): Promise<ExecutorReport[]> {
    return Promise.all((['bubblewrap', 'sandbox-exec', 'docker', 'none'] as const).map((e) => this.probe(e)))
  }

  private async run(executor: ExecutorName): Promise<ExecutorReport> {
    switch (executor) {
      case 'none':
        return { executor, works: true }
      case 'bubblewrap': {
        if (process.platform !== 'linux')
          return {
            executor,
            works: false,
            reason: 'bubblewrap runs on Linux only',
            fix: 'use sandbox-exec on macOS or docker',
          }
        const ws = await mkdtemp(path.join(tmpdir(), 'myc-probe-'))
        try {
          const r = await run([
            'bwrap',
            ...bubblewrapArgs({
              trust: 'sandboxed',
              workspace: ws,
              home: homeFolder(),
              masks: [],
              env: {},
              argv: ['true'],
            }),
          ])
          return r.code === 0
            ? { executor, works: true }
            : { executor, works: false, ...explainBwrapFailure(r.stderr, r.missing) }
        } finally {
          await rm(ws, { recursive: true, force: true })
        }
      }
      case 'sandbox-exec': {
        if (process.platform !== 'darwin')
          return {
            executor,
            works: false,
            reason: 'sandbox-exec exists on macOS only',
            fix: 'use bubblewrap on Linux or docker',
          }
        const r = await run([
          'sandbox-exec',
          ...sandboxExecArgs({
            trust: 'sandboxed',
            workspace: tmpdir(),
            tmpdir: tmpdir(),
            hidden: [],
            readOnly: [],
            argv: ['/usr/bin/true'],
          }),
        ])
        return r.code === 0
          ? { executor, works: true }
          : {
              executor,
              works: false,
              reason: `sandbox-exec failed: ${r.stderr.trim().split('\n')[0]}`,
              fix: 'run `sandbox-exec -p "(version 1)(allow default)" /usr/bin/true` to see why',
            }
      }
      case 'docker': {
        const r = await run(['docker', 'info', '--format', '{{.ServerVersion}}'])
        return r.code === 0
          ? { executor, works: true }
          : { executor, works: false, ...explainDockerFailure(r.stderr, r.missing) }
      }
    }
  }
}

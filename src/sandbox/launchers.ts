import { existsSync, realpathSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { bubblewrapArgs } from './bubblewrap-args.js'
import { dockerRunArgs } from './docker-args.js'
import { pinsFor, type MaskPlan } from './masks.js'
import { PROXY_DIR_INSIDE, proxyEnv, startConnectProxy, withProxyBridge } from './network-proxy.js'
import type { ProtectedPath } from './protected-paths.js'
import { sandboxExecArgs } from './seatbelt-profile.js'
import { spawnLimited, type LimitedOutcome } from './spawn-limited.js'
import { MINIMAL_PATH, type ExecRequest, type ExecutorName } from './types.js'

/** One run, ready to start: the request, where it runs, what it runs, and what it guards. */
export interface Launch {
  request: ExecRequest
  /** The workspace, real path. */
  workspace: string
  /** The home folder, real path. */
  home: string
  argv: string[]
  env: Record<string, string>
  /** The one file the command may read in a hidden folder, real path. */
  exposeFile: string | undefined
  guarded: ProtectedPath[]
  /** The masks, for the mount-based executors (bubblewrap, docker). */
  plan: MaskPlan | undefined
  /** An empty read-only file to bind over hidden files. */
  emptyFile: () => string
}

/** Starts a run under one executor and waits for it to end; rejects when it cannot start. */
export const LAUNCHERS: Record<ExecutorName, (launch: Launch) => Promise<LimitedOutcome>> = {
  bubblewrap: launchBubblewrap,
  'sandbox-exec': launchSandboxExec,
  docker: launchDocker,
  none: launchDirect,
}

export function safeRealpath(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    return p
  }
}

/** A run's time and output limits. */
const base = (request: ExecRequest) => ({ timeoutMs: request.timeoutMs, outputLimitBytes: request.outputLimitBytes })

/** `inner` under prlimit, when the request limits file size or processes and prlimit is there. */
function limits(request: ExecRequest, inner: string[]): string[] {
  return (request.maxFileBytes || request.maxProcesses) && existsSync('/usr/bin/prlimit')
    ? [
        'prlimit',
        ...(request.maxFileBytes ? [`--fsize=${request.maxFileBytes}`] : []),
        ...(request.maxProcesses ? [`--nproc=${request.maxProcesses}`] : []),
        '--',
        ...inner,
      ]
    : inner
}

/** Whether the allow-list opens a filtering proxy (sandboxed runs only: network is denied by default). */
const proxied = (request: ExecRequest) => request.network.allow.length > 0 && request.trust === 'sandboxed'

async function launchBubblewrap(l: Launch): Promise<LimitedOutcome> {
  const { request } = l
  // Network: none, unless the allow-list opens a filtering proxy (deny by default).
  const proxy = proxied(request) ? await startConnectProxy(request.network.allow) : undefined
  try {
    const args = bubblewrapArgs({
      trust: request.trust as 'sandboxed',
      workspace: l.workspace,
      home: l.home,
      masks: l.plan!.masks,
      emptyFile: l.emptyFile(),
      ...(l.exposeFile ? { exposeFile: l.exposeFile } : {}),
      env: proxy ? { ...proxyEnv(), ...l.env } : l.env,
      argv: proxy ? withProxyBridge(l.argv) : l.argv,
      extraBinds: proxy ? [{ source: proxy.dir, target: PROXY_DIR_INSIDE }] : [],
    })
    return await spawnLimited({
      ...base(request),
      argv: limits(request, ['bwrap', ...args]),
      env: { PATH: process.env.PATH ?? MINIMAL_PATH },
    })
  } finally {
    await proxy?.close()
  }
}

async function launchSandboxExec(l: Launch): Promise<LimitedOutcome> {
  const { request, guarded } = l
  const tmp = await mkdtemp(path.join(tmpdir(), 'myc-sbx-'))
  const real = (p: string) => safeRealpath(p)
  // The profile allows one loopback port: the filtering proxy's.
  const proxy = proxied(request) ? await startConnectProxy(request.network.allow, 'loopback') : undefined
  try {
    const args = sandboxExecArgs({
      trust: request.trust as 'sandboxed',
      workspace: l.workspace,
      tmpdir: tmp,
      hidden: guarded.filter((g) => g.access === 'hidden').map((g) => real(g.path)),
      readOnly: guarded.filter((g) => g.access === 'read-only').map((g) => real(g.path)),
      ...(request.trust === 'sandboxed'
        ? {
            pinned: pinsFor(
              l.workspace,
              guarded.map((g) => real(g.path)),
            ),
          }
        : {}),
      ...(l.exposeFile ? { exposeFile: l.exposeFile } : {}),
      argv: l.argv,
      ...(proxy?.port !== undefined ? { proxyPort: proxy.port } : {}),
    })
    return await spawnLimited({
      ...base(request),
      argv: limits(request, ['sandbox-exec', ...args]),
      cwd: l.workspace,
      env: {
        PATH: MINIMAL_PATH,
        HOME: l.home,
        TMPDIR: tmp,
        ...(proxy?.port !== undefined ? proxyEnv(proxy.port) : {}),
        ...l.env,
      },
    })
  } finally {
    await proxy?.close()
  }
}

/** A path docker's `--mount` cannot carry (a comma or a newline), if the run has one. */
export function oddDockerPath(l: Launch): string | undefined {
  const paths = [l.workspace, ...l.plan!.masks.map((m) => m.path), ...(l.exposeFile ? [l.exposeFile] : [])]
  return paths.find((p) => /[,\n]/.test(p))
}

function launchDocker(l: Launch): Promise<LimitedOutcome> {
  const { request, exposeFile } = l
  const name = `myc-${randomBytes(6).toString('hex')}`
  const uid = process.getuid?.() ?? 1000
  const gid = process.getgid?.() ?? 1000
  // The container sees the workspace at /workspace: the script's path moves with it.
  const script = exposeFile
    ? path.posix.join('/workspace', ...path.relative(l.workspace, exposeFile).split(path.sep))
    : undefined
  const inner =
    exposeFile && script ? l.argv.map((a) => (a === exposeFile || a === request.exposeFile ? script : a)) : l.argv
  return spawnLimited({
    ...base(request),
    argv: [
      'docker',
      ...dockerRunArgs({
        trust: request.trust as 'sandboxed',
        name,
        image: request.docker?.image ?? 'node:22-bookworm-slim',
        workspace: l.workspace,
        uid,
        gid,
        env: l.env,
        argv: inner,
        masks: l.plan!.masks,
        emptyFile: l.emptyFile(),
        ...(exposeFile ? { exposeFile } : {}),
        ...(request.maxProcesses ? { pidsLimit: request.maxProcesses } : {}),
      }),
    ],
    env: process.env as Record<string, string>,
    onTimeout: () =>
      void spawnLimited({
        argv: ['docker', 'kill', name],
        timeoutMs: 10_000,
        outputLimitBytes: 4096,
        env: process.env as Record<string, string>,
      }).catch(() => {}),
  })
}

/** No sandbox (trust `unrestricted`): the command runs in the workspace with the request's environment. */
function launchDirect(l: Launch): Promise<LimitedOutcome> {
  return spawnLimited({
    ...base(l.request),
    argv: limits(l.request, l.argv),
    cwd: l.workspace,
    env: { PATH: process.env.PATH ?? MINIMAL_PATH, HOME: l.home, ...l.env },
  })
}

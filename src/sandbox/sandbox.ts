import { existsSync, realpathSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { homedir, tmpdir } from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { bubblewrapArgs, RC_FILES } from './bubblewrap-args.js'
import { dockerRunArgs } from './docker-args.js'
import type { ShellGuard } from './guard/guard.js'
import type { ExecutorProbe } from './probe.js'
import { PROXY_DIR_INSIDE, proxyEnv, startConnectProxy, withProxyBridge } from './network-proxy.js'
import { sandboxExecArgs } from './seatbelt-profile.js'
import { spawnLimited } from './spawn-limited.js'
import { MINIMAL_PATH, type ExecRequest, type ExecResult, type ExecutorName } from './types.js'

export interface SandboxDeps {
  guard: Pick<ShellGuard, 'check'>
  probe: Pick<ExecutorProbe, 'probe'>
  platform?: NodeJS.Platform
}

const PREFERENCE: Record<string, ExecutorName[]> = { linux: ['bubblewrap', 'docker'], darwin: ['sandbox-exec', 'docker'] }

/**
 * Runs commands where they cannot harm the machine: the shell guard first
 * (at every trust level), then the chosen executor. `restricted` and
 * `sandboxed` never fall back to no sandbox: without a working one they
 * refuse and say how to fix it.
 */
export class Sandbox {
  constructor(private readonly deps: SandboxDeps) {}

  async run(request: ExecRequest): Promise<ExecResult> {
    const verdict = await this.deps.guard.check(request.command)
    if (!verdict.ok) return { ok: false, error: { code: 'guard_blocked', rule: verdict.error.rule, message: `blocked by the shell guard (rule ${verdict.error.rule}): ${verdict.error.message}: ${verdict.error.command}` } }
    if (typeof request.command === 'string' && request.trust === 'restricted') {
      return { ok: false, error: { code: 'invalid_request', message: 'trust "restricted" runs programs directly, without a shell: pass an argument vector (myc sandbox exec -- prog arg…), or use trust "sandboxed"' } }
    }
    const argv = typeof request.command === 'string' ? ['sh', '-c', request.command] : [...request.command]
    if (argv.length === 0) return { ok: false, error: { code: 'invalid_request', message: 'no command given' } }

    let workspace: string
    try {
      workspace = realpathSync(request.workspace)
    } catch {
      return { ok: false, error: { code: 'invalid_request', message: `workspace ${request.workspace} does not exist` } }
    }
    const executor = await this.choose(request)
    if (typeof executor !== 'string') return executor
    if (request.network.allow.length > 0 && request.trust === 'sandboxed') {
      if (executor === 'docker') return { ok: false, error: { code: 'sandbox_unavailable', message: 'sandbox.network.allow needs the bubblewrap or sandbox-exec executor (a filtering proxy); docker runs with no network at all. Empty the list or use another executor' } }
      if (executor === 'bubblewrap' && !onPath('socat')) return { ok: false, error: { code: 'sandbox_unavailable', message: 'sandbox.network.allow needs socat to bridge the proxy into the sandbox: install it (apt-get install socat) or empty the list' } }
    }
    const env = { ...(request.env ?? {}) }
    const base = { timeoutMs: request.timeoutMs, outputLimitBytes: request.outputLimitBytes }
    const limits = (inner: string[]) => (request.maxFileBytes || request.maxProcesses) && existsSync('/usr/bin/prlimit') ? ['prlimit', ...(request.maxFileBytes ? [`--fsize=${request.maxFileBytes}`] : []), ...(request.maxProcesses ? [`--nproc=${request.maxProcesses}`] : []), '--', ...inner] : inner
    try {
      let outcome
      switch (executor) {
        case 'bubblewrap': {
          const inside = (rel: string) => path.join(workspace, rel)
          const readOnly = [...RC_FILES.map(inside), ...(request.protectedPaths ?? [])].filter((p) => existsSync(p)).map((p) => realpathSync(p)).filter((p) => p.startsWith(`${workspace}/`))
          const home = safeRealpath(homedir())
          // Network: none, unless the allow-list opens a filtering proxy (deny by default).
          const proxy = request.network.allow.length > 0 && request.trust === 'sandboxed' ? await startConnectProxy(request.network.allow) : undefined
          try {
            const inner = proxy ? withProxyBridge(argv) : argv
            const extraBinds = proxy ? [{ source: proxy.dir, target: PROXY_DIR_INSIDE }] : []
            outcome = await spawnLimited({ ...base, argv: limits(['bwrap', ...bubblewrapArgs({ trust: request.trust as 'sandboxed', workspace, home, readOnlyInWorkspace: [...new Set(readOnly)], env: proxy ? { ...proxyEnv(), ...env } : env, argv: inner, extraBinds })]), env: { PATH: process.env.PATH ?? MINIMAL_PATH } })
          } finally {
            await proxy?.close()
          }
          break
        }
        case 'sandbox-exec': {
          const tmp = await mkdtemp(path.join(tmpdir(), 'myc-sbx-'))
          const protectedDir = request.protectedPaths?.[0] ? safeRealpath(request.protectedPaths[0]) : '/nonexistent'
          // The profile allows one loopback port: the filtering proxy's.
          const proxy = request.network.allow.length > 0 && request.trust === 'sandboxed' ? await startConnectProxy(request.network.allow, 'loopback') : undefined
          try {
            const args = sandboxExecArgs({ trust: request.trust as 'sandboxed', workspace, tmpdir: tmp, protectedDir, argv, ...(proxy?.port !== undefined ? { proxyPort: proxy.port } : {}) })
            outcome = await spawnLimited({ ...base, argv: limits(['sandbox-exec', ...args]), cwd: workspace, env: { PATH: MINIMAL_PATH, HOME: homedir(), TMPDIR: tmp, ...(proxy?.port !== undefined ? proxyEnv(proxy.port) : {}), ...env } })
          } finally {
            await proxy?.close()
          }
          break
        }
        case 'docker': {
          if (/[,\n]/.test(workspace)) return { ok: false, error: { code: 'invalid_request', message: `the docker executor cannot mount a workspace whose path has a comma or a newline: ${JSON.stringify(workspace)}` } }
          const name = `myc-${randomBytes(6).toString('hex')}`
          const uid = process.getuid?.() ?? 1000
          const gid = process.getgid?.() ?? 1000
          outcome = await spawnLimited({
            ...base,
            argv: ['docker', ...dockerRunArgs({ trust: request.trust as 'sandboxed', name, image: request.docker?.image ?? 'node:22-bookworm-slim', workspace, uid, gid, env, argv, ...(request.maxProcesses ? { pidsLimit: request.maxProcesses } : {}) })],
            env: process.env as Record<string, string>,
            onTimeout: () => void spawnLimited({ argv: ['docker', 'kill', name], timeoutMs: 10_000, outputLimitBytes: 4096, env: process.env as Record<string, string> }).catch(() => {}),
          })
          break
        }
        case 'none':
          outcome = await spawnLimited({ ...base, argv: limits(argv), cwd: workspace, env: { PATH: process.env.PATH ?? MINIMAL_PATH, HOME: homedir(), ...env } })
          break
      }
      return { ok: true, outcome: { ...outcome, executor } }
    } catch (error) {
      return { ok: false, error: { code: 'spawn_failed', message: `could not start ${argv[0]}: ${(error as Error).message}` } }
    }
  }

  /** The executor for a request, or a refusal that says how to fix it. */
  private async choose(request: ExecRequest): Promise<ExecutorName | ExecResult> {
    if (request.trust === 'unrestricted') return 'none'
    if (request.executor === 'none') {
      return { ok: false, error: { code: 'sandbox_unavailable', message: `trust "${request.trust}" needs a sandbox, and executor "none" is none: choose an executor (bubblewrap, sandbox-exec, docker, auto) or set trust "unrestricted" to run without one` } }
    }
    const candidates = request.executor === 'auto' ? (PREFERENCE[this.deps.platform ?? process.platform] ?? ['docker']) : [request.executor]
    const reasons: string[] = []
    for (const name of candidates) {
      const report = await this.deps.probe.probe(name)
      if (report.works) return name
      reasons.push(`${name}: ${report.reason} (fix: ${report.fix})`)
    }
    return { ok: false, error: { code: 'sandbox_unavailable', message: `no sandbox works here for trust "${request.trust}", and myc does not fall back to running unsandboxed. ${reasons.join('; ')}` } }
  }
}

function onPath(program: string): boolean {
  return (process.env.PATH ?? MINIMAL_PATH).split(path.delimiter).some((dir) => dir !== '' && existsSync(path.join(dir, program)))
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    return p
  }
}

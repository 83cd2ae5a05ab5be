import { closeSync, existsSync, mkdtempSync, openSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { homeFolder } from '../config/state-roots.js'
import { LAUNCHERS, oddDockerPath, safeRealpath, type Launch } from './launchers.js'
import { Placeholders, planMasks, type MaskPlan } from './masks.js'
import { hostRunPaths, type ProtectedPath } from './protected-paths.js'
import { watchRunLater, type RunLaterWatch } from './run-later.js'
import type { ShellGuard } from './guard/guard.js'
import type { ExecutorProbe } from './probe.js'
import { MINIMAL_PATH, type ExecRequest, type ExecResult, type ExecutorName } from './types.js'

export interface SandboxDeps {
  guard: Pick<ShellGuard, 'check'>
  probe: Pick<ExecutorProbe, 'probe'>
  platform?: NodeJS.Platform
  /** The most folders a writable workspace may hold (run-later.ts, MAX_FOLDERS). */
  maxWorkspaceFolders?: number
}

const PREFERENCE: Record<string, ExecutorName[]> = {
  linux: ['bubblewrap', 'docker'],
  darwin: ['sandbox-exec', 'docker'],
}

/**
 * The executor `sandbox.executor` means on `platform`: `auto` is the
 * platform's own (bubblewrap on Linux, sandbox-exec on macOS; docker where
 * there is none, and only a fallback elsewhere), any other name itself,
 * `none` none.
 */
export function configuredExecutors(
  executor: ExecutorName | 'auto',
  platform: string = process.platform,
): ExecutorName[] {
  if (executor === 'none') return []
  if (executor !== 'auto') return [executor]
  return (PREFERENCE[platform] ?? ['docker']).slice(0, 1)
}

/**
 * Runs commands where they cannot harm the machine: the shell guard first
 * (at every trust level), then the chosen executor. `restricted` and
 * `sandboxed` never fall back to no sandbox: without a working one they
 * refuse and say how to fix it.
 */
export class Sandbox {
  private readonly placeholders = new Placeholders()
  private empty: string | undefined

  constructor(private readonly deps: SandboxDeps) {}

  /** An empty read-only file to bind over hidden files (one per Sandbox, made on first use). */
  private emptyFile(): string {
    if (this.empty === undefined || !existsSync(this.empty)) {
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'myc-empty-')), 'empty')
      closeSync(openSync(file, 'wx', 0o444))
      this.empty = file
    }
    return this.empty
  }

  async run(request: ExecRequest): Promise<ExecResult> {
    let workspace: string
    try {
      workspace = realpathSync(request.workspace)
    } catch {
      return { ok: false, error: { code: 'invalid_request', message: `workspace ${request.workspace} does not exist` } }
    }
    // The guard judges targets against the workspace: what stays inside it may be deleted, what leaves it may not.
    const verdict = await this.deps.guard.check(request.command, { cwd: workspace })
    if (!verdict.ok)
      return {
        ok: false,
        error: {
          code: 'guard_blocked',
          rule: verdict.error.rule,
          message: `blocked by the shell guard (rule ${verdict.error.rule}): ${verdict.error.message}: ${verdict.error.command}`,
        },
      }
    if (typeof request.command === 'string' && request.trust === 'restricted') return restrictedNeedsArgv()
    const argv = typeof request.command === 'string' ? ['sh', '-c', request.command] : [...request.command]
    if (argv.length === 0) return { ok: false, error: { code: 'invalid_request', message: 'no command given' } }

    const executor = await this.choose(request)
    if (typeof executor !== 'string') return executor
    const network = networkRefusal(request, executor)
    if (network) return network
    const home = safeRealpath(request.home ?? homeFolder())
    const guarding = this.guard(request, workspace, home, executor)
    if ('ok' in guarding) return guarding
    const { guarded, plan, watch } = guarding
    const exposeFile = request.exposeFile ? safeRealpath(request.exposeFile) : undefined
    const launch: Launch = {
      request,
      workspace,
      home,
      argv,
      env: { ...request.env },
      exposeFile,
      guarded,
      plan,
      emptyFile: () => this.emptyFile(),
    }
    return launchGuarded(executor, launch, watch)
  }

  /**
   * What a run guards: myc's state hidden, what the host runs later
   * read-only (the home folder's start-up files where the workspace holds
   * it, and the repositories already in a writable workspace, which is
   * searched again when the run ends: `watch`), and for the mount-based
   * executors the masks (seatbelt denies by path, missing paths included).
   */
  private guard(
    request: ExecRequest,
    workspace: string,
    home: string,
    executor: ExecutorName,
  ): { guarded: ProtectedPath[]; plan: MaskPlan | undefined; watch: RunLaterWatch | undefined } | ExecResult {
    const hidden = request.hiddenPaths ?? []
    const refusal = (error: unknown): ExecResult => ({
      ok: false,
      error: { code: 'invalid_request', message: (error as Error).message },
    })
    let watch: RunLaterWatch | undefined
    try {
      if (request.trust === 'sandboxed')
        watch = watchRunLater(
          workspace,
          hidden.map((h) => safeRealpath(h.path)),
          (p) => this.placeholders.holds(p),
          this.deps.maxWorkspaceFolders,
        )
    } catch (error) {
      return refusal(error)
    }
    const guarded = [
      ...hidden,
      ...hostRunPaths(workspace, home, request.readOnlyPaths ?? []),
      ...(watch?.guarded ?? []),
    ]
    if (executor !== 'bubblewrap' && executor !== 'docker') return { guarded, plan: undefined, watch }
    try {
      return { guarded, plan: planMasks(workspace, guarded, this.placeholders, request.trust === 'sandboxed'), watch }
    } catch (error) {
      return refusal(error)
    }
  }

  /** The executor for a request, or a refusal that says how to fix it. */
  private async choose(request: ExecRequest): Promise<ExecutorName | ExecResult> {
    if (request.trust === 'unrestricted') return 'none'
    if (request.executor === 'none') {
      return {
        ok: false,
        error: {
          code: 'sandbox_unavailable',
          message: `trust "${request.trust}" needs a sandbox, and executor "none" is none: choose an executor (bubblewrap, sandbox-exec, docker, auto) or set trust "unrestricted" to run without one`,
        },
      }
    }
    const candidates =
      request.executor === 'auto'
        ? (PREFERENCE[this.deps.platform ?? process.platform] ?? ['docker'])
        : [request.executor]
    const reasons: string[] = []
    for (const name of candidates) {
      const report = await this.deps.probe.probe(name)
      if (report.works) return name
      reasons.push(`${name}: ${report.reason} (fix: ${report.fix})`)
    }
    return {
      ok: false,
      error: {
        code: 'sandbox_unavailable',
        message: `no sandbox works here for trust "${request.trust}", and myc does not fall back to running unsandboxed. ${reasons.join('; ')}`,
      },
    }
  }
}

function restrictedNeedsArgv(): ExecResult {
  return {
    ok: false,
    error: {
      code: 'invalid_request',
      message:
        'trust "restricted" runs programs directly, without a shell: pass an argument vector (myc sandbox exec -- prog arg…), or use trust "sandboxed"',
    },
  }
}

/** Why a network allow-list cannot be honoured by `executor`, if it cannot. */
function networkRefusal(request: ExecRequest, executor: ExecutorName): ExecResult | undefined {
  if (request.network.allow.length === 0 || request.trust !== 'sandboxed') return undefined
  if (executor === 'docker')
    return {
      ok: false,
      error: {
        code: 'sandbox_unavailable',
        message:
          'sandbox.network.allow needs the bubblewrap or sandbox-exec executor (a filtering proxy); docker runs with no network at all. Empty the list or use another executor',
      },
    }
  if (executor === 'bubblewrap' && !onPath('socat'))
    return {
      ok: false,
      error: {
        code: 'sandbox_unavailable',
        message:
          'sandbox.network.allow needs socat to bridge the proxy into the sandbox: install it (apt-get install socat) or empty the list',
      },
    }
  return undefined
}

/**
 * Starts a guarded run under `executor` and reports how it ended: the masks
 * released and the workspace searched again (`watch`) whatever happens.
 */
async function launchGuarded(
  executor: ExecutorName,
  launch: Launch,
  watch: RunLaterWatch | undefined,
): Promise<ExecResult> {
  const { plan } = launch
  try {
    const odd = executor === 'docker' ? oddDockerPath(launch) : undefined
    if (odd !== undefined)
      return (
        plan!.release(),
        {
          ok: false,
          error: {
            code: 'invalid_request',
            message: `the docker executor cannot mount a path that has a comma or a newline: ${JSON.stringify(odd)}`,
          },
        }
      )
    const outcome = await LAUNCHERS[executor](launch)
    const warnings = [...(plan?.release() ?? []), ...(watch?.settle() ?? [])]
    return { ok: true, outcome: { ...outcome, executor, ...(warnings.length ? { warnings } : {}) } }
  } catch (error) {
    plan?.release()
    watch?.settle()
    return {
      ok: false,
      error: { code: 'spawn_failed', message: `could not start ${launch.argv[0]}: ${(error as Error).message}` },
    }
  }
}

function onPath(program: string): boolean {
  return (process.env.PATH ?? MINIMAL_PATH)
    .split(path.delimiter)
    .some((dir) => dir !== '' && existsSync(path.join(dir, program)))
}

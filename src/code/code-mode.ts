import { closeSync, existsSync, mkdtempSync, openSync, realpathSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { LoadedConfig } from '../config/load.js'
import { stateRoots } from '../config/state-roots.js'
import { MycError } from '../errors.js'
import type { Mask } from '../sandbox/masks.js'
import { ownFiles } from '../sandbox/own-files.js'
import type { Logger } from '../logger.js'
import { ExecutorProbe } from '../sandbox/probe.js'
import { noNewProcessesFilter, seccompArches } from '../sandbox/seccomp.js'
import { MINIMAL_PATH } from '../sandbox/types.js'
import { singleExecutable } from '../single-executable.js'
import { trustedCacheDir } from './code-cache.js'
import { CodeRunner } from './code-runner.js'

/** How myc starts its own executable as code mode's runner. */
export interface RunnerLaunch {
  /** The executable, and the bundle it runs when it is Node.js itself. */
  argv: string[]
  /** Files besides the executable and its libraries that the runner needs (the bundle). */
  files: string[]
  /** Whether that executable strips TypeScript types (Node.js 22.13 and later). */
  typescript: boolean
  /** The launcher's code cache folder (`.code-cache/` beside the bundle), shown read-only to the runner when trusted. */
  codeCache?: string
}

/** Code mode where it can run, or why it cannot and what would fix it (`myc doctor` shows both). */
export type CodeModeSetup = { ok: true; runner: CodeRunner } | { ok: false; reason: string; fix: string }

/**
 * This process's own executable as the runner: the single executable as it
 * is, or Node.js with the bundle it runs (build/myc-main.cjs). Run from
 * source (tsx) there is no bundle: undefined.
 */
export async function selfLaunch(): Promise<RunnerLaunch | undefined> {
  const typescript = await stripsTypes()
  if (typeof require !== 'function') return undefined
  if (singleExecutable()) return { argv: [process.execPath], files: [], typescript }
  const bundle = typeof __filename === 'string' && __filename.endsWith('.cjs') ? __filename : undefined
  return bundle ? bundleLaunch(bundle, typescript) : undefined
}

/**
 * Node.js with `bundle` as the runner: started through the npm package's
 * launcher beside it (build/launcher.cjs), with the launcher's code cache
 * shown read-only, when both are there and the cache is trusted; else the
 * bundle alone, compiled from its source at every run.
 */
export function bundleLaunch(bundle: string, typescript: boolean, env: NodeJS.ProcessEnv = process.env): RunnerLaunch {
  const dir = path.dirname(realpathSync(bundle))
  const launcher = path.join(dir, 'myc.cjs')
  const codeCache = env.NODE_DISABLE_COMPILE_CACHE ? undefined : trustedCacheDir(path.join(dir, '.code-cache'))
  if (!codeCache || !existsSync(launcher)) return { argv: [process.execPath, bundle], files: [bundle], typescript }
  return { argv: [process.execPath, launcher], files: [launcher, bundle], typescript, codeCache }
}

/** Whether this Node.js strips TypeScript types (22.13 and later): the runner is this same executable. */
export async function stripsTypes(): Promise<boolean> {
  const { stripTypeScriptTypes } = (await import('node:module')) as { stripTypeScriptTypes?: unknown }
  return typeof stripTypeScriptTypes === 'function'
}

/** An executable on this process's PATH (the system folders after it), as an absolute path. */
function onPath(program: string): string | undefined {
  const dirs = `${process.env.PATH ?? ''}${path.delimiter}${MINIMAL_PATH}`.split(path.delimiter)
  return dirs.map((d) => path.join(d, program)).find((p) => path.isAbsolute(p) && existsSync(p))
}

/** Why code mode cannot run with this config on this machine, or undefined when the executor allows it. */
async function executorProblem(
  loaded: LoadedConfig,
  probe: Pick<ExecutorProbe, 'probe'>,
  platform: NodeJS.Platform,
): Promise<{ reason: string; fix: string } | undefined> {
  const { executor } = loaded.config.sandbox
  if (executor === 'none')
    return {
      reason: 'sandbox.executor is "none", and code mode never runs code without a sandbox',
      fix: 'set sandbox.executor to "auto" or "bubblewrap"',
    }
  if (executor !== 'auto' && executor !== 'bubblewrap')
    return {
      reason: `code mode runs under bubblewrap only, and sandbox.executor is "${executor}"`,
      fix: 'set sandbox.executor to "auto" or "bubblewrap" on Linux',
    }
  if (platform !== 'linux')
    return { reason: 'code mode runs under bubblewrap, on Linux only', fix: 'run myc on Linux with bubblewrap' }
  const report = await probe.probe('bubblewrap')
  if (!report.works) return { reason: report.reason ?? 'bubblewrap does not work here', fix: report.fix ?? '' }
  return undefined
}

/**
 * Sets code mode up for a config (once per process): the executor must be
 * bubblewrap and work, the architecture must be one the seccomp filter
 * knows, prlimit must be there (the memory limit) and the runner must be
 * found (myc's bundle or executable). A `codeMode.mounts` entry that does
 * not exist or lies inside myc's state is a config error (MycError).
 */
export async function prepareCodeMode(
  loaded: LoadedConfig,
  deps: { probe: Pick<ExecutorProbe, 'probe'>; launch?: RunnerLaunch; platform?: NodeJS.Platform; arch?: string },
): Promise<CodeModeSetup> {
  const problem = await executorProblem(loaded, deps.probe, deps.platform ?? process.platform)
  if (problem) return { ok: false, ...problem }
  const filter = noNewProcessesFilter(deps.arch ?? process.arch)
  if (!filter)
    return {
      ok: false,
      reason: `code mode's sandbox knows the system calls of ${seccompArches().join(' and ')} only, not of ${deps.arch ?? process.arch}`,
      fix: 'run myc on an x64 or arm64 machine',
    }
  const [prlimit, bwrap] = [onPath('prlimit'), onPath('bwrap')]
  if (!prlimit || !bwrap)
    return {
      ok: false,
      reason: `${prlimit ? 'bwrap' : 'prlimit'} is not on PATH (code mode's memory limit needs prlimit, from util-linux)`,
      fix: `install ${prlimit ? 'bubblewrap' : 'util-linux'}`,
    }
  const launch = deps.launch ?? (await selfLaunch())
  if (!launch)
    return {
      ok: false,
      reason: "the runner is myc's own bundle or executable, and this myc runs from source",
      fix: 'run the built myc (npm run build, then build/myc.cjs)',
    }
  const { mounts, masks } = codeMounts(loaded)
  const own = ownFiles(launch.argv[0]!, launch.files)
  const emptyFile = masks.some((m) => m.kind === 'hide-file') ? makeEmptyFile() : '/dev/null'
  const { timeoutMs, memoryMb, maxOutputBytes } = loaded.config.codeMode
  const setup = {
    prlimit,
    bwrap,
    argv: launch.argv,
    own,
    mounts,
    masks,
    emptyFile,
    filter,
    typescript: launch.typescript,
    codeCache: launch.codeCache,
  }
  return { ok: true, runner: new CodeRunner(setup, { timeoutMs, memoryMb, maxOutputBytes }) }
}

/**
 * `codeMode.mounts` resolved (links followed) and checked, and the masks
 * that hide myc's state inside them: a mount inside myc's state, or one
 * that does not exist, is refused.
 */
export function codeMounts(loaded: LoadedConfig): { mounts: string[]; masks: Mask[] } {
  const where = `${loaded.file ?? 'config'}: codeMode.mounts`
  const state = stateRoots(loaded).flatMap((s) => {
    try {
      return [realpathSync(s.path)]
    } catch {
      return [] // Not there: nothing to hide (the mounts are read-only, so it cannot be made either).
    }
  })
  const within = (p: string, dir: string) => p === dir || p.startsWith(`${dir}${path.sep}`)
  const mounts = loaded.config.codeMode.mounts.map((entry) => {
    let real: string
    try {
      real = realpathSync(path.resolve(loaded.dir, entry))
    } catch {
      throw new MycError('config_invalid', `${where}: ${entry} does not exist; fix the path or remove it`)
    }
    const inside = state.find((s) => within(real, s))
    if (inside !== undefined)
      throw new MycError(
        'config_invalid',
        `${where}: ${entry} lies in ${inside}, which holds myc's own state and is never shown to code; mount a folder apart from it`,
      )
    return real
  })
  // A path under another hidden one needs no mask of its own (a mount point there would show its name).
  const masks: Mask[] = state
    .filter((s) => mounts.some((m) => within(s, m)) && !state.some((o) => o !== s && within(s, o)))
    .map((s) => ({ path: s, kind: statSync(s).isDirectory() ? 'hide-dir' : 'hide-file' }))
  return { mounts, masks }
}

function makeEmptyFile(): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'myc-empty-')), 'empty')
  closeSync(openSync(file, 'wx', 0o444))
  return file
}

/** The runner for `myc serve`: undefined, with a warning that says why and how to fix it, where code mode cannot run (fail closed). */
export async function codeRunnerFor(loaded: LoadedConfig, logger: Logger): Promise<CodeRunner | undefined> {
  const setup = await prepareCodeMode(loaded, { probe: new ExecutorProbe() })
  if (setup.ok) return setup.runner
  logger.warn(
    `code mode is off: ${setup.reason} (fix: ${setup.fix}); sessions list their tools as they would without it`,
  )
  return undefined
}

import type { Logger } from '../logger.js'
import { MycError } from '../errors.js'
import { redactUrls } from '../redact.js'
import { ExecutorProbe } from '../sandbox/probe.js'
import { openRuntime } from '../runtime/open-runtime.js'
import { showStartProgress } from '../runtime/start-progress.js'
import { clientNameWarnings } from '../registry/wire-names.js'
import { lintSkills } from './reports.js'
import { configuredExecutors } from '../sandbox/sandbox.js'
import type { DoctorCheck } from './doctor-check.js'
import { serveChecks } from './doctor-serve.js'
import { LOCK_FILE } from '../pinning/lock-file.js'
import type { HiddenTextKind } from '../pinning/hidden-text.js'
import type { Runtime } from '../runtime/runtime.js'
import type { WithheldEntry } from '../registry/catalogue.js'
import { version } from '../version.js'
import type { LoadedConfig } from '../config/load.js'
import { prepareCodeMode } from '../code/code-mode.js'
import { codeModeWanted, type PolicyMode } from '../principal/policy-mode.js'
import { childSessions } from '../eras/child-sessions.js'

export type { DoctorCheck } from './doctor-check.js'

/** What installs a command MCP servers are often started with. */
const PROVIDERS: ReadonlyMap<string, string> = new Map([
  ['npx', 'install Node.js 20 or newer (https://nodejs.org), which provides npx and npm'],
  ['npm', 'install Node.js 20 or newer (https://nodejs.org), which provides npm and npx'],
  ['node', 'install Node.js 20 or newer (https://nodejs.org)'],
  ['uvx', 'install uv (https://docs.astral.sh/uv/), which provides uvx'],
  ['uv', 'install uv (https://docs.astral.sh/uv/)'],
  ['docker', 'install Docker (https://docs.docker.com/get-docker/)'],
  ['python', 'install Python 3 (https://www.python.org)'],
  ['python3', 'install Python 3 (https://www.python.org)'],
])

/**
 * The fix for a child that did not start: for a missing command, what is
 * missing and what installs it (a standalone myc has no npx of its own);
 * otherwise where its stderr is.
 */
export function startFix(error: string | undefined): string {
  const missing = /^command not found: "([^"]+)"/.exec(error ?? '')?.[1]
  // An HTTP child that needs an OAuth login (docs/auth.md): its error ends with the fix.
  const login = /run: (myc auth login \S+)$/.exec(error ?? '')?.[1]
  if (login !== undefined) return `run \`${login}\``
  if (missing === undefined) return 'run `myc status --verbose` to see its stderr'
  const name = missing
    .split(/[\\/]/)
    .pop()!
    .replace(/\.(exe|cmd)$/i, '')
  const install = PROVIDERS.get(name) ?? `install ${name}`
  return `${missing} is missing (not found${missing.includes('/') || missing.includes('\\') ? '' : ' on PATH'}): ${install}, or give its absolute path in "command"`
}

/** A tool or prompt withheld for hidden text, as `myc doctor --json` names it. */
export interface HiddenReport {
  id: string
  server: string
  kind: 'tool' | 'prompt'
  name: string
  text: HiddenTextKind[]
}

/** The pinning check (docs/pinning.md): no lock (a suggestion), or what the lock and hidden text withhold. */
function pinningCheck(runtime: Runtime): { check: DoctorCheck; hidden: HiddenReport[] } {
  const withheld = runtime.catalogue.withheld()
  const hidden = withheld
    .filter((w) => w.reason === 'hidden')
    .map(({ id, server, kind, name, text }) => ({ id, server, kind, name, text: [...(text ?? [])] }))
  const count = (reason: WithheldEntry['reason']) => withheld.filter((w) => w.reason === reason).length
  const parts = [
    [count('changed'), 'changed since pinned'],
    [count('added'), 'new since pinned'],
    [count('unpinned'), 'of servers not in the lock'],
    [count('hidden'), 'with hidden text'],
  ].flatMap(([n, what]) => (n ? [`${n} ${what}`] : []))
  if (!runtime.pinning)
    return {
      hidden,
      check: {
        name: 'pinning',
        status: 'warn',
        detail: `no ${LOCK_FILE} beside the config: a changed tool definition reaches the model unreviewed${parts.length ? `; withheld: ${parts.join(', ')}` : ''}`,
        fix: `run \`myc pin\` and commit ${LOCK_FILE}; run \`myc pin --check\` in CI`,
      },
    }
  return {
    hidden,
    check:
      withheld.length === 0
        ? { name: 'pinning', status: 'ok', detail: `every tool and prompt matches ${LOCK_FILE}` }
        : {
            name: 'pinning',
            status: 'warn',
            detail: `${withheld.length} withheld: ${parts.join(', ')}`,
            fix: 'review them with `myc pin` (`myc status` lists them)',
          },
  }
}

/**
 * `myc doctor`: Node, the config, the children, tool names, pinning, skills,
 * what `myc serve` needs (doctor-serve.ts), code mode when asked for, and
 * the sandbox executors that apply here, each with a fix; and what hidden
 * text withholds.
 */
export async function runDoctor(options: DoctorOptions): Promise<{ checks: DoctorCheck[]; hidden: HiddenReport[] }> {
  const env = options.env ?? process.env
  const checks: DoctorCheck[] = [nodeCheck()]
  let hidden: HiddenReport[] = []
  const opened = await openForDoctor(options, env, checks)
  const probe = new ExecutorProbe()
  if (opened) {
    try {
      checks.push(...(await runtimeChecks(opened.runtime, opened.mode, { ...options, env })))
      const pinning = pinningCheck(opened.runtime)
      hidden = pinning.hidden
      checks.push(pinning.check)
      if (opened.mode.kind === 'policy') checks.push(skillsCheck(opened.mode))
      checks.push(...(await serveChecks(opened.loaded, opened.mode, env)))
    } finally {
      await opened.runtime.close()
    }
    const code = await codeModeCheck(opened.loaded, opened.mode, probe)
    if (code) checks.push(code)
  }
  checks.push(...(await executorChecks(opened?.loaded, probe)))
  // A detail can quote a child's URL (its start error, a config value): without its secrets.
  return { checks: checks.map((c) => ({ ...c, detail: redactUrls(c.detail) })), hidden }
}

interface DoctorOptions {
  configPath?: string
  logger: Logger
  json?: boolean
  cwd?: string
  env?: Record<string, string | undefined>
}

function nodeCheck(): DoctorCheck {
  const major = Number(process.versions.node.split('.')[0])
  return major >= 20
    ? { name: 'node', status: 'ok', detail: `Node.js ${process.versions.node}` }
    : {
        name: 'node',
        status: 'fail',
        detail: `Node.js ${process.versions.node}`,
        fix: 'use Node.js 20 or newer, or the standalone myc executable',
      }
}

/** The config and its runtime (children not started yet), with the config's check; undefined when it does not load. */
async function openForDoctor(
  options: DoctorOptions,
  env: Record<string, string | undefined>,
  checks: DoctorCheck[],
): Promise<{ runtime: Runtime; loaded: LoadedConfig; mode: PolicyMode } | undefined> {
  try {
    const opened = await openRuntime({
      childSessions,
      configPath: options.configPath,
      logger: options.logger,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      env,
      version,
      oneShot: { failuresShown: true },
      withheldShown: true,
    })
    checks.push({
      name: 'config',
      status: 'ok',
      detail: opened.loaded.file ?? 'no config file: the embedded default (no servers)',
      ...(opened.loaded.file ? {} : { fix: 'run `myc init` to write mycelium.config.json' }),
    })
    return opened
  } catch (error) {
    checks.push({
      name: 'config',
      status: 'fail',
      detail: error instanceof MycError ? error.message : String(error),
      fix: 'fix the keys named above',
    })
    return undefined
  }
}

/** Every child started once (a line each on a terminal while they start), then the tool names. */
async function runtimeChecks(
  runtime: Runtime,
  mode: PolicyMode,
  options: DoctorOptions & { env: Record<string, string | undefined> },
): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = []
  const keys = [...runtime.supervisor.children.keys()]
  const progress = { stream: process.stderr, env: options.env, json: options.json === true, keys }
  const stopProgress = showStartProgress(runtime, { ...progress, logger: options.logger })
  await Promise.all(keys.map((k) => runtime.supervisor.ensureRunning(k))).finally(stopProgress)
  for (const child of runtime.supervisor.children.values()) {
    checks.push(
      child.state === 'RUNNING'
        ? {
            name: `server ${child.key}`,
            status: 'ok',
            detail: `${child.lists.tools.length} tools, ${child.era === 'modern' ? '2026' : '2025'} era, MCP ${child.protocolVersion ?? '?'}`,
          }
        : {
            name: `server ${child.key}`,
            status: 'fail',
            detail: child.lastError ?? child.state,
            fix: startFix(child.lastError),
          },
    )
  }
  const long = runtime.catalogue.tools().filter((t) => clientNameWarnings(t.wireName).length > 0)
  if (long.length > 0)
    checks.push({
      name: 'tool names',
      status: 'warn',
      detail: `${long.length} wire names too long or with characters some clients reject (e.g. ${long[0]!.wireName}: ${clientNameWarnings(long[0]!.wireName)[0]})`,
      fix: 'shorten server keys, or set namespace.maxLength',
    })
  return checks
}

function skillsCheck(mode: Extract<PolicyMode, { kind: 'policy' }>): DoctorCheck {
  mode.state.invalidate()
  const { policy, sources, roles } = mode.state
  const problems = lintSkills(policy, sources.problems, sources.unserved).filter((p) => p.severity === 'error')
  return problems.length === 0
    ? { name: 'skills', status: 'ok', detail: `${policy.skills.size} skills, ${roles.size} roles` }
    : {
        name: 'skills',
        status: 'fail',
        detail: `${problems.length} problems, e.g. ${problems[0]!.message}`,
        fix: 'run `myc skills lint`',
      }
}

/**
 * The executors `sandbox.executor` means on this platform (auto: the
 * platform's own; docker only when configured), never the others: nothing
 * about sandbox-exec on Linux. None with trust `unrestricted`, which runs
 * commands without one.
 */
async function executorChecks(loaded: LoadedConfig | undefined, probe: ExecutorProbe): Promise<DoctorCheck[]> {
  const sandbox = loaded?.config.sandbox
  if (sandbox?.trust === 'unrestricted')
    return [{ name: 'sandbox', status: 'ok', detail: 'sandbox.trust is unrestricted: commands run without a sandbox' }]
  const wanted = configuredExecutors(sandbox?.executor ?? 'auto')
  if (wanted.length === 0)
    return [
      {
        name: 'sandbox',
        status: 'fail',
        detail: 'sandbox.executor is none: sandboxed commands will be refused',
        fix: 'set sandbox.executor to auto, or sandbox.trust to unrestricted',
      },
    ]
  const reports = await Promise.all(wanted.map((e) => probe.probe(e)))
  return reports.map((report) =>
    report.works
      ? { name: `executor ${report.executor}`, status: 'ok', detail: 'works' }
      : {
          name: `executor ${report.executor}`,
          status: 'fail',
          detail: `${report.reason ?? 'does not work'}: sandboxed commands (mycelium:exec, run_script, myc sandbox exec) will be refused`,
          ...(report.fix ? { fix: report.fix } : {}),
        },
  )
}

/**
 * Code mode, when the config asks for it (`session.codeMode`,
 * `agent.codeMode`, or a role's `codeMode`): whether run_code is offered, or
 * why not and what would fix it.
 */
async function codeModeCheck(
  loaded: LoadedConfig,
  mode: PolicyMode,
  probe: ExecutorProbe,
): Promise<DoctorCheck | undefined> {
  if (!codeModeWanted(mode, loaded) && !codeModeWanted(mode, loaded, 'agent')) return undefined
  try {
    const setup = await prepareCodeMode(loaded, { probe })
    if (!setup.ok)
      return { name: 'code mode', status: 'fail', detail: `run_code is not offered: ${setup.reason}`, fix: setup.fix }
    const { timeoutMs, memoryMb } = setup.runner.limits
    return {
      name: 'code mode',
      status: 'ok',
      detail: `run_code is offered: bubblewrap, ${timeoutMs} ms, ${memoryMb} MB, ${setup.runner.setup.typescript ? 'TypeScript types stripped' : 'JavaScript only'}`,
    }
  } catch (error) {
    return {
      name: 'code mode',
      status: 'fail',
      detail: error instanceof MycError ? error.message : String(error),
      fix: 'fix codeMode.mounts',
    }
  }
}

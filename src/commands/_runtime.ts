import type { CommandIO } from '../command-io.js'
import type { LoadedConfig } from '../config/load.js'
import { MycError } from '../errors.js'
import type { Logger } from '../logger.js'
import { openRuntime } from '../runtime/open-runtime.js'
import type { Runtime } from '../runtime/runtime.js'
import { showStartProgress } from '../runtime/start-progress.js'
import type { PolicyMode } from '../principal/policy-mode.js'
import type { PolicyState } from '../principal/policy-state.js'
import { version } from '../version.js'
import { initialSkills } from '../policy/escalation.js'
import { chooseRole } from '../policy/roles.js'
import { splitList } from './_shared.js'
import { childSessions } from '../eras/child-sessions.js'

export interface Inspection {
  runtime: Runtime
  loaded: LoadedConfig
  mode: PolicyMode
}

/**
 * For inspection commands: load the config (`args.config`) and skills,
 * `check` the command's flags against them (a usage error then comes
 * before any child starts), start every child (lazy ones too: the point is
 * to see them; a line per child on a terminal meanwhile, unless
 * `args.json`), run `use`, and always stop the children. One-shot: the
 * children's stderr is at debug level (`--verbose`) and a failed child is
 * not restarted; it is logged as an error unless `failuresShown` (the
 * command reports it, as status does); what is withheld (docs/pinning.md)
 * is a stderr line each unless `withheldShown`.
 */
export async function withStartedRuntime<T>(
  options: {
    io: CommandIO
    args: { config?: string; json?: boolean }
    logger: Logger
    failuresShown?: boolean
    withheldShown?: boolean
    check?: (opened: Omit<Inspection, 'runtime'>) => void
  },
  use: (inspection: Inspection) => Promise<T>,
): Promise<T> {
  const { runtime, loaded, mode } = await openRuntime({
    childSessions,
    configPath: options.args.config,
    cwd: options.io.cwd,
    env: options.io.env,
    logger: options.logger,
    version,
    oneShot: { failuresShown: options.failuresShown === true },
    ...(options.withheldShown ? { withheldShown: true } : {}),
  })
  // On a terminal, a line per child while they start (not with --json).
  const keys = [...runtime.supervisor.children.keys()]
  const stopProgress = showStartProgress(runtime, {
    stream: options.io.stderr,
    env: options.io.env,
    json: options.args.json === true,
    logger: options.logger,
    keys,
  })
  try {
    options.check?.({ loaded, mode })
    await Promise.all(keys.map((key) => runtime.supervisor.ensureRunning(key)))
    stopProgress()
    if (mode.kind === 'policy') mode.state.invalidate()
    return await use({ runtime, loaded, mode })
  } finally {
    stopProgress()
    await runtime.close()
  }
}

/** The policy state, or a usage error saying how to get out of open mode. */
export function requirePolicy(mode: PolicyMode): PolicyState {
  if (mode.kind === 'policy') return mode.state
  throw new MycError(
    'usage',
    'open mode: there are no skills, so no roles or policy (add a skills/ folder or a "skills" key to the config, or run `myc init`)',
  )
}

/**
 * The principal an inspection command looks at: the role from --role,
 * MYCELIUM_ROLE or roles.default (an unknown one is a usage error listing
 * the roles), and its starting skills (defaults plus --skills).
 */
export function principalFor(
  args: { role?: string; skills?: string },
  loaded: LoadedConfig,
  state: PolicyState,
  env: Record<string, string | undefined>,
): { role: string; active: Set<string> } {
  const choice = chooseRole(
    { flag: args.role, env: env.MYCELIUM_ROLE, configDefault: loaded.config.roles.default },
    state.roles,
  )
  if (!choice.ok) throw new MycError('usage', choice.error)
  return {
    role: choice.role,
    active: initialSkills(state.policy, choice.role, loaded.config.session.defaultSkills, splitList(args.skills) ?? []),
  }
}

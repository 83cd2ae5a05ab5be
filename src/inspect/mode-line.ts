import type { LoadedConfig } from '../config/load.js'
import { chooseRole } from '../policy/roles.js'
import type { PolicyMode } from '../principal/policy-mode.js'

/** The mode a report shows, and the role when there are roles (`--json`: fields of their own). */
export interface ShownMode {
  mode: 'open' | 'policy'
  /** The role shown; null in open mode, or when no role is chosen and none is the default. */
  role: string | null
  /** Open mode with `session.lazyTools`: a session lists search_tools and call_tool only. */
  lazyTools: boolean
}

/** The mode of a report about one principal (`myc tools`): its role is the view's. */
export function shownMode(mode: PolicyMode, loaded: LoadedConfig, role: string | null): ShownMode {
  return { mode: mode.kind, role, lazyTools: mode.kind === 'open' && loaded.config.session.lazyTools }
}

/**
 * The mode of a report about no principal in particular (`myc status`): in
 * policy mode, the role a session gets when it names none (MYCELIUM_ROLE,
 * else roles.default, else the only role).
 */
export function defaultMode(
  mode: PolicyMode,
  loaded: LoadedConfig,
  env: Record<string, string | undefined>,
): ShownMode {
  if (mode.kind === 'open') return shownMode(mode, loaded, null)
  const choice = chooseRole({ env: env.MYCELIUM_ROLE, configDefault: loaded.config.roles.default }, mode.state.roles)
  return shownMode(mode, loaded, choice.ok ? choice.role : null)
}

/**
 * One line saying which mode and role a report shows, and what that means
 * for a session: every tool (open), two tools that reach every tool (lazy
 * open, `wireNames` naming them), or what a role's skills allow (policy;
 * `asDefault`: the role is the one a session gets when it chooses none).
 */
export function modeLine(
  shown: ShownMode,
  loaded: Pick<LoadedConfig, 'file'>,
  options: { wireNames?: readonly string[]; asDefault?: boolean } = {},
): string {
  const wireNames = options.wireNames ?? []
  const where = loaded.file ?? 'this folder'
  if (shown.mode === 'open' && shown.lazyTools)
    return `open mode, lazy (session.lazyTools; no skills in ${where}): a session is offered ${wireNames.join(' and ') || 'search_tools and call_tool'}, and every tool stays callable by its name`
  if (shown.mode === 'open') return `open mode (no skills in ${where}): a session is offered every tool of every server`
  if (shown.role === null)
    return `policy mode: no default role (a session must choose one: --role, MYCELIUM_ROLE or roles.default); a session sees what its role's active skills allow`
  return options.asDefault
    ? `policy mode: a session that chooses no role is role ${shown.role}, and sees what its active skills allow`
    : `policy mode: role ${shown.role}; a session sees what its role's active skills allow`
}

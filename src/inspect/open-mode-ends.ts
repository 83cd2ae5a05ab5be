import path from 'node:path'
import type { LoadedConfig } from '../config/load.js'
import type { Logger } from '../logger.js'
import { chooseRole, resolveRoles } from '../policy/roles.js'
import { loadSources } from '../principal/policy-mode.js'

/**
 * What `myc skill add` says when its skill is the project's first: myc was
 * in open mode (every session saw every tool) and is in policy mode now.
 * Which role sees what (each role, its skills and their tools, the role a
 * session gets when it chooses none), and how to go back. Read from the
 * skills as myc will load them.
 */
export async function openModeEnds(
  loaded: LoadedConfig,
  skillsDir: string,
  logger: Logger,
  env: Record<string, string | undefined>,
): Promise<string> {
  const sources = await loadSources(loaded, logger)
  const resolved = resolveRoles(sources.skills, sources.definitions)
  const roles = resolved.ok ? resolved.roles : new Map()
  const skills = new Map(sources.skills.map((s) => [s.name, s]))
  const lines = [
    `${loaded.file ?? 'this folder'} was in open mode (every session saw every tool of every server); with a skill it is in policy mode: a session sees only the meta tools and what its role's active skills allow.`,
  ]
  for (const [role, resolvedRole] of roles) {
    const reached = [...resolvedRole.skills].sort().map((name) => {
      const tools = skills.get(name)?.allowedTools ?? []
      return `${name} (${tools.length > 0 ? tools.join(', ') : `no tools yet: add server:tool patterns to allowedTools in ${path.join(skillsDir, name, 'SKILL.md')}`})`
    })
    lines.push(`  role ${role}: ${reached.join('; ') || 'no skills'}`)
  }
  if (roles.size === 0) lines.push('  no role: no skill names one in allowedRoles, so no session can see a child tool')
  const choice = chooseRole({ env: env.MYCELIUM_ROLE, configDefault: loaded.config.roles.default }, roles)
  lines.push(
    choice.ok
      ? `  a session that chooses no role is role ${choice.role}`
      : '  a session must choose its role: --role, MYCELIUM_ROLE or roles.default in the config',
    `To go back to open mode, remove the skills folder: rm -r ${skillsDir}`,
  )
  return lines.join('\n')
}

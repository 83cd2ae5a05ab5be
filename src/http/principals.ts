import type { LoadedConfig } from '../config/load.js'
import { scopeOf } from '../config/server-schema.js'
import { MycError } from '../errors.js'
import { chooseRole } from '../policy/roles.js'
import { unreachableSkill, type ModeShape } from '../principal/policy-mode.js'
import type { HttpToken } from './bearer-tokens.js'

/** Whether a verified identity's role exists, and which of its skills the role reaches (the others are dropped). */
export type IdentityCheck = (
  role: string,
  skills: readonly string[],
) => { ok: true; skills: string[] } | { ok: false; reason: string }

/** Who an HTTP session is: chosen by its credential, never by the client. */
export interface HttpPrincipal {
  /** The credential a session is bound to: later requests for the session must present the same one. */
  key: string
  /** How logs name it (a token's `name`, never its value). */
  label: string
  /** The role (else `--role`, MYCELIUM_ROLE, `roles.default`, as over stdio). */
  role?: string
  /** Skills active from the start, besides `session.defaultSkills`. */
  skills?: readonly string[]
  /**
   * Whose own OAuth logins its calls to a server with an `oauth` key use: a
   * token's `name`, or `jwt:<sub>`. Absent for an unnamed token and without
   * tokens (the launch's principal: the local user's logins).
   */
  owner?: string
}

/** The principal of a verified JWT: bound to its issuer and subject. */
export function jwtPrincipal(subject: string, role: string, skills: readonly string[]): HttpPrincipal {
  return { key: `jwt:${subject}`, label: `jwt ${subject}`, role, skills, owner: `jwt:${subject}` }
}

/** The principal of a static token: bound to a keyed digest of its value (HttpToken.key), never to its place in `http.tokens`. */
export function tokenPrincipal(token: HttpToken): HttpPrincipal {
  return {
    key: token.key,
    label: token.label,
    ...(token.role !== undefined ? { role: token.role } : {}),
    skills: token.skills,
    ...(token.name !== undefined ? { owner: token.name } : {}),
  }
}

/** Without `http.tokens` (loopback only): every session is the launch's principal, as over stdio. */
export function launchPrincipal(role: string | undefined, skills: readonly string[] | undefined): HttpPrincipal {
  return { key: 'launch', label: 'no token', ...(role !== undefined ? { role } : {}), ...(skills ? { skills } : {}) }
}

/**
 * A scoped server (docs/team.md) runs a process per person: every static
 * token must name its person (a config error naming each unnamed entry).
 */
export function checkScopedTokens(loaded: LoadedConfig, tokens: readonly HttpToken[]): void {
  const scoped = [...loaded.config.servers].filter(([, c]) => !c.disabled && scopeOf(c) !== 'shared').map(([k]) => k)
  const unnamed = tokens.filter((t) => t.name === undefined)
  if (scoped.length === 0 || unnamed.length === 0) return
  throw new MycError(
    'config_invalid',
    `Invalid config ${loaded.file ?? 'config'}:\n${unnamed.map((t) => `  http.tokens[${t.index}]: names no person, and ${scoped.map((k) => `"${k}"`).join(', ')} ${scoped.length === 1 ? 'runs' : 'run'} one process per person (scope): give it a "name"`).join('\n')}`,
  )
}

/**
 * Checks at start that every token names a role the skills define and
 * skills that role reaches (a config error naming the entry and the roles
 * there are otherwise), and that the launch's principal exists when there
 * are no tokens (a usage error, as `myc serve --role` gives on stdio).
 * Resolves with the launch's role, chosen once as over stdio (undefined in
 * open mode, which has no roles: a token's role and skills mean nothing
 * there, and `notice` says so for each token that names them).
 */
export function checkPrincipals(
  mode: ModeShape,
  loaded: LoadedConfig,
  tokens: readonly HttpToken[],
  launch: HttpPrincipal,
  env: Record<string, string | undefined>,
  jwt = false,
  notice: (message: string) => void = () => {},
): string | undefined {
  if (mode.kind === 'open') {
    for (const token of tokens)
      if (token.role !== undefined || token.skills.length > 0)
        notice(
          `http.tokens[${token.index}] (${token.label}): ${token.role !== undefined ? `role "${token.role}"` : 'skills'} mean${token.role !== undefined ? 's' : ''} nothing in open mode (${loaded.file ?? 'the config'} has no skills): every token's sessions see every tool`,
        )
    return undefined
  }
  const { roles, policy } = mode.state
  const known = [...roles.keys()].join(', ') || 'none (no skill names a role)'
  const problems: string[] = []
  for (const token of tokens) {
    const choice = token.role === undefined ? undefined : chooseRole({ flag: token.role }, roles)
    if (!choice?.ok) {
      problems.push(
        token.role === undefined
          ? `http.tokens[${token.index}].role: missing; in policy mode each token names the role its sessions get; roles: ${known}`
          : `http.tokens[${token.index}].role: unknown role "${token.role}"; roles: ${known}`,
      )
      continue
    }
    token.skills.forEach((skill, i) => {
      const unreachable = unreachableSkill(policy, choice.role, skill)
      if (unreachable) problems.push(`http.tokens[${token.index}].skills[${i}]: ${unreachable}`)
    })
  }
  if (problems.length > 0)
    throw new MycError(
      'config_invalid',
      `Invalid config ${loaded.file ?? 'config'}:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    )
  // With credentials, each session's principal comes from its credential.
  if (tokens.length > 0 || jwt) return undefined
  const choice = chooseRole(
    { flag: launch.role, env: env.MYCELIUM_ROLE, configDefault: loaded.config.roles.default },
    roles,
  )
  if (!choice.ok) throw new MycError('usage', choice.error)
  for (const skill of launch.skills ?? []) {
    const unreachable = unreachableSkill(policy, choice.role, skill)
    if (unreachable) throw new MycError('usage', `--skills: ${unreachable}`)
  }
  return choice.role
}

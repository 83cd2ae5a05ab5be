import { createPublicKey, type KeyObject } from 'node:crypto'
import { MycError } from '../errors.js'
import { isRoleName, ROLE_NAME_RULE } from '../config/role-name.js'

/** `http.jwt`: tokens from an identity provider, verified as an OAuth 2.1 resource server does. */
export interface JwtConfig {
  issuer: string
  audience: string
  /** Where the provider publishes its keys (JWKS); or `publicKey`. */
  jwksUrl?: string | undefined
  /** A PEM public key (SPKI), for a provider with one fixed key. */
  publicKey?: string | undefined
  /** The claim holding the role (a dot path such as `mycelium.role` reaches into objects). */
  roleClaim: string
  /** The claim holding skills: a list, or a space-separated string such as OAuth's `scope`; `skill:` prefixes are dropped, other scopes ignored. */
  skillsClaim?: string | undefined
  /** Accepted signature algorithms (default: the asymmetric ones). */
  algorithms?: readonly string[] | undefined
  /** The URL of this MCP endpoint as clients know it (RFC 9728 `resource`); default: the audience. */
  resource?: string | undefined
}

/** Who a verified token makes the caller. */
export interface JwtIdentity {
  /** `iss` and `sub`: a session stays bound to it. */
  subject: string
  role: string
  skills: string[]
}

/** A refusal's `reason` is for the log; `description`, when present, may be told to the client (RFC 6750 error_description). */
export type JwtCheck = { ok: true; identity: JwtIdentity } | { ok: false; reason: string; description?: string }

/** Why a verified token without a usable `sub` is refused (sessions and rate limits are bound to `iss` and `sub`). */
export const NO_SUBJECT = 'the token has no sub claim (myc binds a caller to iss and sub)'

const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']

function claimAt(payload: Record<string, unknown>, dotted: string): unknown {
  if (Object.hasOwn(payload, dotted)) return payload[dotted]
  let node: unknown = payload
  for (const part of dotted.split('.'))
    node =
      node !== null && typeof node === 'object' && Object.hasOwn(node, part)
        ? (node as Record<string, unknown>)[part]
        : undefined
  return node
}

/** Skill names from a claim: a list or a space-separated string; `skill:` prefixes dropped, other scopes (`openid`) ignored when prefixes are in use. */
export function skillsFromClaim(value: unknown): string[] {
  const items =
    typeof value === 'string'
      ? value.split(/\s+/).filter(Boolean)
      : Array.isArray(value)
        ? value.filter((x): x is string => typeof x === 'string')
        : []
  const prefixed = items.some((s) => s.startsWith('skill:'))
  return [
    ...new Set(prefixed ? items.filter((s) => s.startsWith('skill:')).map((s) => s.slice('skill:'.length)) : items),
  ].filter(Boolean)
}

/** Verifies bearer JWTs: signature, `exp` (required), `nbf`, `iss`, `aud`; then reads the role and skills. */
export interface JwtVerifier {
  verify(token: string): Promise<JwtCheck>
  readonly config: JwtConfig
}

/**
 * Builds the verifier (jose, loaded now). A JWKS is fetched when first
 * needed and cached, refetched when a token names an unknown key.
 * A bad `publicKey` is a config error at start.
 */
export async function createJwtVerifier(config: JwtConfig, file = 'config'): Promise<JwtVerifier> {
  const { jose } = await (await import('./http-deps.js')).loadHttpDeps()
  let key: KeyObject | ReturnType<typeof jose.createRemoteJWKSet>
  if (config.jwksUrl)
    key = jose.createRemoteJWKSet(new URL(config.jwksUrl), { cooldownDuration: 30_000, timeoutDuration: 5_000 })
  else if (config.publicKey) {
    try {
      key = createPublicKey(config.publicKey)
    } catch (error) {
      throw new MycError(
        'config_invalid',
        `Invalid config ${file}:\n  http.jwt.publicKey: not a PEM public key (${(error as Error).message}); paste the provider's key as -----BEGIN PUBLIC KEY-----…`,
      )
    }
  } else
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.jwt: give jwksUrl (the provider's JWKS address) or publicKey (a PEM public key)`,
    )
  const algorithms = [...(config.algorithms ?? ASYMMETRIC)]
  return {
    config,
    async verify(token) {
      let payload: Record<string, unknown>
      try {
        const options = {
          issuer: config.issuer,
          audience: config.audience,
          algorithms,
          requiredClaims: ['exp'],
          clockTolerance: 30,
        }
        // Two overloads (a key, or a key-finding function for a JWKS): one call each.
        const verified =
          typeof key === 'function'
            ? await jose.jwtVerify(token, key, options)
            : await jose.jwtVerify(token, key, options)
        payload = verified.payload as Record<string, unknown>
      } catch (error) {
        const code = (error as { code?: string }).code ?? 'ERR_JWT_INVALID'
        return { ok: false, reason: code }
      }
      // Without a subject every such token would be one caller: refused, never pooled.
      if (typeof payload.sub !== 'string' || payload.sub.trim() === '')
        return { ok: false, reason: 'no sub claim', description: NO_SUBJECT }
      const role = claimAt(payload, config.roleClaim)
      if (typeof role !== 'string' || !isRoleName(role))
        return { ok: false, reason: `claim ${config.roleClaim} is not a role name (${ROLE_NAME_RULE})` }
      const skills = config.skillsClaim ? skillsFromClaim(claimAt(payload, config.skillsClaim)) : []
      return { ok: true, identity: { subject: `${String(payload.iss)}|${payload.sub}`, role, skills } }
    },
  }
}

/** RFC 9728 protected resource metadata for `GET /.well-known/oauth-protected-resource`. */
export function protectedResourceMetadata(config: JwtConfig, scopes: readonly string[]): Record<string, unknown> {
  return {
    resource: config.resource ?? config.audience,
    authorization_servers: [config.issuer],
    bearer_methods_supported: ['header'],
    ...(scopes.length ? { scopes_supported: [...scopes] } : {}),
    resource_name: 'Mycelium MCP',
  }
}

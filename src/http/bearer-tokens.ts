import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { MycError } from '../errors.js'

/** One `http.tokens` entry as the config gives it: the variable holding the secret, and who it makes you. */
export interface TokenConfig {
  env: string
  /** Absent in open mode, where a role means nothing (policy mode requires it: principals.ts). */
  role?: string | undefined
  skills?: readonly string[] | undefined
  name?: string | undefined
}

/** A token read at start: who it is, and a digest of its value (the value itself is not kept). */
export interface HttpToken {
  /** Its index in `http.tokens`. */
  index: number
  /** How logs name it: its `name`, else `tokens[i]`. Never the value. */
  label: string
  /** Its `name`, when the config gives one (whose OAuth logins it uses). */
  name?: string
  /** The role its sessions get; absent only in open mode. */
  role?: string
  skills: readonly string[]
  readonly digest: Buffer
  /**
   * What a session of this token is bound to: a keyed digest (HMAC-SHA256)
   * of its value, never its place in `http.tokens`, so reordering or
   * shortening the list on a replica moves no session to another token.
   */
  readonly key: string
}

/** The environment variable holding the key of credential digests, shared by replicas of one session store. */
export const SESSION_SECRET_ENV = 'MYC_SESSION_SECRET'
/** The shortest MYC_SESSION_SECRET accepted. */
const MIN_SESSION_SECRET_CHARS = 32

/** Turns a token's value into the key its sessions are bound to. */
export interface CredentialKeyer {
  /** True with MYC_SESSION_SECRET (every replica with it makes the same keys); false with a key of this process only. */
  readonly shared: boolean
  keyOf(value: string): string
}

/**
 * The keyer of this process: HMAC-SHA256 under MYC_SESSION_SECRET, or under
 * a random key made now when it is not set (sessions then belong to this
 * process alone). A secret shorter than MIN_SESSION_SECRET_CHARS is a
 * config error naming the variable (never its value).
 */
export function credentialKeyer(env: Record<string, string | undefined>, file = 'config'): CredentialKeyer {
  const secret = env[SESSION_SECRET_ENV]
  const shared = secret !== undefined && secret !== ''
  if (shared && secret.trim().length < MIN_SESSION_SECRET_CHARS) {
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  ${SESSION_SECRET_ENV}: ${secret.trim().length} characters; use at least ${MIN_SESSION_SECRET_CHARS} random ones (e.g. \`openssl rand -hex 32\`), the same on every replica`,
    )
  }
  const key = shared ? Buffer.from(secret, 'utf8') : randomBytes(32)
  return { shared, keyOf: (value) => `token:${createHmac('sha256', key).update(value, 'utf8').digest('base64url')}` }
}

/** What an Authorization header amounts to. */
export type TokenCheck = { ok: true; token: HttpToken } | { ok: false; reason: 'missing' | 'invalid' }

function digestOf(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest()
}

/**
 * Reads every token's value from its environment variable, once, at start. A
 * variable that is unset or empty is a config error naming the entry; two
 * entries with the same value are one too (which role would it be?).
 */
export function readTokens(
  tokens: readonly TokenConfig[],
  env: Record<string, string | undefined>,
  file = 'config',
  keyer: CredentialKeyer = credentialKeyer(env, file),
): HttpToken[] {
  const problems: string[] = []
  const out: HttpToken[] = []
  tokens.forEach((t, index) => {
    const value = env[t.env]
    if (value === undefined || value.trim() === '') {
      problems.push(
        `http.tokens[${index}].env: environment variable ${t.env} is ${value === undefined ? 'not set' : 'empty'}; set it to the token's value (a long random string, e.g. \`openssl rand -hex 32\`)`,
      )
      return
    }
    const digest = digestOf(value)
    const twin = out.find((o) => timingSafeEqual(o.digest, digest))
    if (twin) {
      problems.push(
        `http.tokens[${index}].env: ${t.env} holds the same token as http.tokens[${twin.index}]; give each entry its own token`,
      )
      return
    }
    out.push({
      index,
      label: t.name ?? `tokens[${index}]`,
      ...(t.name !== undefined ? { name: t.name } : {}),
      ...(t.role !== undefined ? { role: t.role } : {}),
      skills: [...(t.skills ?? [])],
      digest,
      key: keyer.keyOf(value),
    })
  })
  if (problems.length > 0)
    throw new MycError('config_invalid', `Invalid config ${file}:\n${problems.map((p) => `  ${p}`).join('\n')}`)
  return out
}

/** The bearer token of an Authorization header, or undefined when there is none. */
export function bearerOf(header: string | null | undefined): string | undefined {
  if (!header) return undefined
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(header)
  return m ? m[1] : undefined
}

/**
 * Which token an Authorization header carries. Every configured token is
 * compared (in constant time, over SHA-256 digests of equal length), so the
 * time taken says nothing about which one, or how much of one, matched.
 */
export function matchToken(tokens: readonly HttpToken[], authorization: string | null | undefined): TokenCheck {
  const presented = bearerOf(authorization)
  if (presented === undefined) return { ok: false, reason: authorization ? 'invalid' : 'missing' }
  const digest = digestOf(presented)
  let found: HttpToken | undefined
  for (const token of tokens) {
    if (timingSafeEqual(token.digest, digest) && !found) found = token
  }
  return found ? { ok: true, token: found } : { ok: false, reason: 'invalid' }
}

/**
 * `http.metricsToken`: read from its variable at start, kept as a digest. An
 * unset or empty variable is a config error naming the key; so is a value
 * that is also one of `http.tokens` (a scraper must not be an MCP client).
 */
export function readMetricsToken(
  config: { env: string },
  env: Record<string, string | undefined>,
  tokens: readonly HttpToken[],
  file = 'config',
): Buffer {
  const value = env[config.env]
  if (value === undefined || value.trim() === '') {
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.metricsToken.env: environment variable ${config.env} is ${value === undefined ? 'not set' : 'empty'}; set it to the token Prometheus presents (a long random string, e.g. \`openssl rand -hex 32\`)`,
    )
  }
  const digest = digestOf(value)
  const twin = tokens.find((t) => timingSafeEqual(t.digest, digest))
  if (twin)
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.metricsToken.env: ${config.env} holds the same token as http.tokens[${twin.index}]; give metrics a token of their own`,
    )
  return digest
}

/** Whether an Authorization header carries the token of this digest (compared in constant time). */
export function bearerMatches(digest: Buffer, authorization: string | null | undefined): boolean {
  const presented = bearerOf(authorization)
  return presented !== undefined && timingSafeEqual(digest, digestOf(presented))
}

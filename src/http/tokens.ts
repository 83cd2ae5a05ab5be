import { createHash, timingSafeEqual } from 'node:crypto'
import { MycError } from '../errors.js'

/** One `http.tokens` entry as the config gives it: the variable holding the secret, and who it makes you. */
export interface TokenConfig {
  env: string
  role: string
  skills?: readonly string[] | undefined
  name?: string | undefined
}

/** A token read at start: who it is, and a digest of its value (the value itself is not kept). */
export interface HttpToken {
  /** Its index in `http.tokens`. */
  index: number
  /** How logs name it: its `name`, else `tokens[i]`. Never the value. */
  label: string
  role: string
  skills: readonly string[]
  readonly digest: Buffer
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
export function readTokens(tokens: readonly TokenConfig[], env: Record<string, string | undefined>, file = 'config'): HttpToken[] {
  const problems: string[] = []
  const out: HttpToken[] = []
  tokens.forEach((t, index) => {
    const value = env[t.env]
    if (value === undefined || value.trim() === '') {
      problems.push(`http.tokens[${index}].env: environment variable ${t.env} is ${value === undefined ? 'not set' : 'empty'}; set it to the token's value (a long random string, e.g. \`openssl rand -hex 32\`)`)
      return
    }
    const digest = digestOf(value)
    const twin = out.find((o) => timingSafeEqual(o.digest, digest))
    if (twin) {
      problems.push(`http.tokens[${index}].env: ${t.env} holds the same token as http.tokens[${twin.index}]; give each entry its own token`)
      return
    }
    out.push({ index, label: t.name ?? `tokens[${index}]`, role: t.role, skills: [...(t.skills ?? [])], digest })
  })
  if (problems.length > 0) throw new MycError('CONFIG_INVALID', `Invalid config ${file}:\n${problems.map((p) => `  ${p}`).join('\n')}`)
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

import { createHash } from 'node:crypto'

/** Separators docs/configuration.md allows between a server key and a tool name on the wire. */
export const SEPARATORS = ['__', '_', '-', '.', ':'] as const

/** How wire names are made: the separator and the length cap. */
export interface WireNameOptions {
  separator: string
  maxLength: number
}

/** Characters MCP recommends for tool names; anything else is replaced on the wire. */
const SAFE = /[^A-Za-z0-9_.\-:]/g
const HASH_LENGTH = 8

/** Canonical registry key of a tool or prompt: `server:name`. */
export function canonicalId(server: string, name: string): string {
  return `${server}:${name}`
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, HASH_LENGTH)
}

/**
 * The name a client sees for `server:name`: `server<sep>name`, with characters
 * outside `[A-Za-z0-9_.-]` replaced (`:` kept only when it is the separator),
 * and at most `maxLength` characters. A name that had to be changed gets a
 * short hash of the canonical id as suffix, so the result is deterministic and
 * two different ids almost never meet.
 */
export function toWireName(server: string, name: string, options: WireNameOptions): string {
  const { separator, maxLength } = options
  const full = `${server}${separator}${name}`
  let safe = full.replace(SAFE, '_')
  if (separator !== ':')
    safe =
      safe.slice(0, server.length + separator.length) +
      safe.slice(server.length + separator.length).replaceAll(':', '_')
  if (safe === full && full.length <= maxLength) return full
  const suffix = `_${shortHash(canonicalId(server, name))}`
  return withSuffix(safe, suffix, maxLength)
}

/**
 * The wire name of a child's own tool or prompt name, for a server mounted
 * without prefix (`prefix: false`): the name as is when it is safe and fits,
 * else made safe and cut with a hash suffix as {@link toWireName} does.
 */
export function bareWireName(server: string, name: string, options: WireNameOptions): string {
  const safe = name.replace(SAFE, '_').replaceAll(':', '_')
  if (safe === name && name.length <= options.maxLength) return name
  return withSuffix(safe, `_${shortHash(canonicalId(server, name))}`, options.maxLength)
}

function withSuffix(base: string, suffix: string, maxLength: number): string {
  const room = Math.max(0, maxLength - suffix.length)
  return `${base.slice(0, room)}${suffix}`.slice(0, maxLength)
}

/** What a client may add in front of myc's wire names, and its cap (docs/configuration.md). */
interface ClientNameLimit {
  client: string
  /** Characters the client adds before the wire name, given the key the user gave myc. */
  prefixLength: (serverKeyInClient: string) => number
  maxTotal: number
  /** Characters this client rejects in a name. */
  rejects?: RegExp
}

/** Known client limits on the full tool name, used by `myc tools` and `myc doctor` to warn. */
const CLIENT_NAME_LIMITS: readonly ClientNameLimit[] = [
  // Claude Code: mcp__<key>__<tool>, and the Anthropic API caps tool names at 64.
  { client: 'Claude Code', prefixLength: (key) => `mcp__${key}__`.length, maxTotal: 64 },
  // Cursor: server name plus tool name at most 60.
  { client: 'Cursor', prefixLength: (key) => key.length, maxTotal: 60 },
  // GitHub Copilot CLI rejects '.' in tool names.
  { client: 'Copilot CLI', prefixLength: () => 0, maxTotal: Number.POSITIVE_INFINITY, rejects: /\./ },
]

/** Warnings for one wire name against the known client limits; empty when it passes all. */
export function clientNameWarnings(wireName: string, serverKeyInClient = 'mycelium'): string[] {
  const warnings: string[] = []
  for (const limit of CLIENT_NAME_LIMITS) {
    const total = limit.prefixLength(serverKeyInClient) + wireName.length
    if (total > limit.maxTotal)
      warnings.push(`${limit.client}: ${total} characters with its prefix, over its limit of ${limit.maxTotal}`)
    if (limit.rejects?.test(wireName))
      warnings.push(`${limit.client}: rejects the character ${limit.rejects.source.replace('\\', '')}`)
  }
  return warnings
}

import { RESERVED_SERVER_KEY, SERVER_KEY } from '../config/parse.js'
import type { MyceliumConfig } from '../config/schema.js'
import { usageError } from '../errors.js'

/** Words that say only "an MCP server" in a package's name: left out of the key (`mcp-server-time` → `time`). */
const FILLER = /^(mcp|server)$/

/**
 * The short config key for a registry name: its last part (`io.github.user/weather-mcp`
 * → `weather`), lower case, with only letters, digits and `-`, the words
 * that say only "MCP server" left out; at most 32 characters.
 */
export function keyFor(name: string): string {
  const last = name.slice(name.lastIndexOf('/') + 1).toLowerCase()
  const words = last
    .replace(/[^a-z0-9]+/g, '-')
    .split('-')
    .filter(Boolean)
  const kept = words.filter((w) => !FILLER.test(w))
  const base = (kept.length ? kept : words).join('-').slice(0, 32).replace(/-+$/, '')
  const key = base || 'server'
  return key === RESERVED_SERVER_KEY ? `${key}-server` : key
}

/**
 * Refuses a key the config could not take or already has: the key rules of
 * the config, the reserved key, the wire separator, and another server
 * already named so on the wire (its key or its prefix, in any case).
 * `label` says where the key came from (`--key "gh"`).
 */
export function checkKey(key: string, config: MyceliumConfig, file: string, label: string): void {
  if (!SERVER_KEY.test(key))
    throw usageError(`${label}: a key starts with a letter or digit and has only letters, digits, "_" and "-"`)
  if (key.toLowerCase() === RESERVED_SERVER_KEY) throw usageError(`${label} is reserved for myc's built-in tools`)
  const separator = config.namespace.separator
  if (key.includes(separator))
    throw usageError(`${label} contains the wire separator "${separator}" (namespace.separator)`)
  for (const [other, server] of config.servers) {
    const wire = server.prefix === false ? undefined : (server.prefix ?? other)
    if (other.toLowerCase() === key.toLowerCase() || wire?.toLowerCase() === key.toLowerCase())
      throw usageError(
        `${label} is taken: ${file} already has a server ${other === key ? `"${other}"` : `"${other}" named "${wire}" on the wire`}; choose another with --key KEY`,
      )
  }
}

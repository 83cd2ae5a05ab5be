import type { ClientCapabilities, ServerCapabilities } from '@modelcontextprotocol/client'

/**
 * Protocol facts every layer shares, at the ground so that none has to
 * reach up for them: the two eras, the first modern revision, extension
 * ids, and the one plain-object test.
 */

/** The protocol eras: `legacy` is 2025-era traffic (initialize, sessions), `modern` the 2026-07-28 revision on (no handshake, `_meta` envelope on every request). */
export type Era = 'legacy' | 'modern'

/** The first (and so far only) protocol revision of the modern era (the SDK keeps its own constant internal). */
export const MODERN_PROTOCOL_VERSION = '2026-07-28'

/** The tasks extension (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'

/** A JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Whether capabilities (a server's or a client's) declare the tasks extension. */
export function hasTasksExtension(caps: ServerCapabilities | ClientCapabilities | undefined): boolean {
  const extensions = (caps as { extensions?: unknown } | undefined)?.extensions
  return isObject(extensions) && extensions[TASKS_EXTENSION] !== undefined
}

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

/**
 * The JSON-RPC error codes myc answers or checks, by name: the JSON-RPC 2.0
 * ones, MCP's, and the implementation-defined server errors as myc and the
 * SDK use them. No other file writes a code as a number (`npm run lint`).
 */
export const RpcCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** JSON-RPC's implementation-defined server error: a refusal of the HTTP layer, a child that is not running or went away. */
  serverError: -32000,
  /** A request that got no answer in time (the SDK's RequestTimeout). */
  requestTimeout: -32001,
  /** Over HTTP, a session id the server does not know (as the SDK answers it); the same number as requestTimeout. */
  sessionNotFound: -32001,
  /** A resource that does not exist, as earlier SDKs answered it (received, never sent). */
  resourceNotFound: -32002,
  /** 2026-07-28: an HTTP header that disagrees with the body (SEP-2243). */
  headerMismatch: -32020,
  /** 2026-07-28: the request needs a client capability it did not declare. */
  missingRequiredClientCapability: -32021,
  /** 2026-07-28: a protocol revision the server does not speak. */
  unsupportedProtocolVersion: -32022,
  /** The client cancelled the request (the SDK's code for it). */
  requestCancelled: -32800,
} as const

/** A JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Whether capabilities (a server's or a client's) declare the tasks extension. */
export function hasTasksExtension(caps: ServerCapabilities | ClientCapabilities | undefined): boolean {
  const extensions = (caps as { extensions?: unknown } | undefined)?.extensions
  return isObject(extensions) && extensions[TASKS_EXTENSION] !== undefined
}

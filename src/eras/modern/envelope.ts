import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  type ClientCapabilities,
  type Implementation,
  type LoggingLevel,
} from '@modelcontextprotocol/client'
import type { Era } from '../../protocol/facts.js'
import type { WireError } from '../../protocol/request-relay.js'
import { RpcCode } from '../../protocol/facts.js'

/**
 * The protocol era myc speaks with one child (docs/protocol-eras.md):
 * `legacy` is the 2025 `initialize` handshake, `modern` the 2026-07-28
 * revision (no handshake; every request carries the `_meta` envelope).
 */
export type ChildEra = Era

/** The reserved `_meta` keys of the 2026 envelope, all under this prefix: a caller's own are replaced by what myc says. */
const RESERVED_PREFIX = 'io.modelcontextprotocol/'

/**
 * `_meta` keys that look like credentials: never forwarded to a child,
 * whatever the caller put there. A client's token travels in the HTTP
 * `Authorization` header, which myc never forwards; this catches one that
 * was put into `_meta` by mistake or on purpose. `progressToken` is not a
 * credential (the relay replaces it with its own).
 */
const CREDENTIAL_KEY =
  /(^|[^a-z])(auth|authorization|bearer|token|access[-_]?token|id[-_]?token|refresh[-_]?token|api[-_]?key|apikey|secret|password|passwd|credential|credentials|cookie|session[-_]?id)([^a-z]|$)/i

export function isCredentialKey(key: string): boolean {
  if (key === 'progressToken') return false
  // camelCase words become separate: accessToken → access-Token.
  return CREDENTIAL_KEY.test(key.replace(/([a-z0-9])([A-Z])/g, '$1-$2'))
}

/** What myc tells a modern child about itself on every request: the envelope's constant part. */
export interface EnvelopeMaterial {
  protocolVersion: string
  clientInfo: Implementation
  /** What myc offers that child (the capabilities it connected with). */
  clientCapabilities: ClientCapabilities
}

/**
 * The `_meta` a modern child gets with a forwarded request: the caller's
 * own keys (trace context, vendor keys) without its envelope keys and
 * without anything credential-like, then myc's envelope (its version,
 * client info, the log level when known, and the client capabilities of
 * the caller when known: what the caller can be asked, through myc, is what
 * it declared; else what myc offers the child).
 */
export function childMeta(
  callerMeta: unknown,
  material: EnvelopeMaterial,
  logLevel: LoggingLevel | undefined,
  callerCapabilities?: ClientCapabilities,
): Record<string, unknown> {
  const meta: Record<string, unknown> = {}
  if (callerMeta && typeof callerMeta === 'object' && !Array.isArray(callerMeta)) {
    for (const [key, value] of Object.entries(callerMeta)) {
      if (key.startsWith(RESERVED_PREFIX) || isCredentialKey(key)) continue
      meta[key] = value
    }
  }
  meta[PROTOCOL_VERSION_META_KEY] = material.protocolVersion
  meta[CLIENT_INFO_META_KEY] = material.clientInfo
  meta[CLIENT_CAPABILITIES_META_KEY] = callerCapabilities ?? material.clientCapabilities
  if (logLevel !== undefined) meta[LOG_LEVEL_META_KEY] = logLevel
  return meta
}

/** JSON-RPC code of the answer to a caller whose call a modern child answered with `input_required` when nobody can be asked. */
export const INPUT_REQUIRED_UNBRIDGED = RpcCode.internalError

/**
 * The error a caller gets when a modern child answers its call with
 * `input_required` and there is nobody to ask: a call that does not come
 * from an MCP client connection (the agent of `myc run` and `myc chat`), or
 * a request the bridge does not handle (completion/complete, which the
 * 2026 revision does not let a server answer so). A 2025 client's
 * tools/call, prompts/get and resources/read are bridged instead
 * (input-bridge.ts). A clear answer at once, not a call that never ends.
 */
export function inputRequiredError(server: string, method: string, result: Record<string, unknown>): WireError {
  const requests =
    result.inputRequests && typeof result.inputRequests === 'object'
      ? Object.values(result.inputRequests as Record<string, unknown>)
      : []
  const asked = [
    ...new Set(
      requests
        .map((r) => (r && typeof r === 'object' ? (r as { method?: unknown }).method : undefined))
        .filter((m): m is string => typeof m === 'string'),
    ),
  ]
  const what = asked.length > 0 ? asked.join(', ') : 'input'
  return {
    code: INPUT_REQUIRED_UNBRIDGED,
    message: `Server "${server}" (MCP 2026-07-28) asked for input (${what}) to answer ${method}, and there is no MCP client to ask: the call does not come from a client connected to mycelium.`,
    data: { server, method, resultType: 'input_required', inputRequests: asked },
  }
}

/** Whether a child's result is a 2026 `input_required` result. */
export function isInputRequired(result: Record<string, unknown>): boolean {
  return result.resultType === 'input_required'
}

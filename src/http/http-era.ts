import { classifyInboundRequest } from '@modelcontextprotocol/server'
import type { Era } from '../protocol/facts.js'

export { MODERN_PROTOCOL_VERSION, type Era } from '../protocol/facts.js'

/** A POST body as the face read it: parsed JSON, or nothing usable (absent, too large, too deep, not JSON). */
export type ReadBody = { parsed: true; value: unknown } | { parsed: false }

/**
 * Which route serves a request, decided by the SDK's own classifier
 * (`classifyInboundRequest`, the step behind `createMcpHandler` and
 * `isLegacyRequest`), body first: a request whose `params._meta` carries the
 * per-request envelope claim (`io.modelcontextprotocol/protocolVersion`) is
 * modern; so is one whose `MCP-Protocol-Version` header names a modern
 * revision. Everything else is legacy: GET and DELETE, `initialize`,
 * claim-less requests and notifications, posted responses, batches.
 *
 * Where the classifier refuses a request, the refusal goes to the route that
 * owns it: envelope and header problems (a malformed envelope, a header that
 * disagrees with the body) are the modern route's to answer with the 2026
 * error codes; a body that is not JSON-RPC at all, with no modern claim, is
 * refused by the session route exactly as before this route existed. A body
 * that could not be read or parsed goes to the session route too (it owes
 * the 413, 400 or -32700 answer).
 */
export function eraOf(request: { method: string; headers: Headers }, body: ReadBody): Era {
  if (request.method.toUpperCase() !== 'POST' || !body.parsed) return 'legacy'
  const header = (name: string) => request.headers.get(name) ?? undefined
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: header('mcp-protocol-version'),
    mcpMethodHeader: header('mcp-method'),
    mcpNameHeader: header('mcp-name'),
    body: body.value,
  })
  if (outcome.kind !== 'reject') return outcome.kind
  return outcome.rung === 'jsonrpc-shape' && outcome.cell !== 'batch-with-modern-element' ? 'legacy' : 'modern'
}

import type { ClientCapabilities } from '@modelcontextprotocol/client'

/**
 * The capabilities myc offers its children: exactly what the connected
 * client declared for the requests myc forwards to it (roots, sampling,
 * elicitation with its form/url modes, tasks), and nothing when no client is
 * there (`myc status`, `myc tools`). A child then offers only what can work:
 * server-everything hides its sampling and elicitation tools from a client
 * without them, through myc as directly.
 *
 * Roots always carry `listChanged`: myc itself tells the children when the
 * roots change (the client's own notice, or the moment it finished
 * initializing, for a child that asked before the client was there).
 */
export function capabilitiesForChildren(client: ClientCapabilities | undefined): ClientCapabilities {
  const offered: ClientCapabilities = {}
  if (!client) return offered
  if (client.roots) offered.roots = { listChanged: true }
  if (client.sampling) offered.sampling = structuredClone(client.sampling)
  if (client.elicitation) offered.elicitation = structuredClone(client.elicitation)
  if (client.tasks) offered.tasks = structuredClone(client.tasks)
  return offered
}

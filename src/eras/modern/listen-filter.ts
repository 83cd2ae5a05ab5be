import {
  SUBSCRIPTION_ID_META_KEY,
  type JSONRPCMessage,
  type ServerCapabilities,
  type SubscriptionFilter,
} from '@modelcontextprotocol/client'

/**
 * The pure parts of the `subscriptions/listen` (MCP 2026-07-28) myc keeps
 * open on each modern child (child-listen.ts): what it asks for, and which
 * listen a notification came on.
 */

/**
 * The filter of a modern child's listen: the list changes the child says it
 * announces, and the resources clients subscribed to when it serves
 * resource subscriptions (`resources.subscribe`), sorted and without
 * repeats. `{}` when there is nothing to listen for.
 */
export function listenFilter(caps: ServerCapabilities | undefined, uris: Iterable<string>): SubscriptionFilter {
  const filter: SubscriptionFilter = {}
  if (caps?.tools?.listChanged) filter.toolsListChanged = true
  if (caps?.prompts?.listChanged) filter.promptsListChanged = true
  if (caps?.resources?.listChanged) filter.resourcesListChanged = true
  if (caps?.resources?.subscribe) {
    const wanted = [...new Set(uris)].sort()
    if (wanted.length > 0) filter.resourceSubscriptions = wanted
  }
  return filter
}

/** Whether a filter asks for nothing (no listen is needed). */
export function isEmptyFilter(filter: SubscriptionFilter): boolean {
  return (
    !filter.toolsListChanged &&
    !filter.promptsListChanged &&
    !filter.resourcesListChanged &&
    (filter.resourceSubscriptions?.length ?? 0) === 0
  )
}

/** Whether two filters ask for the same (the resources compared as sets). */
export function sameFilter(a: SubscriptionFilter, b: SubscriptionFilter): boolean {
  if (Boolean(a.toolsListChanged) !== Boolean(b.toolsListChanged)) return false
  if (Boolean(a.promptsListChanged) !== Boolean(b.promptsListChanged)) return false
  if (Boolean(a.resourcesListChanged) !== Boolean(b.resourcesListChanged)) return false
  const x = new Set(a.resourceSubscriptions ?? [])
  const y = new Set(b.resourceSubscriptions ?? [])
  return x.size === y.size && [...x].every((uri) => y.has(uri))
}

/** The listen a notification was delivered on (`_meta['io.modelcontextprotocol/subscriptionId']`), if it says. */
export function subscriptionIdOf(message: JSONRPCMessage): string | undefined {
  if (!('method' in message) || 'id' in message) return undefined
  const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta
  const id = meta?.[SUBSCRIPTION_ID_META_KEY]
  return typeof id === 'string' ? id : undefined
}

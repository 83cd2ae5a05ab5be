import {
  SUBSCRIPTION_ID_META_KEY,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type ServerCapabilities,
  type SubscriptionFilter,
} from '@modelcontextprotocol/client'

/**
 * The pure parts of the `subscriptions/listen` (MCP 2026-07-28) myc keeps
 * open on each modern child (child-listen.ts): what it asks for, and which
 * client connections want which resources of which child.
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

/** A child's notification without the id of myc's listen it came on (which means nothing to myc's own clients). */
export function withoutSubscriptionId(notification: JSONRPCNotification): JSONRPCNotification {
  const params = notification.params as Record<string, unknown> | undefined
  const meta = params?._meta as Record<string, unknown> | undefined
  if (!meta || !(SUBSCRIPTION_ID_META_KEY in meta)) return notification
  const { [SUBSCRIPTION_ID_META_KEY]: _id, ...rest } = meta
  const { _meta: _old, ...others } = params!
  return { ...notification, params: Object.keys(rest).length > 0 ? { ...others, _meta: rest } : others }
}

/**
 * Which holders (client connections) subscribed to which resources of which
 * server: a server's listen asks for the union of its holders' resources.
 */
export class ResourceSubscriptions<Holder> {
  private readonly byServer = new Map<string, Map<string, Set<Holder>>>()

  /** `holder` subscribed to `uri` of `server`; true when that server's set of resources grew. */
  add(server: string, uri: string, holder: Holder): boolean {
    let uris = this.byServer.get(server)
    if (!uris) this.byServer.set(server, (uris = new Map()))
    const holders = uris.get(uri)
    if (holders) {
      holders.add(holder)
      return false
    }
    uris.set(uri, new Set([holder]))
    return true
  }

  /** Whether `holder` is subscribed to `uri` of `server`. */
  has(server: string, uri: string, holder: Holder): boolean {
    return this.byServer.get(server)?.get(uri)?.has(holder) ?? false
  }

  /** `holder` unsubscribed from `uri`; the server whose set of resources shrank, if one did. */
  remove(holder: Holder, uri: string): string | undefined {
    for (const [server, uris] of this.byServer) {
      const holders = uris.get(uri)
      if (!holders?.delete(holder) || holders.size > 0) continue
      uris.delete(uri)
      if (uris.size === 0) this.byServer.delete(server)
      return server
    }
    return undefined
  }

  /** `holder` is gone: every subscription of it is dropped; the servers whose sets of resources shrank. */
  removeHolder(holder: Holder): string[] {
    const shrank: string[] = []
    for (const [server, uris] of this.byServer) {
      for (const [uri, holders] of uris) {
        if (!holders.delete(holder) || holders.size > 0) continue
        uris.delete(uri)
        if (!shrank.includes(server)) shrank.push(server)
      }
      if (uris.size === 0) this.byServer.delete(server)
    }
    return shrank
  }

  /** The resources of `server` some holder subscribed to, sorted. */
  uris(server: string): string[] {
    return [...(this.byServer.get(server)?.keys() ?? [])].sort()
  }
}

import { ProtocolError, type ServerEvent } from '@modelcontextprotocol/server'
import {
  SUBSCRIPTION_ID_META_KEY,
  type JSONRPCNotification,
  type RequestId,
  type SubscriptionFilter,
} from '@modelcontextprotocol/client'
import { SeenLists, type ListKindName } from '../../principal/seen-lists.js'
import type { PrincipalView } from '../../principal/view.js'
import type { ConnectionHandle, Runtime } from '../../runtime/runtime.js'
import { childForUri, visibleList } from '../../server/principal-requests.js'
import { watchResource } from '../../server/resource-watch.js'
import { RpcCode, isObject } from '../../protocol/facts.js'

/**
 * One `subscriptions/listen` stream of a 2026-07-28 client (HTTP or stdio),
 * as the runtime sees it: a connection for the stream's life, which hears
 * of every catalogue change and child notification, and tells its client
 * only what its principal can see, and only what the listen's filter asked
 * for. The acknowledgement, the subscription id and the stream itself are
 * the face's (stateless-route.ts, stdio-eras.ts); this is what goes on it.
 */

/** A change notification, before the face puts it on the stream (and stamps the subscription id). */
export interface ListenNotification {
  method:
    | 'notifications/tools/list_changed'
    | 'notifications/prompts/list_changed'
    | 'notifications/resources/list_changed'
    | 'notifications/resources/updated'
  params?: Record<string, unknown>
}

const LIST_CHANGED: ReadonlyArray<{
  kind: ListKindName
  field: 'toolsListChanged' | 'promptsListChanged' | 'resourcesListChanged'
  method: ListenNotification['method']
}> = [
  { kind: 'tools', field: 'toolsListChanged', method: 'notifications/tools/list_changed' },
  { kind: 'prompts', field: 'promptsListChanged', method: 'notifications/prompts/list_changed' },
  { kind: 'resources', field: 'resourcesListChanged', method: 'notifications/resources/list_changed' },
]

/**
 * A listen's filter as the principal may have it honoured: the resources
 * it cannot see (a server its view does not reach, or no server at all)
 * left out, so the acknowledgement says nothing about them; every other
 * field as asked. Undefined when `filter` is not a filter's shape (the SDK
 * answers that -32602 itself).
 */
export function visibleFilter(filter: unknown, uriVisible: (uri: string) => boolean): SubscriptionFilter | undefined {
  if (!isObject(filter)) return undefined
  const uris = (filter as { resourceSubscriptions?: unknown }).resourceSubscriptions
  if (uris === undefined) return filter as SubscriptionFilter
  if (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string')) return undefined
  const { resourceSubscriptions: _asked, ...rest } = filter as SubscriptionFilter
  const kept = [...new Set(uris as string[])].filter(uriVisible)
  return kept.length > 0 ? { ...rest, resourceSubscriptions: kept } : rest
}

/** A notification for a listen stream, with the stream's subscription id in `_meta` (the stdio face stamps its own). */
export function stamped(notification: ListenNotification, subscriptionId: RequestId): JSONRPCNotification {
  const params = notification.params ?? {}
  const meta = isObject(params._meta) ? params._meta : {}
  return {
    jsonrpc: '2.0',
    method: notification.method,
    params: { ...params, _meta: { ...meta, [SUBSCRIPTION_ID_META_KEY]: subscriptionId } },
  }
}

/** A notification as the SDK's listen router takes it (ServerEventBus): it stamps the subscription id and keeps to the honoured filter. */
export function serverEventOf(notification: ListenNotification): ServerEvent {
  const params = notification.params
  switch (notification.method) {
    case 'notifications/tools/list_changed':
      return { kind: 'tools_list_changed', ...(params ? { params } : {}) }
    case 'notifications/prompts/list_changed':
      return { kind: 'prompts_list_changed', ...(params ? { params } : {}) }
    case 'notifications/resources/list_changed':
      return { kind: 'resources_list_changed', ...(params ? { params } : {}) }
    case 'notifications/resources/updated':
      return { kind: 'resource_updated', uri: String(params?.uri), ...(params ? { params } : {}) }
  }
}

export interface ListenStreamOptions {
  runtime: Runtime
  view: PrincipalView
  /** What the stream delivers: the filter honoured (visibleFilter, narrowed by what myc advertises). */
  filter: SubscriptionFilter
  /** The credential's person (a token's `name`, `jwt:<sub>`); absent, whoever runs myc (stdio, a loopback serve without tokens). */
  owner?: string
  /** Puts a notification on the stream. */
  deliver(notification: ListenNotification): void
}

/**
 * A listen stream as a runtime connection: registered by open(), gone at
 * close(). Its resource subscriptions go through the same machinery as a
 * 2025 connection's resources/subscribe (resource-watch.ts), as its
 * credential's person (`who`): a scoped server's are its person's
 * instance's, whose updates reach only that person's connections. What it
 * last told of each list is kept per stream (SeenLists), so each stream
 * hears of a change once, and only of its principal's own lists.
 */
export class ListenStream implements ConnectionHandle {
  /** A listen carries no requests: a child's question never comes here. */
  readonly clientHasRoots = false
  readonly clientCapabilities = undefined
  /** Its credential's person, for the instances of scoped servers (a 2026 request has no session). */
  readonly who: { readonly owner?: string }
  private readonly seen: SeenLists
  private readonly uris: ReadonlySet<string>
  private unsubscribeView: (() => void) | undefined
  private state: 'new' | 'open' | 'closed' = 'new'

  constructor(private readonly options: ListenStreamOptions) {
    this.seen = new SeenLists((kind) => visibleList(options.runtime, options.view, kind))
    this.uris = new Set(options.filter.resourceSubscriptions ?? [])
    this.who = options.owner !== undefined ? { owner: options.owner } : {}
  }

  /** Joins the runtime: from now on the stream hears of changes; the children serving its resources are asked for their updates (best effort). */
  open(): void {
    if (this.state !== 'new') return
    this.state = 'open'
    const { runtime, view } = this.options
    this.seen.rememberAll()
    runtime.addConnection(this)
    // An escalation or a reload changes what exists for this principal.
    this.unsubscribeView = view.onChange(() => this.catalogueChanged(new Set(['tools', 'prompts', 'resources'])))
    for (const uri of this.uris) {
      const child = childForUri(runtime, view, uri)
      if (!child) continue
      // The stream was acknowledged with this resource in it already: an operator must hear that its updates will not come.
      watchResource(runtime, this, child, uri).catch((error: unknown) =>
        runtime.logger.warn(
          `subscriptions/listen: could not ask "${child.key}" for updates of ${uri} (the stream stays open without them): ${error instanceof Error ? error.message : String(error)}`,
        ),
      )
    }
  }

  /** Leaves the runtime: the children are no longer asked for this stream's resources (unless another connection holds them). */
  close(): void {
    if (this.state === 'closed') return
    const wasOpen = this.state === 'open'
    this.state = 'closed'
    if (!wasOpen) return
    this.unsubscribeView?.()
    this.options.runtime.removeConnection(this)
  }

  // ConnectionHandle

  catalogueChanged(kinds: ReadonlySet<ListKindName>): void {
    if (this.state !== 'open') return
    for (const { kind, field, method } of LIST_CHANGED) {
      if (this.options.filter[field] && kinds.has(kind) && this.seen.changed(kind)) this.options.deliver({ method })
    }
  }

  childNotification(server: string, notification: JSONRPCNotification): void {
    if (this.state !== 'open' || notification.method !== 'notifications/resources/updated') return
    const params = (notification.params ?? {}) as Record<string, unknown>
    if (typeof params.uri !== 'string' || !this.uris.has(params.uri) || !this.options.view.serverVisible(server)) return
    this.options.deliver({ method: 'notifications/resources/updated', params })
  }

  /** Never: a child's request goes to a client that can answer it, and a listen stream is not one. */
  reaches(): boolean {
    return false
  }

  canAnswer(): boolean {
    return false
  }

  forwardRequest(server: string, method: string): Promise<Record<string, unknown>> {
    return Promise.reject(
      new ProtocolError(
        RpcCode.methodNotFound,
        `A subscriptions/listen stream cannot be asked ${method} (asked by server "${server}")`,
      ),
    )
  }
}

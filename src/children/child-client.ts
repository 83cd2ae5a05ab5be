import {
  SUBSCRIPTION_ID_META_KEY,
  type Client,
  type ClientCapabilities,
  type JSONRPCNotification,
} from '@modelcontextprotocol/client'
import { passthrough } from '../protocol/passthrough.js'
import { LIST_CHANGED, type ListKind } from './child-lists.js'

/** What a child's SDK client reports to its connection. */
export interface ClientHandlers {
  /** The child announced that some of its lists changed. */
  refresh(kinds: readonly ListKind[]): void
  /** Notifications other than list changes (logging, resource updates…). */
  notification(notification: JSONRPCNotification): void
  /** A request from the child to the client (elicitation, sampling, roots, tasks). */
  request(
    method: string,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>>
}

/**
 * Wires the SDK client connected to a child: its list changes, its other
 * notifications, and the requests it may send the client, only those it
 * was offered (anything else it asks gets the SDK's "method not found").
 */
export function wireClient(client: Client, offered: ClientCapabilities, on: ClientHandlers): void {
  for (const [method, kinds] of Object.entries(LIST_CHANGED)) {
    client.setNotificationHandler(method as 'notifications/tools/list_changed', () => on.refresh(kinds))
  }
  client.fallbackNotificationHandler = async (notification) => {
    on.notification(withoutSubscriptionId(notification as JSONRPCNotification))
  }
  const forwarded = [
    ...(offered.elicitation ? (['elicitation/create'] as const) : []),
    ...(offered.sampling ? (['sampling/createMessage'] as const) : []),
    ...(offered.roots ? (['roots/list'] as const) : []),
  ]
  for (const method of forwarded) {
    client.setRequestHandler(method, async (request, ctx) => {
      const result = await on.request(method, request.params as Record<string, unknown> | undefined, ctx.mcpReq.signal)
      return result as never
    })
  }
  // A task the child created at the client (task-augmented sampling or elicitation) is polled through myc.
  // The SDK 2.x has no runtime for tasks, so these take pass-through params.
  if (offered.tasks) {
    for (const method of ['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']) {
      const register = client.setRequestHandler.bind(client) as (
        m: string,
        schemas: { params: typeof passthrough },
        handler: (params: Record<string, unknown>, ctx: { mcpReq: { signal: AbortSignal } }) => Promise<unknown>,
      ) => void
      register(method, { params: passthrough }, (params, ctx) => on.request(method, params, ctx.mcpReq.signal))
    }
  }
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

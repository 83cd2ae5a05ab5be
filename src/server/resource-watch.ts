import type { ChildConnection } from '../children/child.js'
import type { ConnectionHandle, Runtime } from '../runtime/runtime.js'

/**
 * Asking a child for a resource's updates on behalf of one of myc's
 * clients (a 2025 connection's resources/subscribe, a 2026 client's
 * `subscriptions/listen`): one way for every face. A 2026 child has no
 * resources/subscribe: its own listen, which myc keeps open, names the
 * resources every holder wants (Runtime.subscribeResource). A 2025 child
 * that serves resource subscriptions gets resources/subscribe forwarded.
 */

/** `holder` wants updates of `uri`, which `child` serves. Rejects when the child could not be asked. */
export async function watchResource(
  runtime: Runtime,
  holder: ConnectionHandle,
  child: ChildConnection,
  uri: string,
): Promise<void> {
  if (child.era === 'modern') await runtime.subscribeResource(holder, child, uri)
  else if (child.capabilities?.resources?.subscribe) await child.request('resources/subscribe', { uri })
}

/**
 * `holder` no longer wants updates of `uri` (`child` serves it, if it is
 * still known): a 2026 child's listen stops naming it when no other holder
 * wants it; a 2025 child is sent resources/unsubscribe when no other
 * connection is still subscribed. Never rejects.
 */
export async function unwatchResource(
  runtime: Runtime,
  holder: ConnectionHandle,
  child: ChildConnection | undefined,
  uri: string,
): Promise<void> {
  await runtime.unsubscribeResource(holder, uri)
  if (child?.era === 'modern' || !child?.capabilities?.resources?.subscribe) return
  if ([...runtime.connections].some((c) => c !== holder && c.isSubscribed(uri))) return
  await child.request('resources/unsubscribe', { uri }).catch(() => {})
}

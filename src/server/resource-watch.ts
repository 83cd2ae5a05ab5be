import type { ChildConnection } from '../children/child.js'
import type { ConnectionHandle, Runtime } from '../runtime/runtime.js'
import { scopeOf } from '../config/schema.js'
import { childForCaller } from '../runtime/caller-child.js'

/**
 * Asking a child for a resource's updates on behalf of one of myc's
 * clients (a 2025 connection's resources/subscribe, a 2026 client's
 * `subscriptions/listen`): one way for every face, as the child's session
 * says (ChildSession.resourceUpdates). A 2026 child has no
 * resources/subscribe: its own listen, which myc keeps open, names the
 * resources every holder wants (Runtime.subscribeResource). A 2025 child
 * that serves resource subscriptions gets resources/subscribe forwarded.
 */

/**
 * The connection a holder's subscription goes to: a scoped server's instance
 * of the holder's person or session (docs/team.md), else `child` itself.
 * Rejects with the reason when the holder has no instance now, or is no
 * client connection of its own (a 2026 listen stream: not yet).
 */
async function holderChild(
  runtime: Runtime,
  holder: ConnectionHandle,
  child: ChildConnection,
): Promise<ChildConnection> {
  if (scopeOf(child.config) === 'shared') return child
  if (!holder.who)
    throw new Error(`resource subscriptions of "${child.key}", one process per person or session, need a 2025 session`)
  const reached = await childForCaller(runtime, child.key, holder.who)
  if ('child' in reached) return reached.child
  const text = (reached.outcome as { result?: { content?: Array<{ text?: string }> } }).result?.content?.[0]?.text
  throw new Error(text ?? `Server "${child.key}" is not running for you`)
}

/** `holder` wants updates of `uri`, which `child` serves. Rejects when the child could not be asked. */
export async function watchResource(
  runtime: Runtime,
  holder: ConnectionHandle,
  shared: ChildConnection,
  uri: string,
): Promise<void> {
  const child = await holderChild(runtime, holder, shared)
  if (child !== shared && child.resourceUpdates === 'listen')
    throw new Error(`resource subscriptions of "${child.key}" (2026-07-28, one process per person or session): not yet`)
  if (child.resourceUpdates === 'listen') await runtime.subscribeResource(holder, child, uri)
  else if (child.resourceUpdates === 'subscribe') await child.request('resources/subscribe', { uri })
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
  if (child && scopeOf(child.config) !== 'shared')
    child = await holderChild(runtime, holder, child).catch(() => undefined)
  if (child?.resourceUpdates !== 'subscribe') return
  if ([...runtime.connections].some((c) => c !== holder && c.isSubscribed(uri))) return
  await child.request('resources/unsubscribe', { uri }).catch(() => {})
}

/**
 * Records `uri` in a connection's `subscriptions` before `watch` asks the
 * child: the child may send its first update right after its answer, and
 * when one read holds both, the update is handled before the answer's await
 * returns (it was dropped as unsubscribed). A refused subscription is taken
 * back.
 */
export async function subscribeFirst(
  subscriptions: Set<string>,
  uri: string,
  watch: () => Promise<void>,
): Promise<void> {
  const had = subscriptions.has(uri)
  subscriptions.add(uri)
  await watch().catch((error: unknown) => {
    if (!had) subscriptions.delete(uri)
    throw error
  })
}

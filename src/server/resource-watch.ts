import type { ChildConnection } from '../children/child.js'
import type { ConnectionHandle, Runtime } from '../runtime/runtime.js'
import { scopeOf } from '../config/server-schema.js'
import { childForCaller, isPersonal } from '../runtime/caller-child.js'

/**
 * Asking a child for a resource's updates on behalf of one of myc's
 * clients (a 2025 connection's resources/subscribe, a 2026 client's
 * `subscriptions/listen`): one way for every face and every child. The
 * subscription goes to the connection that serves the holder (a scoped
 * server's instance of its person or session, docs/team.md), is recorded
 * in its record (Runtime.subscribeResource, children/child-record.ts: the
 * slot's, which the person's next instance takes too), and each start of
 * that child asks for it again in its own era (ChildSession:
 * resources/subscribe, or the child's listen).
 */

/**
 * The connection a holder's subscription goes to: a scoped server's instance
 * of the holder's person or session (docs/team.md; a 2026 listen stream has
 * no session: its person's), a named person's own connection to a server
 * logged in per person (docs/auth.md), else `child` itself. Rejects with the
 * reason when the holder has no instance or login now, or is no client
 * connection of its own.
 */
async function holderChild(
  runtime: Runtime,
  holder: ConnectionHandle,
  child: ChildConnection,
): Promise<ChildConnection> {
  const ownLogin = isPersonal(child.config) && holder.who?.owner !== undefined
  if (scopeOf(child.config) === 'shared' && !ownLogin) return child
  if (!holder.who)
    throw new Error(
      `resource subscriptions of "${child.key}", one process per person or session, need a client of its own`,
    )
  const reached = await childForCaller(runtime, child.key, holder.who)
  if ('child' in reached) return reached.child
  const text = (reached.outcome as { result?: { content?: Array<{ text?: string }> } }).result?.content?.[0]?.text
  throw new Error(text ?? `Server "${child.key}" is not running for you`)
}

/** `holder` wants updates of `uri`, which `shared` serves. Rejects when the child could not be asked. */
export async function watchResource(
  runtime: Runtime,
  holder: ConnectionHandle,
  shared: ChildConnection,
  uri: string,
): Promise<void> {
  await runtime.subscribeResource(holder, await holderChild(runtime, holder, shared), uri)
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

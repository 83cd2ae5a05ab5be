import type { JSONRPCNotification } from '@modelcontextprotocol/client'
import type { ChildConnection, ChildLists, ListKind } from '../children/child.js'
import type { InstanceInfo } from '../children/instances.js'
import { scopeOf } from '../config/server-schema.js'
import { LOCAL_PRINCIPAL } from '../oauth/token-store.js'
import type { ConnectionHandle } from './connection.js'

/**
 * Who hears what a child says outside the calls it serves (its log
 * messages, resource updates, list changes, its own requests), for the
 * servers of docs/team.md: a shared server's go to every connection (which
 * keeps what concerns it); an instance's only to its person's connections
 * (`scope: "principal"`) or its session's (`"session"`); a scoped server's
 * own process is the local person's instance, and speaks only to the
 * connections of whoever runs myc (stdio, a loopback serve without tokens).
 * A person's own connection to a server logged in as them
 * (children/personal-connections.ts, `personalOwner`) speaks only to that
 * person's connections. Undefined: everyone.
 */
export function audienceOf(
  child: ChildConnection,
  instance: InstanceInfo | undefined,
  personalOwner?: string,
): ((connection: ConnectionHandle) => boolean) | undefined {
  if (personalOwner !== undefined)
    return (c) => c.who !== undefined && (c.who.owner ?? LOCAL_PRINCIPAL) === personalOwner
  if (instance?.session !== undefined) return (c) => c.who?.sessionId === instance.session
  if (instance) return (c) => c.who !== undefined && (c.who.owner ?? LOCAL_PRINCIPAL) === instance.person
  const scope = scopeOf(child.config)
  if (scope === 'shared') return undefined
  if (scope === 'principal') return (c) => c.who !== undefined && c.who.owner === undefined
  return (c) => c.who !== undefined && c.who.owner === undefined && c.who.sessionId === undefined
}

const KINDS: ReadonlyArray<[ListKind, 'tools' | 'prompts' | 'resources']> = [
  ['tools', 'tools'],
  ['prompts', 'prompts'],
  ['resources', 'resources'],
  ['resourceTemplates', 'resources'],
  ['skills', 'resources'],
]

/**
 * An instance's lists as last read: everyone's lists come from the scoped
 * server's own process (the catalogue), so an instance's list change is
 * no one's but its person's. Told to them as a list_changed only when a
 * list did change from what that instance had (not at its first start, nor
 * when it stops, when its lists are empty).
 */
export class InstanceLists {
  private readonly last = new WeakMap<ChildConnection, ChildLists>()

  /** The list_changed notifications owed to the instance's audience for a change of `kinds`. */
  changed(child: ChildConnection, kinds: readonly ListKind[]): JSONRPCNotification[] {
    if (child.state !== 'RUNNING') return []
    const before = this.last.get(child)
    this.last.set(child, child.lists)
    if (!before) return []
    const methods = new Set<string>()
    for (const [kind, told] of KINDS)
      if (kinds.includes(kind) && JSON.stringify(before[kind]) !== JSON.stringify(child.lists[kind]))
        methods.add(`notifications/${told}/list_changed`)
    return [...methods].map((method) => ({ jsonrpc: '2.0', method }))
  }
}

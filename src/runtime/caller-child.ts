import type { ChildConnection } from '../children/child.js'
import type { ChildRecord } from '../children/child-record.js'
import type { InstanceInfo, InstanceOwner } from '../children/instances.js'
import { scopeOf, type ServerConfig } from '../config/server-schema.js'
import { LOCAL_PRINCIPAL } from '../oauth/token-store.js'
import { RelayErrorCode, type RelayOutcome } from '../protocol/request-relay.js'
import type { Runtime } from './runtime.js'

/** An HTTP server with an `oauth` key: behind `myc serve --http`, each person's calls carry their own login. */
export function isPersonal(config: ServerConfig): boolean {
  return config.type !== 'stdio' && config.oauth !== undefined
}

/** Whether some callers of a server reach it through a connection of their own: a login per person, or a scoped server's instances. */
export function ownConnections(config: ServerConfig): boolean {
  return isPersonal(config) || scopeOf(config) !== 'shared'
}

/** Where a person logs in to a server through `myc serve --http` (with their own myc credential). */
export const OAUTH_LOGIN_PATH = '/oauth/login'

/** Who calls, as far as which connection to a child serves them: their person (absent: whoever runs myc) and 2025 session. */
export interface Caller {
  owner?: string
  sessionId?: string
}

/** The connection a caller reaches, with the instance it is when a scoped server's; or the answer owed instead. */
export type Reached = { child: ChildConnection; instance?: InstanceInfo } | { outcome: RelayOutcome }

/**
 * The connection a caller's request to `server` goes through: the shared
 * one; for a server logged in per person (an `oauth` key, and a caller with
 * a name) the caller's own, or the tool error that says how to log in
 * (naming only a server the caller sees); for a scoped server (docs/team.md)
 * the instance of the caller's person or session, or the tool error that
 * says why there is none now.
 */
export async function childForCaller(runtime: Runtime, server: string, caller: Caller): Promise<Reached> {
  const shared = runtime.supervisor.children.get(server)
  if (!shared)
    return {
      outcome: {
        ok: false,
        error: { code: RelayErrorCode.connectionClosed, message: `Server "${server}" is not running` },
      },
    }
  if (scopeOf(shared.config) !== 'shared') return instanceForCaller(runtime, shared, caller)
  const { owner } = caller
  if (owner === undefined || !isPersonal(shared.config)) return { child: shared }
  const child = await runtime.supervisor.personalFor(server, owner, runtime.personalStore(owner))
  if (child?.state === 'RUNNING') return { child }
  if (child?.lastErrorCode === 'needs_login') return { outcome: loginHint(server, owner) }
  const reason = child?.lastError ?? 'not running'
  return toolError(`Server "${server}" is not running for you: ${reason}`)
}

/**
 * A scoped server's connection for a caller: the instance of their 2025
 * session (`scope: "session"`), else of their person; the server's own
 * process for the person who runs myc (stdio, a loopback serve without
 * tokens), which is their instance. A request of the 2026-07-28 era has no
 * session: it reaches its person's instance.
 */
async function instanceForCaller(runtime: Runtime, shared: ChildConnection, caller: Caller): Promise<Reached> {
  const owner = instanceOwner(shared, caller)
  const acquired = owner && (await runtime.supervisor.instanceFor(shared.key, owner))
  if (!acquired) return { child: shared }
  return 'refused' in acquired ? toolError(acquired.refused) : acquired
}

/** Whose instance of scoped server `shared` serves a caller (instanceForCaller); undefined: the server's own process. */
function instanceOwner(shared: ChildConnection, caller: Caller): InstanceOwner | undefined {
  const session = scopeOf(shared.config) === 'session' ? caller.sessionId : undefined
  if (caller.owner === undefined && session === undefined) return undefined
  return { person: caller.owner ?? LOCAL_PRINCIPAL, ...(session !== undefined ? { session } : {}) }
}

/**
 * Where what a caller asks of `server` outside a call (the log level) is
 * kept: for a scoped server, the slot of the instance their requests reach
 * (their person's or session's, whether one runs now or not: the next one
 * started is asked for it); for a server logged in per person, their own
 * connection's slot (the same rule); else the server's own process's.
 * Undefined for a server not in the config.
 */
export function recordForCaller(runtime: Runtime, server: string, caller: Caller): ChildRecord | undefined {
  const shared = runtime.supervisor.children.get(server)
  if (!shared) return undefined
  if (caller.owner !== undefined && isPersonal(shared.config))
    return runtime.supervisor.personalRecord(server, caller.owner)
  const owner = scopeOf(shared.config) === 'shared' ? undefined : instanceOwner(shared, caller)
  return (owner && runtime.supervisor.recordFor(server, owner)) || shared.record
}

function toolError(text: string): Reached {
  return { outcome: { ok: true, result: { content: [{ type: 'text', text }], isError: true } } }
}

/** The tool error of a call whose person has no (working) login to `server`: where to log in. */
export function loginHint(server: string, owner: string): RelayOutcome {
  const text = `Server "${server}" needs your own OAuth login: open ${OAUTH_LOGIN_PATH}/${encodeURIComponent(server)} on this myc with your myc credential, then call again (or its operator runs: myc auth login ${server} --principal ${owner}).`
  return { ok: true, result: { content: [{ type: 'text', text }], isError: true } }
}

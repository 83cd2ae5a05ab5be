import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/client'
import { SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/server'
import { serveStdio as serveModernStdio } from '@modelcontextprotocol/server/stdio'
import { credentialView } from './credential-view.js'
import type { PrincipalView } from '../../principal/view.js'
import type { Runtime } from '../../runtime/runtime.js'
import { BRIDGED_CHILD_CAPABILITIES } from './parked-calls.js'
import { ParkedCalls } from './parked-registry.js'
import type { TaskRegistry } from './task-registry.js'
import { ListenStream, stamped, visibleFilter } from './listen-stream.js'
import { childForUri } from '../../server/principal-requests.js'
import { statelessServer } from './stateless-server.js'
import type { StdioFace, StdioServing, StdioSide } from '../../server/stdio-face.js'

/**
 * The 2026-07-28 face on a stdio connection (stdio-face.ts): the SDK's own
 * stdio entry (`serveStdio` of `@modelcontextprotocol/server/stdio`, on the
 * connection's channel, 2025 openings refused) owns the 2026 wire: the
 * envelope checks and their error codes, server/discover, `resultType`,
 * per-request log level, subscriptions/listen. The server it pins is the one
 * the HTTP route makes per request (statelessServer), for the launch's
 * credential view: its role and --skills alone, so activate_skill never
 * changes the lists. A 2025 child's questions during a call park it
 * (parked-calls.ts); tasks are the runtime's (`tasks`).
 */
export function modernStdioFace(tasks: TaskRegistry): StdioFace {
  return { serve: (serving) => serveModern(serving, tasks) }
}

function serveModern({ runtime, view: launch, channel, onNote }: StdioServing, tasks: TaskRegistry): StdioSide {
  const view = credentialView(launch, runtime.loaded.config.namespace, { credential: 'stdio' })
  // The connection's calls waiting for its input (a 2025 child asked during them), and its listen streams.
  const parked = new ParkedCalls(runtime)
  // A write to a stream that went away is dropped: the connection's end closes the listens too.
  const listens = new StdioListens(runtime, view, (message) => void channel.send(message).catch(() => {}))
  channel.onInbound = (message) => listens.inbound(message)
  channel.onOutbound = (message) => listens.outbound(message)
  const engine = serveModernStdio(
    () => {
      // What a 2025 child asks during a 2026 client's call becomes that call's input_required (parked-calls.ts): children are offered what that can carry.
      runtime.offerClientCapabilities(BRIDGED_CHILD_CAPABILITIES)
      return statelessServer({ runtime, view, stepUp: false, parked, tasks })
    },
    { transport: channel, legacy: 'reject', onerror: (error) => onNote(`stdio (2026-07-28): ${error.message}`) },
  )
  return {
    close: async () => {
      listens.closeAll()
      parked.close()
      // The engine's stream may be gone already: closing what is closed is no failure.
      await engine.close().catch(() => {})
    },
  }
}

/**
 * The subscriptions/listen streams of a 2026 stdio connection. The SDK's
 * stdio entry serves listen itself (the envelope checks, the subscription
 * limit, the acknowledgement, the client's cancel, the closing result), but
 * it delivers only what the pinned server itself sends, to every stream
 * that asked for it; myc's changes come from the runtime, and are a
 * principal's, per stream. So each acknowledgement the entry writes opens
 * a ListenStream for that subscription, with the filter it honours (the
 * resources the view cannot see taken out of it before it is written, so
 * nothing about them leaks), which writes its own notifications stamped
 * with the subscription id; the client's notifications/cancelled of it, the
 * entry's closing result for it, or the connection's end close it.
 */
class StdioListens {
  private readonly streams = new Map<RequestId, ListenStream>()

  constructor(
    private readonly runtime: Runtime,
    private readonly view: PrincipalView,
    private readonly write: (message: JSONRPCMessage) => void,
  ) {}

  /** A message the 2026 server writes: an acknowledgement opens its stream (narrowed to what the view sees); the listen's closing result ends it. */
  outbound(message: JSONRPCMessage): JSONRPCMessage {
    if (!('method' in message)) {
      const id = (message as { id?: unknown }).id
      if (typeof id === 'string' || typeof id === 'number') this.end(id)
      return message
    }
    if (message.method !== 'notifications/subscriptions/acknowledged') return message
    const params = (message.params ?? {}) as { notifications?: unknown; _meta?: Record<string, unknown> }
    const id = params._meta?.[SUBSCRIPTION_ID_META_KEY]
    if (typeof id !== 'string' && typeof id !== 'number') return message
    const { runtime, view } = this
    const filter = visibleFilter(params.notifications, (uri) => childForUri(runtime, view, uri) !== undefined) ?? {}
    this.end(id)
    const stream = new ListenStream({ runtime, view, filter, deliver: (n) => this.write(stamped(n, id)) })
    this.streams.set(id, stream)
    stream.open()
    return { ...message, params: { ...params, notifications: filter } } as JSONRPCMessage
  }

  /** A message of the client: its notifications/cancelled of a listen ends that stream (the entry stops it too). */
  inbound(message: JSONRPCMessage): void {
    if (!('method' in message) || 'id' in message || message.method !== 'notifications/cancelled') return
    const id = (message.params as { requestId?: unknown } | undefined)?.requestId
    if (typeof id === 'string' || typeof id === 'number') this.end(id)
  }

  private end(id: RequestId): void {
    this.streams.get(id)?.close()
    this.streams.delete(id)
  }

  closeAll(): void {
    for (const id of [...this.streams.keys()]) this.end(id)
  }
}

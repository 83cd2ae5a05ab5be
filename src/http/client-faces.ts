import { ClientConnection } from '../server/client-connection.js'
import { modernStdioFace } from '../server/modern-stdio.js'
import { TaskRegistry } from '../eras/face/task-registry.js'
import type { ClientFace, ClientFaces } from './era-route.js'
import { SessionRoute } from './session-route.js'
import { StatelessRoute } from './stateless-route.js'

/**
 * The 2025 face: a session per stdio connection and per HTTP session, each
 * a ClientConnection (the SDK server for the handshake and the lists, the
 * upstream relay for the forwarded calls); over HTTP the session route
 * keeps the sessions (Mcp-Session-Id, the shared store).
 */
export const legacyFace: ClientFace = {
  stdio: {
    serve: ({ runtime, view, channel, onNote, ended }) => {
      const connection = new ClientConnection({ runtime, view })
      connection.onclose = ended
      connection.connect(channel).catch((error: unknown) => {
        onNote(`could not serve the stdio client: ${String(error)}`)
        ended()
      })
      return { close: () => connection.close() }
    },
  },
  http: (context) => new SessionRoute({ ...context, connection: (options) => new ClientConnection(options) }),
}

/**
 * The 2026-07-28 face: over stdio the SDK's stdio entry, over HTTP the
 * stateless route, each with a server per request for the credential's
 * view; a 2025 child's questions park the call, and tasks are the
 * runtime's (`tasks`: the extension's, routed to 2026 children or held by
 * myc for 2025 ones).
 */
export function modernFace(tasks: TaskRegistry): ClientFace {
  return { stdio: modernStdioFace(tasks), http: (context) => new StatelessRoute({ ...context, tasks }) }
}

/** Both eras' faces for one runtime (what `myc serve` hands serveStdio and serveHttp); its close ends the tasks myc still holds. */
export function clientFaces(tasks = new TaskRegistry()): ClientFaces {
  return { legacy: legacyFace, modern: modernFace(tasks), close: () => tasks.close() }
}

import type { ClientFace } from '../../http/era-route.js'
import { SessionRoute } from '../../http/session-route.js'
import { ClientConnection } from './client-connection.js'

/**
 * The 2025 face (ClientFace, http/era-route.ts): a session per stdio
 * connection and per HTTP session, each a ClientConnection (the SDK server
 * for the handshake and the lists, the upstream relay below it for the
 * forwarded calls, 2025 core tasks); over HTTP the session route keeps the
 * sessions (Mcp-Session-Id, the shared store) and makes each one's
 * connection here.
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

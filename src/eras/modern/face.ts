import type { ClientFace } from '../../http/era-route.js'
import { StatelessRoute } from './stateless-route.js'
import { modernStdioFace } from './stdio-entry.js'
import type { TaskRegistry } from './task-registry.js'

/**
 * The 2026-07-28 face (ClientFace, http/era-route.ts): over stdio the
 * SDK's stdio entry (stdio-entry.ts), over HTTP the stateless route
 * (stateless-route.ts), each with a server per request for the
 * credential's view (stateless-server.ts); a 2025 child's questions park
 * the call (parked-calls.ts), and tasks are the runtime's (`tasks`: the
 * extension's, routed to 2026 children or held by myc for 2025 ones).
 */
export function modernFace(tasks: TaskRegistry): ClientFace {
  return { stdio: modernStdioFace(tasks), http: (context) => new StatelessRoute({ ...context, tasks }) }
}

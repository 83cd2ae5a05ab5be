import type { ChildSessions } from '../children/child-session.js'
import { LegacyChildSession } from './legacy/child-session.js'
import { ModernChildSession } from './modern/child-session.js'

/**
 * The session of each era a child may speak (ChildSession,
 * children/child-session.ts), as the composition roots hand them in where
 * the runtime is opened (docs/architecture.md, "Each era behind one
 * interface"): each child gets the one of the era it negotiated. The 2025
 * session is a plain relay; the 2026 session carries the envelope, the
 * input bridge, the task mapping and the child's one listen.
 */
export const childSessions: ChildSessions = {
  legacy: (link) => new LegacyChildSession(link),
  modern: (link) => new ModernChildSession(link),
}

import type { ClientFaces } from '../http/era-route.js'
import { legacyFace } from './legacy/face.js'
import { modernFace } from './modern/face.js'
import { TaskRegistry } from './modern/task-registry.js'

/**
 * Both eras' faces for one runtime (ClientFace, http/era-route.ts), as the
 * composition root (`myc serve`) hands them to the stdio and HTTP serving,
 * which choose one per connection or request (docs/architecture.md, "Each
 * era behind one interface"). Their close ends the tasks myc still holds
 * for 2026 clients.
 */
export function clientFaces(tasks = new TaskRegistry()): ClientFaces {
  return { legacy: legacyFace, modern: modernFace(tasks), close: () => tasks.close() }
}

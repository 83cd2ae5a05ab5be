import { createHash } from 'node:crypto'

/** What the Messages API accepts as a tool name. */
export const API_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** The names one request offers: wire name → API name, and back. */
export interface ApiNames {
  toApi: ReadonlyMap<string, string>
  fromApi: ReadonlyMap<string, string>
}

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8)

/**
 * Maps wire names to names the Messages API accepts. A wire name that fits
 * is kept as it is (with the default separator `__` all do); any other is
 * rewritten deterministically: characters outside `[a-zA-Z0-9_-]` become
 * `_`, and a name that is then too long or taken gets a hash of the wire
 * name as its suffix. The same list always maps the same way.
 */
export function apiToolNames(wireNames: readonly string[]): ApiNames {
  const toApi = new Map<string, string>()
  const fromApi = new Map<string, string>()
  const fitting = wireNames.filter((w) => API_TOOL_NAME.test(w))
  for (const w of fitting) {
    toApi.set(w, w)
    fromApi.set(w, w)
  }
  for (const wire of wireNames) {
    if (toApi.has(wire)) continue
    let name = wire.replace(/[^a-zA-Z0-9_-]/g, '_')
    if (name.length === 0 || name.length > 64 || fromApi.has(name)) name = `${name.slice(0, 55)}_${shortHash(wire)}`
    toApi.set(wire, name)
    fromApi.set(name, wire)
  }
  return { toApi, fromApi }
}

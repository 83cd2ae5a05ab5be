/**
 * Tool patterns of skills and deny lists (docs/configuration.md): `fs:read_file`,
 * `fs__read_file` (the wire form, with the configured separator), `fs:*`,
 * `fs:read_*` and `*`. Pure: compiled once, matched against (server, tool)
 * pairs from the catalogue, never against re-split wire strings.
 */

/** A compiled pattern. `server: '*'` only for the pattern `*`. */
export interface ToolPattern {
  source: string
  server: string
  /** The exact tool name, or undefined for a glob. */
  exact?: string
  /** For globs: the compiled tool-name matcher (`*` alone matches every tool). */
  glob?: RegExp
}

/** A parsed pattern, or why it does not parse (text that names the fix). */
export type PatternResult = { ok: true; pattern: ToolPattern } | { ok: false; error: string }

/** What parsing the wire form needs: the separator and the server keys it may start with. */
export interface PatternContext {
  separator: string
  /** Known server keys (configured children plus `mycelium`), to split the wire form. */
  servers: ReadonlySet<string>
}

const SERVER = /^[A-Za-z0-9][A-Za-z0-9_-]*$/

function globToRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')
  return new RegExp(`^${escaped}$`)
}

function build(source: string, server: string, tool: string): PatternResult {
  if (tool === '')
    return {
      ok: false,
      error: `pattern "${source}" names no tool after the server (write "${server}:*" for all of them)`,
    }
  if (!tool.includes('*')) return { ok: true, pattern: { source, server, exact: tool } }
  return { ok: true, pattern: { source, server, glob: globToRegExp(tool) } }
}

/**
 * Parses one pattern. The `server:tool` form splits at the first `:` (server
 * keys never contain one, tool names may); the wire form `server<sep>tool`
 * needs a known server key as prefix, the longest one winning. When the text
 * before the first `:` is not a known server but a known server key plus the
 * separator starts the text (`fs__ns:tool`), the wire form wins.
 */
export function parsePattern(source: string, context: PatternContext): PatternResult {
  const text = source.trim()
  if (text === '*') return { ok: true, pattern: { source, server: '*', glob: /^.*$/ } }
  if (text === '') return { ok: false, error: 'empty pattern' }
  let best: string | undefined
  for (const server of context.servers) {
    if (text.startsWith(`${server}${context.separator}`) && (best === undefined || server.length > best.length))
      best = server
  }
  const colon = text.indexOf(':')
  if (colon > 0) {
    const server = text.slice(0, colon)
    if (server === '*') return { ok: false, error: `pattern "${source}": a server wildcard is written "*" alone` }
    if (context.servers.has(server) || best === undefined) {
      if (!SERVER.test(server))
        return {
          ok: false,
          error: `pattern "${source}": "${server}" is not a server key (keys are letters, digits, "_" and "-")`,
        }
      return build(source, server, text.slice(colon + 1))
    }
  }
  if (best !== undefined) return build(source, best, text.slice(best.length + context.separator.length))
  const guess = context.separator === '' ? undefined : text.split(context.separator)[0]
  return {
    ok: false,
    error: `pattern "${source}" names no configured server${guess && guess !== text ? ` ("${guess}" is not one)` : ''}: write it as server:tool`,
  }
}

/** Whether one pattern matches a tool of a server. */
export function patternMatches(pattern: ToolPattern, server: string, tool: string): boolean {
  if (pattern.server !== '*' && pattern.server !== server) return false
  return pattern.exact !== undefined ? pattern.exact === tool : pattern.glob!.test(tool)
}

/**
 * A set of patterns indexed by server, so matching a catalogue of thousands
 * of tools costs one map lookup and a few tests per tool.
 */
export class PatternSet {
  private readonly all: boolean
  private readonly exact = new Map<string, Set<string>>()
  /** Per server, all its globs as one alternation: one native regex run per tool instead of one per pattern. */
  private readonly globs = new Map<string, RegExp>()
  readonly servers: ReadonlySet<string>

  constructor(readonly patterns: readonly ToolPattern[]) {
    const servers = new Set<string>()
    const sources = new Map<string, Set<string>>()
    let all = false
    for (const p of patterns) {
      if (p.server === '*') {
        all = true
        continue
      }
      servers.add(p.server)
      if (p.exact !== undefined) {
        let set = this.exact.get(p.server)
        if (!set) this.exact.set(p.server, (set = new Set()))
        set.add(p.exact)
      } else {
        let list = sources.get(p.server)
        if (!list) sources.set(p.server, (list = new Set()))
        list.add(p.glob!.source.slice(1, -1))
      }
    }
    for (const [server, list] of sources) this.globs.set(server, new RegExp(`^(?:${[...list].join('|')})$`))
    this.all = all
    this.servers = servers
  }

  /** True when some pattern matches `server:tool`. */
  matches(server: string, tool: string): boolean {
    if (this.all) return true
    if (this.exact.get(server)?.has(tool)) return true
    return this.globs.get(server)?.test(tool) ?? false
  }

  /** True when some pattern could match a tool of `server` (`*` included). */
  touches(server: string): boolean {
    return this.all || this.servers.has(server)
  }

  /** Whether the set contains the `*` pattern. */
  get matchesEverything(): boolean {
    return this.all
  }
}

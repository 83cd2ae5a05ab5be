import {
  UriTemplate,
  type Prompt,
  type Resource,
  type ResourceTemplateType,
  type Tool,
} from '@modelcontextprotocol/client'
import type { Skill as SkillEntry } from '@modelcontextprotocol/core/ext/skills'
import type { ChildLists, ListKind } from '../children/child.js'
import type { Withholding } from '../pinning/gate.js'
import { ChildSkillRoutes, mapChildEntry } from '../skills/child-skills.js'
import { bareWireName, canonicalId, toWireName, type WireNameOptions } from './wire-names.js'

/** Per server: the word before its names on the wire (default: its key), or false for the child's own names. */
export type ServerPrefixes = ReadonlyMap<string, string | false>

/** The prefixes the config sets (`prefix` of each server entry). */
export function serverPrefixes(servers: ReadonlyMap<string, { prefix?: string | false }>): ServerPrefixes {
  return new Map([...servers].flatMap(([key, s]) => (s.prefix === undefined ? [] : [[key, s.prefix] as const])))
}

/** A tool or prompt in the merged catalogue. `wire` is the child's definition with the wire name, all else untouched. */
export interface NamedEntry<T extends { name: string }> {
  /** Canonical id, `server:name`. */
  id: string
  server: string
  /** The child's own name for it. */
  name: string
  wireName: string
  def: T
  wire: T
}
export type ToolEntry = NamedEntry<Tool>
export type PromptEntry = NamedEntry<Prompt>

export interface ResourceEntry {
  server: string
  def: Resource
}
/** A child's skill as myc serves it: the mapped entry and the routes back to the child. */
export interface ChildSkillEntry {
  server: string
  entry: SkillEntry
}

export interface TemplateEntry {
  server: string
  def: ResourceTemplateType
  template: UriTemplate | undefined
}

/** Two entries that would reach the client under one name (or URI); the later one is left out. */
export interface Conflict {
  kind: 'tool' | 'prompt' | 'resource'
  name: string
  kept: string
  dropped: string
}

type Lists = Partial<ChildLists>

/** Decides whether a child's tool or prompt is withheld: pinning and hidden text (src/pinning/gate.ts). */
export interface DefinitionGate {
  judge(server: string, kind: 'tool' | 'prompt', def: { name: string }): Withholding | undefined
}

/** A child's tool or prompt the gate withheld: in no list and no lookup, as if the child had never offered it. */
export interface WithheldEntry extends Withholding {
  /** Canonical id, `server:name`. */
  id: string
  server: string
  kind: 'tool' | 'prompt'
  name: string
}

/**
 * The merged, namespaced catalogue of every running child: tools and prompts
 * keyed by canonical id and by wire name, resources by URI, templates by
 * server. Order is deterministic: servers in config order, each child's
 * entries in its own order. Knows nothing of roles: a policy view filters it.
 * A tool or prompt the gate withholds never enters it (docs/pinning.md):
 * every face, list and call reads the catalogue, so none can see it.
 */
export class Catalogue {
  private readonly perServer = new Map<string, Lists>()
  private toolList: ToolEntry[] = []
  private promptList: PromptEntry[] = []
  private resourceList: ResourceEntry[] = []
  private templateList: TemplateEntry[] = []
  private readonly toolsByWire = new Map<string, ToolEntry>()
  private readonly toolsById = new Map<string, ToolEntry>()
  private readonly promptsByWire = new Map<string, PromptEntry>()
  private readonly promptsById = new Map<string, PromptEntry>()
  private readonly resourcesByUri = new Map<string, ResourceEntry>()
  private skillList: ChildSkillEntry[] = []
  private readonly skillRoutes = new Map<string, ChildSkillRoutes>()
  /** The tools of each server that went down (crashed; restarting or given up), as it last listed them: not listed, but known. */
  private readonly lastKnown = new Map<string, readonly Tool[]>()
  /** Conflicts found by the last rebuild. */
  conflicts: Conflict[] = []
  private withheldTools: WithheldEntry[] = []
  private withheldPrompts: WithheldEntry[] = []
  /** Bumped on every change, per kind, so views can cache what they derive. */
  readonly revision = { tools: 0, prompts: 0, resources: 0 }

  constructor(
    private serverOrder: readonly string[],
    private readonly naming: WireNameOptions,
    private prefixes: ServerPrefixes = new Map(),
    private readonly gate?: DefinitionGate,
  ) {}

  /** The gate's verdicts may have changed (the lock was read again): every tool and prompt is judged again. */
  regate(): void {
    this.rebuild(['tools', 'prompts'])
  }

  /** The tools and prompts withheld now, in catalogue order (tools first). */
  withheld(): readonly WithheldEntry[] {
    return [...this.withheldTools, ...this.withheldPrompts]
  }

  /** The config's order of servers (it decides which of two clashing names is kept) or their prefixes changed (a reload). */
  setServerOrder(order: readonly string[], prefixes: ServerPrefixes = this.prefixes): void {
    this.serverOrder = [...order]
    this.prefixes = prefixes
    this.rebuild(['tools', 'prompts', 'resources', 'resourceTemplates', 'skills'])
  }

  /** The name a client sees for a child's tool or prompt, after the server's prefix. */
  wireNameOf(server: string, name: string): string {
    const prefix = this.prefixes.get(server)
    return prefix === false ? bareWireName(server, name, this.naming) : toWireName(prefix ?? server, name, this.naming)
  }

  /** Replaces some of one server's lists (an empty object removes the server's entries). */
  setServer(server: string, lists: Lists, kinds: readonly ListKind[]): void {
    const current = { ...this.perServer.get(server) }
    for (const kind of kinds) (current as Record<string, unknown>)[kind] = lists[kind] ?? []
    this.perServer.set(server, current)
    if (kinds.includes('tools')) this.lastKnown.delete(server)
    this.rebuild(kinds)
  }

  /** Removes every entry of a server (it stopped, or left the config), its last known tools too. */
  clearServer(server: string): void {
    this.lastKnown.delete(server)
    this.perServer.delete(server)
    this.rebuild(['tools', 'prompts', 'resources', 'resourceTemplates', 'skills'])
  }

  /**
   * A server went down (it crashed, or a restart failed): its entries leave
   * the lists, and its tools are kept as last known ({@link lastKnownTool})
   * until it lists them again or is cleared.
   */
  serverDown(server: string): void {
    // Down again before it listed anything (a restart that failed): what it had before is still the last known.
    const tools = this.perServer.get(server)?.tools
    if (tools && tools.length > 0) this.lastKnown.set(server, tools)
    this.perServer.delete(server)
    this.rebuild(['tools', 'prompts', 'resources', 'resourceTemplates', 'skills'])
  }

  /**
   * The entry a wire name had when its server was last up, for a server that
   * is down now (not listed: a call to it is told the server is not running,
   * when the caller may see it). Undefined for a name no server had, for one
   * the gate withholds, and for one that a running server answers to now
   * ({@link toolByWire}).
   */
  lastKnownTool(wireName: string): ToolEntry | undefined {
    if (this.toolsByWire.has(wireName)) return undefined
    for (const [server, tools] of this.lastKnown) {
      for (const def of tools) {
        if (typeof def?.name !== 'string' || this.wireNameOf(server, def.name) !== wireName) continue
        // Withheld while the server ran (pinning, hidden text): as unknown now it is down.
        if (this.gate?.judge(server, 'tool', def)) return undefined
        return {
          id: canonicalId(server, def.name),
          server,
          name: def.name,
          wireName,
          def,
          wire: this.wireOf(def, wireName),
        }
      }
    }
    return undefined
  }

  private rebuild(kinds: readonly ListKind[]): void {
    const conflicts = this.conflicts.filter(
      (c) =>
        !(kinds.includes('tools') && c.kind === 'tool') &&
        !(kinds.includes('prompts') && c.kind === 'prompt') &&
        !(kinds.includes('resources') && c.kind === 'resource'),
    )
    if (kinds.includes('tools')) {
      this.withheldTools = []
      this.toolList = this.mergeNamed('tools', this.toolsByWire, this.toolsById, 'tool', conflicts, this.withheldTools)
      this.revision.tools++
    }
    if (kinds.includes('prompts')) {
      this.withheldPrompts = []
      this.promptList = this.mergeNamed(
        'prompts',
        this.promptsByWire,
        this.promptsById,
        'prompt',
        conflicts,
        this.withheldPrompts,
      )
      this.revision.prompts++
    }
    if (kinds.includes('resources')) {
      this.resourcesByUri.clear()
      this.resourceList = []
      for (const server of this.orderedServers()) {
        for (const def of this.perServer.get(server)?.resources ?? []) {
          const existing = this.resourcesByUri.get(def.uri)
          if (existing) {
            conflicts.push({ kind: 'resource', name: def.uri, kept: existing.server, dropped: server })
            continue
          }
          const entry = { server, def }
          this.resourcesByUri.set(def.uri, entry)
          this.resourceList.push(entry)
        }
      }
      this.revision.resources++
    }
    if (kinds.includes('skills')) {
      this.skillList = []
      this.skillRoutes.clear()
      for (const server of this.orderedServers()) {
        const skills = this.perServer.get(server)?.skills ?? []
        if (skills.length === 0) continue
        this.skillRoutes.set(server, new ChildSkillRoutes(server, skills))
        for (const entry of skills) this.skillList.push({ server, entry: mapChildEntry(server, entry) })
      }
      this.revision.resources++
    }
    if (kinds.includes('resourceTemplates')) {
      this.templateList = []
      for (const server of this.orderedServers()) {
        for (const def of this.perServer.get(server)?.resourceTemplates ?? []) {
          let template: UriTemplate | undefined
          try {
            template = new UriTemplate(def.uriTemplate)
          } catch {
            template = undefined
          }
          this.templateList.push({ server, def, template })
        }
      }
      this.revision.resources++
    }
    this.conflicts = conflicts
  }

  private orderedServers(): string[] {
    const known = this.serverOrder.filter((s) => this.perServer.has(s))
    const extra = [...this.perServer.keys()].filter((s) => !this.serverOrder.includes(s)).sort()
    return [...known, ...extra]
  }

  /** Each definition's wire form, kept while its definition and wire name stay: another server's change leaves it the same object (list changes are judged by identity). */
  private readonly wires = new WeakMap<object, { wireName: string; wire: unknown }>()

  private wireOf<T extends { name: string }>(def: T, wireName: string): T {
    const known = this.wires.get(def)
    if (known?.wireName === wireName) return known.wire as T
    const wire = { ...def, name: wireName }
    this.wires.set(def, { wireName, wire })
    return wire
  }

  private mergeNamed<T extends { name: string }>(
    kind: 'tools' | 'prompts',
    byWire: Map<string, NamedEntry<T>>,
    byId: Map<string, NamedEntry<T>>,
    label: 'tool' | 'prompt',
    conflicts: Conflict[],
    withheld: WithheldEntry[],
  ): NamedEntry<T>[] {
    byWire.clear()
    byId.clear()
    const list: NamedEntry<T>[] = []
    for (const server of this.orderedServers()) {
      for (const def of (this.perServer.get(server)?.[kind] ?? []) as unknown as T[]) {
        if (typeof def?.name !== 'string') continue
        const id = canonicalId(server, def.name)
        // Withheld before anything else: it takes no wire name from another server's entry either.
        const verdict = this.gate?.judge(server, label, def)
        if (verdict) {
          withheld.push({ id, server, kind: label, name: def.name, ...verdict })
          continue
        }
        const wireName = this.wireNameOf(server, def.name)
        const clash = byWire.get(wireName) ?? byId.get(id)
        if (clash) {
          conflicts.push({ kind: label, name: wireName, kept: clash.id, dropped: id })
          continue
        }
        const entry: NamedEntry<T> = { id, server, name: def.name, wireName, def, wire: this.wireOf(def, wireName) }
        byWire.set(wireName, entry)
        byId.set(id, entry)
        list.push(entry)
      }
    }
    return list
  }

  tools(): readonly ToolEntry[] {
    return this.toolList
  }
  toolByWire(wireName: string): ToolEntry | undefined {
    return this.toolsByWire.get(wireName)
  }
  toolById(id: string): ToolEntry | undefined {
    return this.toolsById.get(id)
  }
  prompts(): readonly PromptEntry[] {
    return this.promptList
  }
  promptByWire(wireName: string): PromptEntry | undefined {
    return this.promptsByWire.get(wireName)
  }
  promptById(id: string): PromptEntry | undefined {
    return this.promptsById.get(id)
  }
  resources(): readonly ResourceEntry[] {
    return this.resourceList
  }
  /** Children's skills, mapped under `skill://<server>/`, in config order. */
  childSkills(): readonly ChildSkillEntry[] {
    return this.skillList
  }
  /** For a `skill://<server>/…` URI: the server and the child's own URI; undefined when no child skill owns it. */
  childSkillUri(uri: string): { server: string; childUri: string } | undefined {
    const m = /^skill:\/\/([^/]+)\//.exec(uri)
    const routes = m ? this.skillRoutes.get(m[1]!) : undefined
    const childUri = routes?.toChild(uri)
    return routes && childUri !== undefined ? { server: routes.server, childUri } : undefined
  }
  templates(): readonly TemplateEntry[] {
    return this.templateList
  }
  /** The tool names of a server whose tool list is known; undefined while it is not (not started, crashed). */
  toolNamesOf(server: string): ReadonlySet<string> | undefined {
    const tools = this.perServer.get(server)?.tools
    return tools ? new Set(tools.map((t) => t.name)) : undefined
  }

  /** Servers that have any entry of any kind (a crashed server has none). */
  servers(): string[] {
    return this.orderedServers()
  }

  /**
   * The server that owns a resource URI: a listed resource first, then the
   * first server (config order) whose template matches it.
   */
  serverForUri(uri: string): string | undefined {
    const listed = this.resourcesByUri.get(uri)
    if (listed) return listed.server
    for (const entry of this.templateList) {
      try {
        if (entry.template?.match(uri)) return entry.server
      } catch {
        // A URI the template cannot match against (malformed): not this server's.
      }
    }
    return undefined
  }

  /** The server whose template has exactly this URI template (for completion refs). */
  serverForTemplate(uriTemplate: string): string | undefined {
    return this.templateList.find((t) => t.def.uriTemplate === uriTemplate)?.server
  }
}

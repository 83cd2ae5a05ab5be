import type { MyceliumConfig } from '../config/schema.js'
import { Policy } from '../policy/policy.js'
import { resolveRoles, type ResolvedRole, type RoleDefinitionInput } from '../policy/roles.js'
import type { Skill, SkillProblem } from '../policy/skill-definition.js'
import type { Catalogue } from '../registry/catalogue.js'
import type { ServedSkill, UnservedSkill } from '../skills/skill-index.js'

/** Everything policy mode is built from (loaded at start, reloaded when skill files change). */
export interface PolicySources {
  skills: readonly Skill[]
  /** Malformed skills found while loading (skipped). */
  problems: readonly SkillProblem[]
  definitions: ReadonlyMap<string, RoleDefinitionInput>
  config: MyceliumConfig
  /** The served form of each skill (the Skills extension), by name, and the ones not served. */
  skillIndex: ReadonlyMap<string, ServedSkill>
  unserved: readonly UnservedSkill[]
}

/**
 * The current Policy of a process: built from the loaded skills and roles,
 * and rebuilt (strict loading re-checked) whenever the catalogue changes.
 * One instance per runtime, shared by every view of it (client connections and the agent).
 */
export class PolicyState {
  private rolesNow: ReadonlyMap<string, ResolvedRole>
  private sourcesNow: PolicySources
  private current: Policy | undefined
  private readonly listeners = new Set<() => void>()

  constructor(
    sources: PolicySources,
    private readonly catalogue: Pick<Catalogue, 'toolNamesOf'>,
  ) {
    this.sourcesNow = sources
    this.rolesNow = PolicyState.roles(sources)
  }

  private static roles(sources: PolicySources): ReadonlyMap<string, ResolvedRole> {
    const roles = resolveRoles(sources.skills, sources.definitions)
    if (!roles.ok) throw new Error(roles.error)
    return roles.roles
  }

  get sources(): PolicySources {
    return this.sourcesNow
  }

  get roles(): ReadonlyMap<string, ResolvedRole> {
    return this.rolesNow
  }

  /**
   * Swaps in reloaded skills (their files changed on disk). Throws, keeping
   * the current ones, when the new role graph is broken. Listeners hear of it.
   */
  replace(sources: PolicySources): void {
    const roles = PolicyState.roles(sources)
    this.sourcesNow = sources
    this.rolesNow = roles
    this.current = undefined
    for (const l of this.listeners) l()
  }

  /** The policy for the catalogue as it is now. */
  get policy(): Policy {
    this.current ??= new Policy({
      skills: this.sources.skills,
      roles: this.rolesNow,
      servers: new Set(this.sources.config.servers.keys()),
      separator: this.sources.config.namespace.separator,
      catalogue: { toolsOf: (server) => this.catalogue.toolNamesOf(server) },
      strict: this.sources.config.skills?.strict ?? true,
    })
    return this.current
  }

  /** Call after a catalogue change: the next read rebuilds, and listeners hear of it. */
  invalidate(): void {
    const before = this.current ? [...this.current.disabled.keys()].join() : undefined
    this.current = undefined
    if (before !== undefined && before !== [...this.policy.disabled.keys()].join()) for (const l of this.listeners) l()
  }

  /** Listens for changes of what skills exist or are enabled (disabled set changed, skills reloaded). */
  onDisabledChange(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}

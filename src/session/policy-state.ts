import type { MyceliumConfig } from '../config/schema.js'
import { Policy } from '../policy/policy.js'
import { resolveRoles, type ResolvedRole, type RoleDefinitionInput } from '../policy/roles.js'
import type { Skill, SkillProblem } from '../policy/skill.js'
import type { Catalogue } from '../registry/catalogue.js'

/** Everything policy mode is built from, loaded once per process. */
export interface PolicySources {
  skills: readonly Skill[]
  /** Malformed skills found while loading (skipped). */
  problems: readonly SkillProblem[]
  definitions: ReadonlyMap<string, RoleDefinitionInput>
  config: MyceliumConfig
}

/**
 * The current Policy of a process: built from the loaded skills and roles,
 * and rebuilt (strict loading re-checked) whenever the catalogue changes.
 * One instance per runtime, shared by every session.
 */
export class PolicyState {
  readonly roles: ReadonlyMap<string, ResolvedRole>
  private current: Policy | undefined
  private readonly listeners = new Set<() => void>()

  constructor(
    readonly sources: PolicySources,
    private readonly catalogue: Pick<Catalogue, 'toolNamesOf'>,
  ) {
    const roles = resolveRoles(sources.skills, sources.definitions)
    if (!roles.ok) throw new Error(roles.error)
    this.roles = roles.roles
  }

  /** The policy for the catalogue as it is now. */
  get policy(): Policy {
    this.current ??= new Policy({
      skills: this.sources.skills,
      roles: this.roles,
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

  /** Listens for changes of the set of disabled skills. */
  onDisabledChange(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}

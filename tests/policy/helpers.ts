import type { Skill } from '../../src/policy/skill-definition.js'

/** A skill as the loader would produce it, with only the fields a test cares about. */
export function skill(name: string, over: Partial<Skill> = {}): Skill {
  return {
    name,
    description: `${name} skill`,
    allowedRoles: [],
    allowedTools: [],
    hostTools: [],
    triggers: [],
    grants: { memory: 'none', memoryTeamRoles: [] },
    protected: false,
    metadata: {},
    instructions: `${name} instructions`,
    frontmatter: `name: ${name}`,
    file: `/skills/${name}/SKILL.md`,
    dir: `/skills/${name}`,
    ...over,
  }
}

/** Catalogue facts from a plain object: server → tool names (absent server = list not known). */
export function facts(servers: Record<string, string[]>) {
  return { toolsOf: (s: string) => (Object.hasOwn(servers, s) ? new Set(servers[s]) : undefined) }
}

import type { Tool } from '@modelcontextprotocol/client'

/** Names of the built-in tools of server `mycelium` (docs/policy.md). */
export const META_TOOLS = ['list_skills', 'activate_skill', 'deactivate_skill', 'get_context'] as const
export type MetaToolName = (typeof META_TOOLS)[number]

const skillArg: Tool['inputSchema'] = {
  type: 'object',
  properties: { name: { type: 'string', description: 'The skill name, as list_skills shows it' } },
  required: ['name'],
  additionalProperties: false,
}

/** Definitions of the meta tools, with their canonical names (the server renames them for the wire). */
export const META_TOOL_DEFS: Record<MetaToolName, Omit<Tool, 'name'>> = {
  list_skills: {
    title: 'List skills',
    description: 'Lists the skills this session can use, with their descriptions and triggers, and which are active. Activate one to get its tools and instructions.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  activate_skill: {
    title: 'Activate a skill',
    description: 'Activates a skill: returns its instructions and the tools it adds. The tool list changes (notifications/tools/list_changed).',
    inputSchema: skillArg,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  deactivate_skill: {
    title: 'Deactivate a skill',
    description: 'Deactivates a skill and removes the tools only it provided. Protected skills stay active.',
    inputSchema: skillArg,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  get_context: {
    title: 'Session context',
    description: 'Shows the role, the active skills, how many tools are visible and the escalation mode.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
}

import type { Tool } from '@modelcontextprotocol/client'
import { META_BUILTINS } from '../policy/policy.js'

/** Names of the built-in tools of server `mycelium` (docs/policy.md). */
export const META_TOOLS = META_BUILTINS
export type MetaToolName = (typeof META_TOOLS)[number]

/*
 * Every session lists these before anything else, so each word costs tokens
 * on every request of every model (docs/tokens.md): one short sentence each,
 * no titles, no argument descriptions the name already says.
 */
const noArgs: Tool['inputSchema'] = { type: 'object' }
const readOnly: Tool['annotations'] = { readOnlyHint: true, openWorldHint: false }
const changesSession: Tool['annotations'] = { destructiveHint: false, openWorldHint: false }

/** Definitions of the meta tools, with their canonical names (the server renames them for the wire). */
export const META_TOOL_DEFS: Record<MetaToolName, Omit<Tool, 'name'>> = {
  list_skills: {
    description: 'Lists your skills, active or not, with what each is for.',
    inputSchema: noArgs,
    annotations: readOnly,
  },
  activate_skill: {
    description: 'Activates a skill: returns its instructions and adds its tools.',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    annotations: changesSession,
  },
  deactivate_skill: {
    description: 'Deactivates a skill and removes the tools only it adds.',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    annotations: changesSession,
  },
  get_context: {
    description: 'Shows your role, active skills, visible tool count and escalation mode.',
    inputSchema: noArgs,
    annotations: readOnly,
  },
  search_tools: {
    description:
      'Finds tools by what they do among all your skills, active or not, and names the skill to activate for each.',
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string' }, limit: { type: 'integer' } },
      required: ['query'],
    },
    annotations: readOnly,
  },
}

/** Past this many skills, activate_skill names none: the enum would cost more than list_skills called once. */
export const MAX_SKILL_ENUM = 30

/**
 * `activate_skill` for a principal that reaches `skills`: their names as the
 * argument's enum, so the first tools/list already says what can be
 * activated (no list_skills round trip needed). Without any (an empty enum
 * admits nothing) or with more than {@link MAX_SKILL_ENUM}, no enum.
 */
export function activateSkillDef(skills: readonly string[]): Omit<Tool, 'name'> {
  const base = META_TOOL_DEFS.activate_skill
  if (skills.length === 0 || skills.length > MAX_SKILL_ENUM) return base
  return {
    ...base,
    inputSchema: { type: 'object', properties: { name: { type: 'string', enum: [...skills] } }, required: ['name'] },
  }
}

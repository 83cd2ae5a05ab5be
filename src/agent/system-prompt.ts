import type { Runtime } from '../runtime/runtime.js'

export interface SystemPromptInput {
  role: string | null
  activeSkills: ReadonlyArray<{ name: string; instructions: string }>
  /** The children, for their instructions. */
  servers: Pick<Runtime, 'supervisor'>
  /** Whether the role reaches a server (only those servers' instructions are shown). */
  visible: (server: string) => boolean
}

/**
 * The system prompt of a run: who the agent is working as, the active
 * skills' instructions, and the instructions of the servers the role
 * reaches. Built once per run; the tool list, not the prompt, carries what
 * changes with escalation.
 */
export function systemPrompt(input: SystemPromptInput): string {
  const parts = [
    'You are an agent working through Mycelium (myc), which gives you the tools of several MCP servers.',
    input.role
      ? `You work as the role "${input.role}". You see only the tools your active skills allow; mycelium__search_tools finds a tool by what it does and names the skill that brings it in, and mycelium__activate_skill makes that skill's tools available.`
      : 'Every tool of the configured servers is available.',
  ]
  for (const skill of input.activeSkills) {
    if (skill.instructions.trim()) parts.push(`## Skill: ${skill.name}\n\n${skill.instructions.trim()}`)
  }
  for (const child of input.servers.supervisor.children.values()) {
    if (child.instructions && input.visible(child.key))
      parts.push(`## Server: ${child.key}\n\n${child.instructions.trim()}`)
  }
  return parts.join('\n\n')
}

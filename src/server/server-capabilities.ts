import type { ServerCapabilities } from '@modelcontextprotocol/server'
import { hasSkillsExtension } from '../children/child.js'
import type { PrincipalView } from '../principal/view.js'
import type { Runtime } from '../runtime/runtime.js'
import { skillsCapability } from './skills-handlers.js'

/** What one era's face adds to the capabilities: its tasks (the 2025 core `tasks`, or the 2026 tasks extension). */
export interface EraCapabilities {
  tasks?: Record<string, unknown>
  extensions?: Record<string, unknown>
}

/**
 * What myc offers a client of either era, for one principal: what its
 * children together support (a lazy child not started yet may support
 * anything, so it counts as all), tools with list changes always, logging,
 * and the skills extension when skills are served. The one difference of
 * the eras is tasks, which each face adds (`era`): a 2025 client gets the
 * 2025 core `tasks` capability, a 2026 client the tasks extension.
 */
export function serverCapabilities(
  runtime: Pick<Runtime, 'supervisor'>,
  view: Pick<PrincipalView, 'servedSkills' | 'serverVisible'>,
  era: EraCapabilities,
): ServerCapabilities {
  const children = [...runtime.supervisor.children.values()]
  const any = (pick: (caps: ServerCapabilities) => unknown) =>
    children.some((c) => c.state !== 'RUNNING' || Boolean(c.capabilities && pick(c.capabilities)))
  const caps: ServerCapabilities = { tools: { listChanged: true }, logging: {} }
  if (any((c) => c.prompts)) caps.prompts = { listChanged: true }
  if (any((c) => c.resources)) caps.resources = { listChanged: true, subscribe: true }
  if (any((c) => c.completions)) caps.completions = {}
  const extensions: Record<string, unknown> = {}
  if (view.servedSkills || children.some((c) => hasSkillsExtension(c.capabilities))) {
    caps.resources = { listChanged: true, subscribe: true }
    Object.assign(extensions, skillsCapability)
  }
  if (era.tasks) (caps as Record<string, unknown>).tasks = era.tasks
  Object.assign(extensions, era.extensions)
  if (Object.keys(extensions).length > 0) (caps as Record<string, unknown>).extensions = extensions
  return caps
}

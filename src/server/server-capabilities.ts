import type { ServerCapabilities } from '@modelcontextprotocol/server'
import { hasSkillsExtension } from '../children/child.js'
import type { PrincipalView } from '../principal/view.js'
import { hasTasksExtension, TASKS_EXTENSION, type Era } from '../protocol/facts.js'
import type { Runtime } from '../runtime/runtime.js'
import { skillsCapability } from './skills-handlers.js'

/**
 * What myc offers a client of either era, for one principal: what its
 * children together support (a lazy child not started yet may support
 * anything, so it counts as all), tools with list changes always, logging,
 * and the skills extension when skills are served. The one difference of
 * the eras is tasks: a 2025 client gets the 2025 core `tasks` capability (a
 * 2025 child's own, or a visible modern child's extension mapped,
 * core-tasks.ts); a 2026 client gets the tasks extension (routed to a
 * modern child that has it, or held by myc for a 2025 child:
 * hosted-tasks.ts).
 */
export function serverCapabilities(
  runtime: Pick<Runtime, 'supervisor'>,
  view: Pick<PrincipalView, 'servedSkills' | 'serverVisible'>,
  era: Era,
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
  if (era === 'legacy') {
    const modernTasks = (c: (typeof children)[number]) =>
      c.era === 'modern' && hasTasksExtension(c.capabilities) && view.serverVisible(c.key)
    if (children.some((c) => c.capabilities?.tasks || modernTasks(c)))
      (caps as Record<string, unknown>).tasks = { list: {}, cancel: {}, requests: { tools: { call: {} } } }
  } else if (
    children.some(
      (c) =>
        view.serverVisible(c.key) && (c.state !== 'RUNNING' || c.era === 'legacy' || hasTasksExtension(c.capabilities)),
    )
  )
    extensions[TASKS_EXTENSION] = {}
  if (Object.keys(extensions).length > 0) (caps as Record<string, unknown>).extensions = extensions
  return caps
}

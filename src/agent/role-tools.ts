import type { PrincipalView } from '../principal/view.js'
import type { Runtime } from '../runtime/runtime.js'
import type { ChildAnswers } from './child-questions.js'
import { ToolDoor, viewSource, type CallApprovals } from './tool-call.js'
import { Workers, type WorkerOptions } from './workers.js'

/** Workers for a role (agent.workers): a worker's view is the role with one skill. */
export type RoleWorkers = Omit<WorkerOptions, 'toolsFor'> & { viewFor: (skill: string) => PrincipalView }

/**
 * The tools of a role's agent (`myc run`, `adhoc` and a workflow's adhoc
 * phase, `chat`): its view's, and with `workers` the delegate too, each
 * worker with one skill's tools. Every call, a worker's included, passes a
 * door that `approvals` decides (none: `myc run`, nothing is asked).
 */
export function roleTools(options: {
  runtime: Runtime
  view: PrincipalView
  answers?: ChildAnswers | undefined
  approvals?: CallApprovals | undefined
  workers?: RoleWorkers | undefined
}): { tools: ToolDoor; workers?: Workers } {
  const { runtime, view, answers, approvals } = options
  const own = viewSource(runtime, view, answers)
  if (!options.workers) return { tools: new ToolDoor([own], approvals) }
  const { viewFor, ...rest } = options.workers
  const workers = new Workers({
    ...rest,
    toolsFor: (skill) =>
      view.reachableSkills?.().some((s) => s.name === skill)
        ? new ToolDoor([viewSource(runtime, viewFor(skill), answers)], approvals)
        : undefined,
  })
  return { tools: new ToolDoor([own, workers], approvals), workers }
}

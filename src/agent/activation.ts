import type { Logger } from '../logger.js'
import type { PrincipalView } from '../principal/view.js'
import type { ToolDoor } from './tool-call.js'
import type { EventStream } from './event-stream.js'

/** Asks a person a yes/no question. */
export type YesNo = (question: string) => Promise<boolean>

/**
 * Before the task's turn: the inactive skills the role reaches whose
 * triggers the task names are activated as the escalation mode allows (auto:
 * at once; ask: not without someone to ask; manual: suggested in the log).
 * Resolves whether any trigger matched.
 */
export async function activateTriggered(
  task: string,
  view: PrincipalView,
  toolbox: Pick<ToolDoor, 'callable'>,
  emit: EventStream['emit'],
  logger: Logger,
  signal: AbortSignal,
  ask?: YesNo,
): Promise<boolean> {
  if (!view.reachableSkills || !view.activate) return false
  const { triggeredSkills } = await import('./triggers.js')
  const names = triggeredSkills(task, view.reachableSkills())
  for (const name of names) await activateSkill(name, 'trigger', view, toolbox, emit, logger, signal, ask)
  return names.length > 0
}

/** Activates one skill for the agent (escalation rules apply) and tells the stream which tools came and went. */
export async function activateSkill(
  name: string,
  by: 'trigger' | 'classifier',
  view: PrincipalView,
  toolbox: Pick<ToolDoor, 'callable'>,
  emit: EventStream['emit'],
  logger: Logger,
  signal: AbortSignal,
  ask?: YesNo,
): Promise<void> {
  const before = toolbox.callable()
  // escalation "ask": a person answers (the chat's own prompt, or the terminal); without one the skill stays off.
  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true
  const yesNo: YesNo | undefined =
    ask ?? (interactive ? async (question) => (await import('./terminal-approval.js')).askYesNo(question) : undefined)
  const elicit = yesNo
    ? async (message: string) => ({ action: 'accept' as const, content: { approve: await yesNo(message) } })
    : undefined
  const result = await view.activate!(name, 'agent', { signal, ...(elicit ? { elicit } : {}) })
  if (result.isError) {
    logger.info(
      `skill ${name} (${by}) not activated: ${(result.content[0] as { text?: string } | undefined)?.text ?? ''}`,
    )
    return
  }
  const after = toolbox.callable()
  emit({
    type: 'skill_activated',
    skill: name,
    by,
    toolsAdded: [...after].filter((t) => !before.has(t)),
    toolsRemoved: [...before].filter((t) => !after.has(t)),
  })
}

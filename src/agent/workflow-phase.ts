import { projectState } from '../config/state-roots.js'
import { ExitCode, MycError } from '../errors.js'
import type { PrincipalView } from '../principal/view.js'
import { terminalText } from '../terminal-text.js'
import { ChatRecorder } from './chat-store.js'
import type { AgentOutcome } from './engine.js'
import {
  adhocView,
  openPhaseRecord,
  policyOf,
  recordPhase,
  restoreSkills,
  runPhaseAgent,
  sumUsage,
  type HandOff,
  type RunContext,
  type RunEnd,
} from './headless-phase.js'
import { runAsRole } from './role-phase.js'
import { systemPrompt } from './system-prompt.js'
import { ToolDoor } from './tool-call.js'
import { WorkflowToolbox, type ScriptFailure } from './workflow-toolbox.js'

/** Workflow: the skills' scripts and nothing else; a failed script ends it, and --on-failure decides. */
export async function runWorkflow(ctx: RunContext): Promise<RunEnd> {
  const { options, events, opened } = ctx
  const view = opened.viewFor(options.role)
  await restoreSkills(ctx, view)
  const principal = view.describe!()
  const runner = await (await import('../principal/builtin-exec.js')).createSandboxRunner(opened.loaded)
  // Code mode (the role's codeMode, else agent.codeMode): run_code over the scripts too.
  const code = opened.codeModeFor(principal.role) ? opened.codeRunner : undefined
  const toolbox = new WorkflowToolbox(
    policyOf(ctx).reachable(principal.role),
    runner,
    opened.loaded.config.namespace.separator,
    code,
  )
  const tools = new ToolDoor([toolbox])
  events.emit({
    type: 'session_start',
    role: principal.role,
    mode: 'workflow',
    model: opened.model,
    tools: tools.list().map((t) => t.id),
    activeSkills: principal.activeSkills.map((s) => s.name),
    version: options.version,
    ...(ctx.run?.span.traceId ? { traceId: ctx.run.span.traceId } : {}),
  })
  // The workflow phase is a chat record of its own (mode workflow), recorded like a run's.
  const record = openPhaseRecord(ctx, view, 'workflow')
  const recorded = record.conversation.length
  const said: string[] = []
  const workflow = await runPhaseAgent(ctx, options.task, {
    tools,
    conversation: record.conversation,
    system: `${systemPrompt({ ...principal, servers: ctx.runtime, visible: () => false })}\n\nYou run a workflow: use the skills' scripts (list_skills, read_skill, run_script) to do the task. A script that fails ends the workflow.`,
    failed: () => toolbox.failure !== undefined,
    emit: (e) => {
      if (e.type === 'text') said.push(e.text)
      events.emit(e)
    },
  })
  recordPhase(ctx, record.writer, record.conversation, recorded, view)
  const failure = toolbox.failure
  if (workflow.reason !== 'failed' || !failure) return { result: workflow }
  return afterFailure(ctx, { workflow, failure, writer: record.writer, said })
}

/** A workflow whose script failed, as far as it went. */
interface FailedWorkflow {
  workflow: AgentOutcome
  failure: ScriptFailure
  /** The workflow's chat record. */
  writer: ChatRecorder
  /** What the model said during the workflow. */
  said: string[]
}

/** A failed script: its failure context written, then a hand-off to adhoc, or an end that says how to investigate. */
async function afterFailure(ctx: RunContext, failed: FailedWorkflow): Promise<RunEnd> {
  const { options, stderr } = ctx
  const { workflow, failure } = failed
  const { writeFailureContext } = await import('./failure-context.js')
  const contextFile = await writeFailureContext(projectState(ctx.opened.loaded).contextDir.path, {
    skillId: failure.skill,
    scriptPath: `scripts/${failure.script}`,
    args: failure.args,
    exitCode: failure.exitCode,
    stdout: failure.stdout,
    stderr: failure.stderr,
    conversationSummary: failed.said.join('\n').slice(-4_000),
  })
  const onFailure = options.onFailure ?? 'prompt'
  if (!(await wantsHandOff(ctx, onFailure, failure))) {
    if (onFailure === 'prompt')
      stderr.write(
        `${terminalText(`myc: the workflow failed; to investigate: myc adhoc --context ${contextFile}${options.configPath ? ` --config ${options.configPath}` : ''} "find out why ${failure.skill} failed and fix it"`)}\n`,
      )
    return { result: { ...workflow, contextFile } }
  }
  return handOff(ctx, failed, contextFile)
}

/** Whether to hand off: always with `auto`, never with `exit`, with `prompt` when a person at a terminal says yes. */
async function wantsHandOff(
  ctx: RunContext,
  onFailure: 'prompt' | 'auto' | 'exit',
  failure: ScriptFailure,
): Promise<boolean> {
  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true
  // Before the question, what failed: the script, its exit code, the end of its stderr.
  if (onFailure === 'prompt' && interactive)
    ctx.stderr.write(`${terminalText((await import('./failure-context.js')).failureSummary(failure))}\n`)
  return (
    onFailure === 'auto' ||
    (onFailure === 'prompt' &&
      interactive &&
      (await (
        await import('./terminal-approval.js')
      ).askYesNo(`Script ${failure.script} of skill ${failure.skill} failed. Hand off to adhoc to investigate?`)))
  )
}

/** The adhoc phase after a failed workflow: a new chat record, linked both ways, with the failure context in its prompt. */
async function handOff(ctx: RunContext, failed: FailedWorkflow, contextFile: string): Promise<RunEnd> {
  const { options, events } = ctx
  const { workflow, writer } = failed
  // A hand-off that cannot start (no view for adhoc) fails before it hands off, naming the context file.
  let adhocReady: PrincipalView
  try {
    adhocReady = options.role === undefined ? adhocView(ctx) : ctx.opened.viewFor(options.role)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    return {
      result: {
        ...workflow,
        reason: 'error',
        contextFile,
        error: {
          code: error instanceof MycError ? error.code : 'runtime',
          message: `cannot hand off to adhoc: ${message}`,
        },
      },
      exitCode: error instanceof MycError ? error.exitCode : ExitCode.runtime,
    }
  }
  // The adhoc phase is a new chat record: the workflow's names it (handoff), it names the workflow's (meta.from), and the events from here on carry its id.
  const handedOff: HandOff = { id: ChatRecorder.newId(), from: writer.id }
  events.emit({ type: 'handoff', contextFile, to: 'adhoc' })
  writer.append({ type: 'handoff', to: handedOff.id, contextFile })
  events.chatId = handedOff.id
  const written = await (await import('./failure-context.js')).readFailureContext(contextFile)
  const adhoc = await runAsRole(ctx, {
    as: 'adhoc',
    task: options.task,
    extra: (await import('./failure-context.js')).contextPrompt(written),
    announce: false,
    handedOff,
    ready: adhocReady,
  })
  return {
    result: {
      ...adhoc,
      turns: workflow.turns + adhoc.turns,
      usage: sumUsage(workflow.usage, adhoc.usage),
      permissionDenials: [...workflow.permissionDenials, ...adhoc.permissionDenials],
      contextFile,
    },
  }
}

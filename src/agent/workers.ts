import { unknownTool } from '../runtime/principal-tools.js'
import type { AgentOutcome } from './engine.js'
import type { AgentEventBody, TokenUsage } from './events.js'
import type { OfferedTool, Reached, ToolCall, ToolDoor, ToolOutcome, ToolSource } from './tool-call.js'
import { countOf } from '../words.js'

export interface WorkerOptions {
  /** The skills the role reaches (a worker may use any one of them). */
  skills: () => ReadonlyArray<{ name: string; description: string }>
  /** A worker's tools: exactly one skill's, no meta tools (a worker cannot escalate), behind the parent's approvals; undefined when the role does not reach it. */
  toolsFor: (skill: string) => ToolDoor | undefined
  /**
   * Runs a worker's agent loop over its tools, with its own turn limit;
   * `emit` takes its events (tagged as the worker's); `meta` is the
   * delegate call's `_meta` (its trace context: the worker's spans go under it).
   */
  run: (
    task: string,
    tools: ToolDoor,
    signal: AbortSignal,
    emit: (event: AgentEventBody) => void,
    meta?: Record<string, unknown>,
  ) => Promise<AgentOutcome>
  emit: (event: AgentEventBody) => void
  /** Workers at once; more wait for a free one. */
  max: number
  separator: string
}

/**
 * `mycelium__delegate {skill, task}`, a source beside the parent's own tools
 * (its calls pass the parent's door like any other): a nested agent whose
 * tools are that one skill's and nothing else, its final text the tool's
 * result. Its usage is counted (`usage`) for the parent's `session_end`.
 */
export class Workers implements ToolSource {
  readonly usage: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }
  private running = 0
  private readonly waiting: Array<() => void> = []
  private readonly wireName: string

  constructor(private readonly options: WorkerOptions) {
    this.wireName = `mycelium${options.separator}delegate`
  }

  list(): readonly OfferedTool[] {
    const skills = this.options.skills()
    const delegate: OfferedTool = {
      wireName: this.wireName,
      id: 'mycelium:delegate',
      def: {
        name: this.wireName,
        description: `Hands a sub-task to a worker that can use one skill's tools and nothing else, and returns its answer. Skills: ${skills.map((s) => `${s.name} (${s.description})`).join('; ')}`,
        inputSchema: {
          type: 'object',
          properties: {
            skill: { type: 'string', enum: skills.map((s) => s.name) },
            task: { type: 'string', description: 'What the worker should do, on its own' },
          },
          required: ['skill', 'task'],
        },
      },
    }
    return [delegate]
  }

  reach(wireName: string, args: Record<string, unknown>): Reached | undefined {
    if (wireName !== this.wireName) return undefined
    const tool = this.list()[0]!
    return { tool, target: { tool, input: args } }
  }

  async ungated(call: ToolCall, target: OfferedTool | undefined, meta?: Record<string, unknown>): Promise<ToolOutcome> {
    if (target?.wireName !== this.wireName || call.wireName !== this.wireName)
      return unknownTool(call.wireName) as Extract<ToolOutcome, { ok: false }>
    const { args, callId, cancellation } = call
    const skill = String(args.skill ?? '')
    const task = String(args.task ?? '')
    const tools = this.options.toolsFor(skill)
    if (!tools)
      return {
        ok: true as const,
        result: {
          content: [
            {
              type: 'text' as const,
              text: `Unknown skill: ${skill}. Delegate to one of: ${this.options
                .skills()
                .map((s) => s.name)
                .join(', ')}.`,
            },
          ],
          isError: true,
        },
      }
    if (task.trim() === '')
      return {
        ok: true as const,
        result: { content: [{ type: 'text' as const, text: 'delegate needs a task.' }], isError: true },
      }
    await this.slot()
    try {
      this.options.emit({ type: 'worker_start', parentId: callId, skill, task, tools: tools.list().map((t) => t.id) })
      // The worker's own events go into the stream too, each naming the delegate call it works for.
      const outcome = await this.options.run(
        task,
        tools,
        cancellation.signal,
        (event) => this.options.emit({ ...event, worker: callId }),
        meta,
      )
      for (const k of Object.keys(this.usage) as Array<keyof TokenUsage>) this.usage[k] += outcome.usage[k]
      this.options.emit({
        type: 'worker_end',
        parentId: callId,
        skill,
        ok: outcome.reason === 'done',
        reason: outcome.reason,
        turns: outcome.turns,
        text: outcome.text,
      })
      const text =
        outcome.reason === 'done'
          ? outcome.text || '(the worker finished without a word)'
          : `The worker stopped (${outcome.reason}) after ${countOf(outcome.turns, 'turn')}.${outcome.text ? ` Its last words: ${outcome.text}` : ''}`
      return {
        ok: true as const,
        result: { content: [{ type: 'text' as const, text }], ...(outcome.reason === 'done' ? {} : { isError: true }) },
      }
    } finally {
      this.release()
    }
  }

  private async slot(): Promise<void> {
    if (this.running < this.options.max) {
      this.running++
      return
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve))
  }

  private release(): void {
    const next = this.waiting.shift()
    if (next) next()
    else this.running--
  }
}

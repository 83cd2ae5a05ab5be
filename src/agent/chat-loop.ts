import type { Logger } from '../logger.js'
import type { PrincipalView } from '../principal/view.js'
import type { Runtime } from '../runtime/runtime.js'
import { activateTriggered } from './activation.js'
import type { AgentContext } from './agent-context.js'
import { recordSkills, resumeHint, runCommand, type ChatState } from './chat-commands.js'
import type { ChatIo, ChatPrompt } from './chat-prompt.js'
import { runAgent, type AgentOutcome } from './engine.js'
import type { EventStream } from './event-stream.js'
import type { TokenUsage } from './events.js'
import { endRunSpan, startRunSpan } from './run-span.js'
import { systemPrompt } from './system-prompt.js'

/** What a chat runs on, once it is open (agent/chat.ts). */
export interface ChatParts {
  io: ChatIo
  logger: Logger
  opened: Pick<AgentContext, 'client' | 'sdk' | 'loaded' | 'budget' | 'sampledUsage'>
  runtime: Runtime
  view: PrincipalView
  events: EventStream
  chat: ChatState
  prompt: ChatPrompt
  /** Where the prompt's history is kept between chats. */
  historyFile: string
}

/**
 * The chat's loop, in named steps: read a line; run a slash command, or run
 * a turn (triggered skills, the agent's reply, the usage counted, the
 * conversation recorded, how it ended said); at the end, the prompt closed
 * and how to resume the chat said.
 */
export class ChatLoop {
  /** How much of opened.sampledUsage is in the chat's usage already (none yet: zeros, as the usage is). */
  private readonly sampledCounted: TokenUsage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
  }
  /** The chat ended by /quit (not Ctrl-C or Ctrl-D, which leave the cursor on the prompt's line). */
  private quit = false

  constructor(private readonly parts: ChatParts) {}

  /** Reads lines until /quit, the end of the input, or Ctrl-C twice at an empty prompt. */
  async run(): Promise<void> {
    const { prompt } = this.parts
    prompt.listen()
    prompt.show()
    for await (const raw of prompt.lines) {
      prompt.heard()
      const line = raw.trim()
      if (line === '') {
        prompt.show()
        continue
      }
      if (line.startsWith('/')) {
        if (line.split(/\s+/)[0] === '/quit') {
          this.quit = true
          break
        }
        await this.command(line)
        continue
      }
      await this.turn(line)
      if (prompt.closing) break
      prompt.showStatus()
      prompt.show()
    }
  }

  /** The prompt closes; on a terminal, the history is kept and how to resume this chat is said. */
  end(): void {
    const { io, prompt, chat, historyFile } = this.parts
    prompt.end(historyFile)
    // Ctrl-C or Ctrl-D left the cursor on the prompt's line.
    if (io.interactive && chat.dir !== undefined)
      io.say(`${this.quit ? '' : '\n'}session ${chat.writer.id} is recorded: ${resumeHint(chat)}`)
  }

  private async command(line: string): Promise<void> {
    const { chat, prompt } = this.parts
    try {
      await runCommand(line, chat)
    } catch (error) {
      // A command that fails (a file that cannot be written, a damaged chat record) is reported; the chat goes on.
      chat.say(`${line.split(/\s+/)[0]}: ${(error as Error).message}`)
    }
    prompt.showStatus(true)
    prompt.show()
  }

  /** One turn: the line as the person's message, the agent's reply to it, recorded. */
  private async turn(line: string): Promise<void> {
    const { io, logger, view, events, chat, prompt } = this.parts
    const turn = (prompt.turn = new AbortController())
    const recorded = chat.conversation.length
    // The turn names a trigger: its skills come first, as the escalation mode allows (ask: asked here).
    const ask = io.interactive ? prompt.yesNo : undefined
    if (await activateTriggered(line, view, chat.tools, events.emit, logger, turn.signal, ask)) recordSkills(chat)
    const outcome = await this.reply(line, turn.signal)
    prompt.turn = undefined
    this.count(outcome)
    this.record(outcome, recorded)
    this.report(outcome)
  }

  /** The agent's reply, over the chat's conversation so far; with tracing on, each turn is a trace of its own, as a run is. */
  private async reply(line: string, signal: AbortSignal): Promise<AgentOutcome> {
    const { io, opened, runtime, view, events, chat } = this.parts
    const p = view.describe?.() ?? { role: null, activeSkills: [] }
    const traced = startRunSpan(runtime.tracing, chat.model, 'chat')
    const outcome = await runAgent(line, {
      client: opened.client,
      sdk: opened.sdk,
      model: chat.model,
      tools: chat.tools,
      conversation: chat.conversation,
      maxTokens: opened.loaded.config.agent.maxTokens,
      maxTurns: opened.loaded.config.agent.maxTurns,
      system: systemPrompt({ ...p, servers: runtime, visible: (s) => view.serverVisible(s) }),
      emit: events.emit,
      signal,
      includePartial: io.interactive,
      budget: opened.budget,
      ...(traced ? { tracing: traced } : {}),
    })
    if (traced) endRunSpan(traced.span, outcome)
    return outcome
  }

  /** The turn's own usage, and what the model spent meanwhile answering children's sampling (a live total: only what is new). */
  private count(outcome: AgentOutcome): void {
    const { opened, chat } = this.parts
    const { usage } = chat
    for (const k of Object.keys(usage) as Array<keyof TokenUsage>) {
      usage[k] += outcome.usage[k] + opened.sampledUsage[k] - this.sampledCounted[k]
      this.sampledCounted[k] = opened.sampledUsage[k]
    }
  }

  /** The turn's messages (from `from` on), the spend so far and the skills active now, in the chat record. */
  private record(outcome: AgentOutcome, from: number): void {
    const { opened, chat } = this.parts
    const { conversation } = chat
    // A reply cut short says so, so the next turn stays well-formed.
    if ((outcome.reason === 'interrupted' || outcome.reason === 'budget') && conversation.at(-1)?.role === 'user')
      conversation.push({
        role: 'assistant',
        content: outcome.reason === 'budget' ? '(stopped: the budget was reached)' : '(interrupted by the user)',
      })
    chat.writer.append(
      ...conversation.slice(from).map((message) => ({
        type: 'message' as const,
        message: message as { role: 'user' | 'assistant'; content: unknown },
      })),
      opened.budget.usageRecord(),
    )
    recordSkills(chat)
  }

  /** How the turn ended, when not as it should. */
  private report(outcome: AgentOutcome): void {
    const { say } = this.parts.chat
    if (outcome.reason === 'interrupted') {
      // The reply was cut: the conversation says so (record), so the next turn stays well-formed.
      say('(interrupted)')
    } else if (outcome.error) say(`myc: ${outcome.error.message}`)
    else if (outcome.reason !== 'done') say(`(stopped: ${outcome.reason} after ${outcome.turns} requests)`)
  }
}

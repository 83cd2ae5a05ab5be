import { createInterface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages'
import { userState } from '../config/state-roots.js'
import type { Logger } from '../logger.js'
import type { Runtime } from '../runtime/runtime.js'
import { startWithProgress } from '../runtime/start-progress.js'
import { runAgent } from './engine.js'
import { complete, recordSkills, restoreSession, resumeHint, runCommand, type ChatState } from './chat-commands.js'
import { endRunSpan, startRunSpan } from './run-span.js'
import { EventStream, humanSink, markdownFor } from './event-stream.js'
import type { TokenUsage } from './events.js'
import { systemPrompt } from './system-prompt.js'
import { loadSession, recordedSessionsDir, SessionWriter } from './chat-store.js'
import { ExitCode } from '../errors.js'
import { activateTriggered } from './activation.js'
import { openAgentContext } from './agent-context.js'
import { createApprovalGate } from './approvals.js'
import { roleTools } from './role-tools.js'
import type { ToolDoor } from './tool-call.js'
import { HISTORY_LINES, readHistory, statusLine, writeHistory } from './chat-line.js'
import { capText, type BudgetFlags } from './budget.js'
import { forStream } from '../terminal-colour.js'
import { jsonText, terminalText } from '../terminal-text.js'

export interface ChatOptions {
  configPath?: string | undefined
  role?: string | undefined
  skills?: string[] | undefined
  model?: string | undefined
  /** A session (id or saved name) to continue. */
  resume?: string | undefined
  /** `--approve`: risk levels or tool patterns allowed without asking, as adhoc's (agent/approvals.ts). */
  approve?: readonly string[] | undefined
  /** `--max-budget-usd`, `--max-tokens-total`; `/budget` changes the caps for the rest of the chat (agent/budget.ts). */
  budget?: BudgetFlags | undefined
  logger: Logger
  env: Record<string, string | undefined>
  version: string
  input?: Readable & { isTTY?: boolean }
  output?: Writable & { isTTY?: boolean }
  errors?: Writable
}

/**
 * `myc chat`: a conversation with the agent over the same engine and view
 * as `myc run`. On a terminal: a prompt with history and tab completion,
 * replies streamed as they come, tool calls one line each on stderr, Ctrl-C
 * cancelling the reply in progress. With stdin piped: each line is one turn,
 * no prompt. Resolves with the exit code.
 */
export async function runChat(options: ChatOptions): Promise<number> {
  const input = options.input ?? process.stdin
  const output = options.output ?? process.stdout
  const errors = options.errors ?? process.stderr
  let runtime: Runtime | undefined
  // Closed in `finally` too: an error escaping the chat must not leave the terminal held by a prompt nobody reads.
  let prompt: { close(): void } | undefined
  try {
    const interactive = input.isTTY === true && output.isTTY === true
    // On a terminal a person answers the children's elicitation (below, once the prompt exists); piped, nobody does, so it is not offered.
    const opened = await openAgentContext({
      ...options,
      person: interactive,
      raiseBudget: '/budget N raises it for this chat',
      onRuntime: (r) => (runtime = r),
    })
    const { loaded, sdk, client, answers } = opened
    const rt = runtime!
    const view = opened.viewFor(options.role)
    await startWithProgress(rt, { stream: errors, env: options.env, logger: options.logger })
    const usage: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }
    /** How much of opened.sampledUsage is in `usage` already (none yet: zeros, as `usage` is). */
    const sampledCounted: TokenUsage = { ...usage }
    const conversation: BetaMessageParam[] = []
    const events = new EventStream(humanSink(output, errors, markdownFor(output, options.env)))
    // Everything said here may quote a skill, a tool, a memory, a session file or an error from a child: controls are shown, never obeyed.
    const say = (text: string) => errors.write(`${terminalText(text)}\n`)
    const principal = () => view.describe?.() ?? { role: null, activeSkills: [] }

    // The session: recorded as it goes, or continued from disk.
    const dir = recordedSessionsDir(loaded)
    // No config file: a chat with no tools, recorded nowhere (no `.mycelium/` in whatever folder this is); said once.
    if (dir === undefined)
      say(
        `myc: no config file here: no tools, and this chat is not recorded; run \`myc init\` to set up a project (or give --config)`,
      )
    const chat: ChatState = {
      view,
      // Set once the approvals exist (below): they ask through the prompt.
      tools: undefined as unknown as ToolDoor,
      opened,
      conversation,
      usage,
      dir,
      // Set just below: a new session, or the one resumed.
      writer: undefined as unknown as SessionWriter,
      model: opened.model,
      version: options.version,
      say,
      principal,
    }
    if (options.resume) await restoreSession(chat, loadSession(dir, options.resume))
    else {
      chat.writer = new SessionWriter(dir, SessionWriter.newId())
      chat.writer.append({
        type: 'meta',
        id: chat.writer.id,
        created: new Date().toISOString(),
        role: principal().role,
        mode: 'chat',
        model: chat.model,
        version: options.version,
      })
    }

    const historyFile = userState(options.env).chatHistory.path // across chats; the newest HISTORY_LINES lines
    const history = interactive ? readHistory(historyFile) : []
    const rl = createInterface({
      input,
      output,
      terminal: interactive,
      historySize: HISTORY_LINES,
      history,
      ...(interactive
        ? { completer: (line: string) => complete(line, view.reachableSkills?.().map((s) => s.name) ?? []) }
        : {}),
    })
    const lines = (prompt = rl)[Symbol.asyncIterator]() // lines queue from now: awaits below lose none of stdin's
    rl.setPrompt('myc> ')
    // The status line: on a terminal only, at the start, after every reply, and after a command that changed it.
    let shownStatus = ''
    const showStatus = (onlyIfChanged = false) => {
      if (!interactive) return
      const line = statusLine(
        principal(),
        view.reachableSkills !== undefined,
        chat.model,
        usage,
        loaded.config.agent.price,
        capText(opened.budget.limits),
      )
      if (onlyIfChanged && line === shownStatus) return
      shownStatus = line
      output.write(`${forStream(output, `${DIM}${terminalText(line)}${UNDIM}`, options.env)}\n`)
    }
    if (interactive) {
      say(`myc chat ${options.version} · /help lists the commands.`)
      showStatus()
    }

    // Questions go through this prompt (a second reader on the terminal would fight it for keystrokes).
    // Ctrl-C while a question is open ends the turn; the question is then cancelled (undefined): a yes/no counts as "no".
    const question = (q: string) =>
      new Promise<string | undefined>((resolve) => {
        const signal = turn?.signal
        if (signal?.aborted) return resolve(undefined)
        signal?.addEventListener('abort', () => resolve(undefined), { once: true })
        // A child's elicitation and an approval quote what children and the model wrote.
        rl.question(terminalText(q), signal ? { signal } : {}, resolve)
      })
    const yesNo = async (q: string): Promise<boolean> => {
      for (;;) {
        const a = (await question(`${q} [y/n]: `))?.trim().toLowerCase() ?? 'n'
        if (a === 'y' || a === 'yes') return true
        if (a === 'n' || a === 'no') return false
      }
    }
    if (interactive) {
      // A child's questions during a tool call: elicitation is the person's to answer, and sampling spends the person's tokens, so it is asked first.
      const { terminalElicitation } = await import('./child-questions.js')
      // Ctrl-C at a child's question cancels it.
      answers.elicit = terminalElicitation(async (q) => (await question(q)) ?? 'c', say)
      const sample = answers.sample
      if (sample) {
        answers.sample = async (server, params, signal) => {
          if (
            !(await yesNo(
              `Server "${server}" asks the model to answer it (sampling, up to ${String(params.maxTokens ?? '?')} tokens). Allow?`,
            ))
          )
            throw new Error('the person declined the sampling request')
          return sample(server, params, signal)
        }
      }
    }
    const { APPROVAL_ANSWERS } = await import('./terminal-approval.js')
    const approvals = await createApprovalGate(
      loaded.config,
      rt,
      options.approve ?? [],
      events.emit,
      interactive
        ? async ({ tool, risk, input: args }) => {
            for (;;) {
              const typed = await question(
                `Allow ${tool} (${risk} risk) with ${jsonText(args).slice(0, 200)}? [y]es / [n]o / [a]lways / ne[v]er: `,
              )
              // Ctrl-C: nobody answered; the call does not run, and the turn ends.
              if (typed === undefined) return 'cancelled'
              const a = APPROVAL_ANSWERS.get(typed.trim().toLowerCase())
              if (a) return a
            }
          }
        : undefined,
    )
    // Every call of the chat, the model's and /memory's, is decided there when it is made.
    chat.tools = roleTools({ runtime: rt, view, answers, approvals }).tools

    let turn: AbortController | undefined
    // Ctrl-C at an empty prompt asks for a second one; anything typed in between starts the count again.
    let emptyInterrupts = 0
    let closing = false
    rl.on('SIGINT', () => {
      if (turn) {
        turn.abort('interrupted by the user')
        return
      }
      if (rl.line !== '') emptyInterrupts = 0
      else if (++emptyInterrupts >= 2) {
        closing = true
        rl.close()
        return
      }
      // Off the prompt's line (it stays, like a shell's ^C), then a fresh prompt.
      say(rl.line === '' ? '\n(press Ctrl-C again to exit; Ctrl-D or /quit also leave)' : '')
      rl.write(null, { ctrl: true, name: 'u' })
      rl.prompt()
    })
    // Readline emits keypress events on a terminal's input: its own listener (which raises SIGINT) runs first.
    const onKeypress = (_text: string | undefined, key: { name?: string; ctrl?: boolean } | undefined) => {
      if (!(key?.ctrl === true && key.name === 'c')) emptyInterrupts = 0
      // Ctrl-L at the prompt: a clear screen with the status line and the prompt (what was typed kept) at its top.
      if (key?.ctrl === true && key.name === 'l' && turn === undefined) {
        output.write('\u001b[H\u001b[2J')
        showStatus()
        rl.prompt(true)
      }
    }
    if (interactive) input.on('keypress', onKeypress)

    if (interactive) rl.prompt()
    let quit = false
    for await (const raw of lines) {
      emptyInterrupts = 0
      const line = raw.trim()
      if (line === '') {
        if (interactive) rl.prompt()
        continue
      }
      if (line.startsWith('/')) {
        if (line.split(/\s+/)[0] === '/quit') {
          quit = true
          break
        }
        try {
          await runCommand(line, chat)
        } catch (error) {
          // A command that fails (a file that cannot be written, a damaged session file) is reported; the chat goes on.
          say(`${line.split(/\s+/)[0]}: ${(error as Error).message}`)
        }
        showStatus(true)
        if (interactive) rl.prompt()
        continue
      }
      turn = new AbortController()
      let recorded = conversation.length
      // The turn names a trigger: its skills come first, as the escalation mode allows (ask: asked here).
      if (
        await activateTriggered(
          line,
          view,
          chat.tools,
          events.emit,
          options.logger,
          turn.signal,
          interactive ? yesNo : undefined,
        )
      )
        recordSkills(chat)
      const p = principal()
      // Tracing on: each turn is a trace of its own, as a run is.
      const traced = startRunSpan(rt.tracing, chat.model, 'chat')
      const outcome = await runAgent(line, {
        client,
        sdk,
        model: chat.model,
        tools: chat.tools,
        conversation,
        maxTokens: loaded.config.agent.maxTokens,
        maxTurns: loaded.config.agent.maxTurns,
        system: systemPrompt({ ...p, servers: rt, visible: (s) => view.serverVisible(s) }),
        emit: events.emit,
        signal: turn.signal,
        includePartial: interactive,
        budget: opened.budget,
        ...(traced ? { tracing: traced } : {}),
      })
      if (traced) endRunSpan(traced.span, outcome)
      turn = undefined
      // The turn's own usage, and what the model spent meanwhile answering children's sampling (a live total: only what is new).
      for (const k of Object.keys(usage) as Array<keyof TokenUsage>) {
        usage[k] += outcome.usage[k] + opened.sampledUsage[k] - sampledCounted[k]
        sampledCounted[k] = opened.sampledUsage[k]
      }
      if ((outcome.reason === 'interrupted' || outcome.reason === 'budget') && conversation.at(-1)?.role === 'user')
        conversation.push({
          role: 'assistant',
          content: outcome.reason === 'budget' ? '(stopped: the budget was reached)' : '(interrupted by the user)',
        })
      chat.writer.append(
        ...conversation.slice(recorded).map((message) => ({
          type: 'message' as const,
          message: message as { role: 'user' | 'assistant'; content: unknown },
        })),
        opened.budget.usageRecord(),
      )
      recordSkills(chat)
      recorded = conversation.length
      if (outcome.reason === 'interrupted') {
        // The reply was cut: the conversation says so (above), so the next turn stays well-formed.
        say('(interrupted)')
      } else if (outcome.error) say(`myc: ${outcome.error.message}`)
      else if (outcome.reason !== 'done') say(`(stopped: ${outcome.reason} after ${outcome.turns} requests)`)
      if (closing) break
      showStatus()
      if (interactive) rl.prompt()
    }
    rl.close()
    input.off('keypress', onKeypress)
    if (interactive) {
      writeHistory(historyFile, (rl as unknown as { history: string[] }).history)
      // Ctrl-C or Ctrl-D left the cursor on the prompt's line.
      if (dir !== undefined) say(`${quit ? '' : '\n'}session ${chat.writer.id} is recorded: ${resumeHint(chat)}`)
    }
    return ExitCode.ok
  } finally {
    prompt?.close()
    await runtime?.close()
  }
}

const DIM = '\u001b[2m'
const UNDIM = '\u001b[22m'

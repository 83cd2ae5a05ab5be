import type { Readable, Writable } from 'node:stream'
import { userState } from '../config/state-roots.js'
import type { Logger } from '../logger.js'
import type { PrincipalView } from '../principal/view.js'
import type { Runtime } from '../runtime/runtime.js'
import { startWithProgress } from '../runtime/start-progress.js'
import { complete, resumeChatRecord, type ChatState } from './chat-commands.js'
import { EventStream, humanSink, markdownFor } from './event-stream.js'
import { loadChatRecord, recordedChatsDir, ChatRecorder } from './chat-store.js'
import { ExitCode } from '../errors.js'
import { openAgentContext, type AgentContext } from './agent-context.js'
import { checkPreapprovals, createApprovalGate } from './approvals.js'
import { roleTools } from './role-tools.js'
import type { ToolDoor } from './tool-call.js'
import { readHistory, statusLine } from './chat-line.js'
import { capText, type BudgetFlags } from './budget.js'
import { jsonText, terminalText } from '../terminal-text.js'
import type { ChildAnswers } from './child-questions.js'
import { ChatLoop } from './chat-loop.js'
import { ChatPrompt, type ChatIo } from './chat-prompt.js'
import type { AskPerson } from './terminal-approval.js'

export interface ChatOptions {
  configPath?: string | undefined
  role?: string | undefined
  skills?: string[] | undefined
  model?: string | undefined
  /** A chat record (id or saved name) to continue (`--resume`). */
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
  // Everything said here may quote a skill, a tool, a memory, a chat record or an error from a child: controls are shown, never obeyed.
  const say = (text: string) => errors.write(`${terminalText(text)}\n`)
  const io: ChatIo = {
    input,
    output,
    errors,
    interactive: input.isTTY === true && output.isTTY === true,
    env: options.env,
    say,
  }
  // The prompt is closed in `finally` too: an error escaping the chat must not leave the terminal held by a prompt nobody reads.
  const held: Held = {}
  try {
    const loop = await openChat(options, io, held)
    await loop.run()
    loop.end()
    return ExitCode.ok
  } finally {
    held.prompt?.close()
    await held.runtime?.close()
  }
}

/** What the chat holds that must be let go whatever happens: the runtime (its children) and the prompt. */
interface Held {
  runtime?: Runtime
  prompt?: ChatPrompt
}

/**
 * Opens the chat, in the order a person sees it: the runtime and its
 * children, the chat record (new, or resumed), the prompt with the status line,
 * the children's questions and the approvals asked through it.
 */
async function openChat(options: ChatOptions, io: ChatIo, held: Held): Promise<ChatLoop> {
  // On a terminal a person answers the children's elicitation (below, once the prompt exists); piped, nobody does, so it is not offered.
  const opened = await openAgentContext({
    ...options,
    person: io.interactive,
    raiseBudget: '/budget N raises it for this chat',
    onRuntime: (r) => (held.runtime = r),
  })
  const runtime = held.runtime!
  const view = opened.viewFor(options.role)
  checkPreapprovals(opened.loaded.config, runtime, options.approve ?? [])
  await startWithProgress(runtime, { stream: io.errors, env: options.env, logger: options.logger })
  const events = new EventStream(humanSink(io.output, io.errors, markdownFor(io.output, options.env)))
  const chat = await beginChat(options, io, opened, view)
  const historyFile = userState(options.env).chatHistory.path // across chats; the newest HISTORY_LINES lines
  const prompt = (held.prompt = openPrompt(io, historyFile, chat, opened))
  if (io.interactive) {
    io.say(`myc chat ${options.version} · /help lists the commands.`)
    prompt.showStatus()
    await askThePerson(opened.answers, prompt, io.say)
  }
  const approvals = await createApprovalGate(
    opened.loaded.config,
    runtime,
    options.approve ?? [],
    events.emit,
    await approvalsAsker(io, prompt),
  )
  // Every call of the chat, the model's and /memory's, is decided there when it is made.
  chat.tools = roleTools({ runtime, view, answers: opened.answers, approvals }).tools
  return new ChatLoop({ io, logger: options.logger, opened, runtime, view, events, chat, prompt, historyFile })
}

/** The chat: recorded as it goes, or continued from its chat record. */
async function beginChat(
  options: ChatOptions,
  io: ChatIo,
  opened: AgentContext,
  view: PrincipalView,
): Promise<ChatState> {
  const dir = recordedChatsDir(opened.loaded)
  // No config file: a chat with no tools, recorded nowhere (no `.mycelium/` in whatever folder this is); said once.
  if (dir === undefined)
    io.say(
      `myc: no config file here: no tools, and this chat is not recorded; run \`myc init\` to set up a project (or give --config)`,
    )
  const principal = () => view.describe?.() ?? { role: null, activeSkills: [] }
  const chat: ChatState = {
    view,
    // Set once the approvals exist: they ask through the prompt.
    tools: undefined as unknown as ToolDoor,
    opened,
    conversation: [],
    usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    dir,
    // Set just below: a new chat record, or the one resumed.
    writer: undefined as unknown as ChatRecorder,
    model: opened.model,
    version: options.version,
    say: io.say,
    principal,
  }
  if (options.resume) await resumeChatRecord(chat, loadChatRecord(dir, options.resume))
  else {
    chat.writer = new ChatRecorder(dir, ChatRecorder.newId())
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
  return chat
}

/** The prompt: on a terminal with the history of earlier chats, /add and /remove completing skill names, and the status line. */
function openPrompt(io: ChatIo, historyFile: string, chat: ChatState, opened: AgentContext): ChatPrompt {
  const { view, usage } = chat
  const history = io.interactive ? readHistory(historyFile) : []
  const skills = () => view.reachableSkills?.().map((s) => s.name) ?? []
  const status = () =>
    statusLine(
      chat.principal(),
      view.reachableSkills !== undefined,
      chat.model,
      usage,
      opened.loaded.config.agent.price,
      capText(opened.budget.limits),
    )
  return new ChatPrompt(io, history, io.interactive ? (line: string) => complete(line, skills()) : undefined, status)
}

/**
 * A child's questions during a tool call, asked through the prompt:
 * elicitation is the person's to answer, and sampling spends the person's
 * tokens, so it is asked first.
 */
async function askThePerson(answers: ChildAnswers, prompt: ChatPrompt, say: (text: string) => void): Promise<void> {
  const { terminalElicitation } = await import('./child-questions.js')
  // Ctrl-C at a child's question cancels it.
  answers.elicit = terminalElicitation(async (q) => (await prompt.question(q)) ?? 'c', say)
  const sample = answers.sample
  if (!sample) return
  answers.sample = async (server, params, signal) => {
    if (
      !(await prompt.yesNo(
        `Server "${server}" asks the model to answer it (sampling, up to ${String(params.maxTokens ?? '?')} tokens). Allow?`,
      ))
    )
      throw new Error('the person declined the sampling request')
    return sample(server, params, signal)
  }
}

/** Approvals asked through the prompt, on a terminal; piped, nobody is asked. */
async function approvalsAsker(io: ChatIo, prompt: ChatPrompt): Promise<AskPerson | undefined> {
  const { APPROVAL_ANSWERS } = await import('./terminal-approval.js')
  if (!io.interactive) return undefined
  return async ({ tool, risk, input: args }) => {
    for (;;) {
      const typed = await prompt.question(
        `Allow ${tool} (${risk} risk) with ${jsonText(args).slice(0, 200)}? [y]es / [n]o / [a]lways / ne[v]er: `,
      )
      // Ctrl-C: nobody answered; the call does not run, and the turn ends.
      if (typed === undefined) return 'cancelled'
      const a = APPROVAL_ANSWERS.get(typed.trim().toLowerCase())
      if (a) return a
    }
  }
}

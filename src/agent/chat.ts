import { createInterface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages'
import { didYouMean } from '../config/suggest.js'
import { userState } from '../config/state-roots.js'
import type { Logger } from '../logger.js'
import type { Runtime } from '../runtime/runtime.js'
import { startWithProgress } from '../runtime/start-progress.js'
import { runAgent } from './engine.js'
import { endRunSpan, startRunSpan } from './run-span.js'
import { EventStream, humanSink } from './event-stream.js'
import type { TokenUsage } from './events.js'
import { systemPrompt } from './system-prompt.js'
import {
  firstTurns,
  listSessions,
  loadSession,
  NOT_RECORDED,
  recordedSessionsDir,
  SessionWriter,
  summaryPair,
  turnStarts,
  type LoadedSession,
} from './session-store.js'
import { ExitCode } from '../errors.js'
import { activateTriggered } from './activation.js'
import { openAgentContext } from './agent-context.js'
import { createApprovalGate } from './approvals.js'
import { EXPORT_FORMATS, exportSession, type ExportFormat } from './session-export.js'
import { roleTools } from './role-tools.js'
import { HISTORY_LINES, readHistory, statusLine, writeHistory } from './chat-line.js'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { budgetCommand, capText, type BudgetFlags } from './budget.js'
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

/** Slash commands, for /help and tab completion. */
const COMMANDS = new Map<string, string>([
  ['/help', 'this list'],
  ['/skills', 'the skills this role reaches (* = active)'],
  ['/add', '/add SKILL: activate a skill'],
  ['/remove', '/remove SKILL: deactivate a skill (protected ones stay)'],
  ['/tools', 'the tools the model is offered now'],
  ['/model', '/model [NAME]: show or switch the model for the next turn'],
  ['/status', 'role, model, skills, tools and tokens used'],
  [
    '/budget',
    '/budget [N | N tokens | off]: the spend so far and the cap; N USD or N tokens for the rest of this chat',
  ],
  ['/roles', 'the role (fixed at launch)'],
  ['/memory', '/memory [WORDS]: what this role remembers (and the roles it may read), when a skill grants memory'],
  ['/clear', 'forget the conversation so far'],
  ['/save', '/save [NAME]: name this session (it is recorded as it goes)'],
  ['/sessions', 'the recorded sessions'],
  ['/resume', '/resume ID|NAME: continue a recorded session'],
  ['/fork', '/fork [ID] [--at N]: a new session from the first N turns of this one (or of ID); the old one stays'],
  ['/compress', 'summarise the older turns into one message, keeping the last two whole'],
  ['/export', '/export [md|json|html] [FILE]: this session as Markdown, JSON or one self-contained HTML file'],
  ['/quit', 'leave (also Ctrl-D, or Ctrl-C twice at an empty prompt)'],
])
/** Commands named for later releases: answered, not mistaken for typos. */
const LATER = new Set<string>()

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
    let model = opened.model
    const usage: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }
    /** How much of opened.sampledUsage is in `usage` already (none yet: zeros, as `usage` is). */
    const sampledCounted: TokenUsage = { ...usage }
    const conversation: BetaMessageParam[] = []
    const events = new EventStream(humanSink(output, errors))
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
    let writer!: SessionWriter
    const restore = async (session: LoadedSession) => {
      conversation.length = 0
      conversation.push(...session.messages)
      const reachable = new Set(view.reachableSkills?.().map((s) => s.name) ?? [])
      for (const name of session.activeSkills) {
        if (!reachable.has(name)) say(`skill ${name} is no longer reachable for this role: dropped`)
        else if (!view.reachableSkills?.().find((s) => s.name === name)?.active) await view.activate?.(name, 'person')
      }
      // Skills active now that the restored session did not have are turned off (protected ones stay).
      const wanted = new Set(session.activeSkills)
      for (const s of view.reachableSkills?.() ?? [])
        if (s.active && !wanted.has(s.name)) view.deactivate?.(s.name, 'person')
      writer = new SessionWriter(dir, session.id)
      say(`resumed session ${session.id}${session.name ? ` (${session.name})` : ''}: ${session.turns} turns`)
    }
    if (options.resume) await restore(loadSession(dir, options.resume))
    else {
      writer = new SessionWriter(dir, SessionWriter.newId())
      writer.append({
        type: 'meta',
        id: writer.id,
        created: new Date().toISOString(),
        role: principal().role,
        mode: 'chat',
        model,
        version: options.version,
      })
    }
    const recordSkills = () => writer.append({ type: 'skills', active: principal().activeSkills.map((s) => s.name) })

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
    prompt = rl
    rl.setPrompt('myc> ')
    const describe = () => {
      const p = principal()
      return `role ${p.role ?? '(open mode)'} · model ${model} · skills ${p.activeSkills.map((s) => s.name).join(', ') || 'none'} · ${tools.list().length} tools · ${usage.inputTokens + usage.outputTokens} tokens`
    }
    // The status line: on a terminal only, at the start, after every reply, and after a command that changed it.
    let shownStatus = ''
    const showStatus = (onlyIfChanged = false) => {
      if (!interactive) return
      const line = statusLine(
        principal(),
        view.reachableSkills !== undefined,
        model,
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
    // Ctrl-C while a question is open ends the turn; the question then counts as "no".
    const question = (q: string) =>
      new Promise<string>((resolve) => {
        const signal = turn?.signal
        if (signal?.aborted) return resolve('n')
        signal?.addEventListener('abort', () => resolve('n'), { once: true })
        // A child's elicitation and an approval quote what children and the model wrote.
        rl.question(terminalText(q), signal ? { signal } : {}, resolve)
      })
    const yesNo = async (q: string): Promise<boolean> => {
      for (;;) {
        const a = (await question(`${q} [y/n]: `)).trim().toLowerCase()
        if (a === 'y' || a === 'yes') return true
        if (a === 'n' || a === 'no') return false
      }
    }
    if (interactive) {
      // A child's questions during a tool call: elicitation is the person's to answer, and sampling spends the person's tokens, so it is asked first.
      const { terminalElicitation } = await import('./child-questions.js')
      answers.elicit = terminalElicitation(question, say)
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
              const a = APPROVAL_ANSWERS.get(
                (
                  await question(
                    `Allow ${tool} (${risk} risk) with ${jsonText(args).slice(0, 200)}? [y]es / [n]o / [a]lways / ne[v]er: `,
                  )
                )
                  .trim()
                  .toLowerCase(),
              )
              if (a) return a
            }
          }
        : undefined,
    )
    // Every call of the chat, the model's and /memory's, is decided there when it is made.
    const { tools } = roleTools({ runtime: rt, view, answers, approvals })

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
    }
    if (interactive) input.on('keypress', onKeypress)

    const command = async (line: string): Promise<boolean> => {
      const [name = '', ...rest] = line.trim().split(/\s+/)
      const arg = rest.join(' ')
      if (LATER.has(name)) return (say(`${name} comes with saved sessions; not available yet.`), true)
      if (!COMMANDS.has(name)) {
        const guess = didYouMean(name, [...COMMANDS.keys(), ...LATER])
        return (
          say(`Unknown command ${name}.${guess ? ` Did you mean ${guess}?` : ''} /help lists the commands.`),
          true
        )
      }
      switch (name) {
        case '/help':
          say([...COMMANDS].map(([c, d]) => `${c.padEnd(9)} ${d}`).join('\n'))
          return true
        case '/skills': {
          const skills = view.reachableSkills?.() ?? []
          say(
            skills.length
              ? skills.map((s) => `${s.active ? '*' : ' '} ${s.name}`).join('\n')
              : 'No skills (open mode: every tool is offered).',
          )
          return true
        }
        case '/add':
        case '/remove': {
          if (!arg) return (say(`${name} needs a skill: ${name} SKILL`), true)
          const result = name === '/add' ? await view.activate?.(arg, 'person') : view.deactivate?.(arg, 'person')
          say(result ? ((result.content[0] as { text?: string } | undefined)?.text ?? '') : 'No skills in open mode.')
          recordSkills()
          return true
        }
        case '/save':
          if (arg) writer.append({ type: 'name', name: arg })
          if (dir === undefined) say(`myc: ${NOT_RECORDED}`)
          else say(`session ${writer.id}${arg ? ` saved as "${arg}"` : ' is recorded as it goes'} (${writer.file})`)
          return true
        case '/sessions': {
          const all = listSessions(dir)
          say(
            all.length
              ? all.map((x) => `${x.id}${x.name ? ` ${x.name}` : ''} · ${x.meta.mode} · ${x.turns} turns`).join('\n')
              : 'No sessions yet.',
          )
          return true
        }
        case '/fork': {
          const at = /(?:^|\s)--at\s+(\d+)/.exec(arg)
          const source = arg.replace(/(?:^|\s)--at\s+\d+/, '').trim()
          try {
            const from = source ? loadSession(dir, source) : loadSession(dir, writer.id)
            const messages = at ? firstTurns(from.messages, Number(at[1])) : from.messages
            const fork = new SessionWriter(dir, SessionWriter.newId())
            fork.append(
              {
                type: 'meta',
                id: fork.id,
                created: new Date().toISOString(),
                role: principal().role,
                mode: 'chat',
                model,
                version: options.version,
              },
              ...messages.map((message) => ({
                type: 'message' as const,
                message: message as { role: 'user' | 'assistant'; content: unknown },
              })),
              { type: 'skills', active: from.activeSkills },
            )
            await restore(loadSession(dir, fork.id))
            say(`forked ${from.id}${at ? ` at turn ${at[1]}` : ''} into ${fork.id}; ${from.id} is untouched`)
          } catch (error) {
            say((error as Error).message)
          }
          return true
        }
        case '/compress': {
          const starts = turnStarts(conversation)
          if (starts.length <= 2)
            return (say('Nothing to compress yet: the last two turns are always kept whole.'), true)
          const cut = starts[starts.length - 2]!
          const older = conversation.slice(0, cut)
          const estimate = (m: readonly BetaMessageParam[]) => Math.round(JSON.stringify(m).length / 4)
          const before = estimate(conversation)
          try {
            const reply = await opened.budget.send(
              {
                model,
                max_tokens: 1_024,
                system:
                  'Summarise this conversation between a user and an agent for the agent to go on from: decisions, facts found, files and tools used, open questions. Be brief and concrete.',
                messages: [{ role: 'user' as const, content: JSON.stringify(older) }],
              },
              (request) => client.messages.create(request),
            )
            usage.inputTokens += reply.usage.input_tokens
            usage.outputTokens += reply.usage.output_tokens
            usage.cacheReadInputTokens += reply.usage.cache_read_input_tokens ?? 0
            usage.cacheCreationInputTokens += reply.usage.cache_creation_input_tokens ?? 0
            const summary = reply.content
              .map((b) => (b.type === 'text' ? b.text : ''))
              .join('')
              .trim()
            const kept = conversation.length - cut
            conversation.splice(0, cut, ...summaryPair(summary))
            writer.append({ type: 'compressed', summary, kept })
            say(
              `compressed ${starts.length - 2} turns: about ${before} tokens before, ${estimate(conversation)} after (estimated as characters / 4); the originals stay in ${writer.file}`,
            )
          } catch (error) {
            say(`could not compress: ${(error as Error).message}`)
          }
          return true
        }
        case '/export': {
          const [formatArg, fileArg] = rest
          const format = (formatArg ?? 'md') as ExportFormat
          if (!EXPORT_FORMATS.includes(format)) return (say(`/export takes md, json or html, not "${formatArg}"`), true)
          const text = exportSession(loadSession(dir, writer.id), format)
          const file = path.resolve(fileArg ?? `${writer.id}.${format}`)
          writeFileSync(file, text)
          say(`exported to ${file}`)
          return true
        }
        case '/resume':
          if (!arg) return (say('/resume needs a session: /resume ID (or its saved name)'), true)
          try {
            await restore(loadSession(dir, arg))
          } catch (error) {
            say((error as Error).message)
          }
          return true
        case '/tools':
          say(
            tools
              .list()
              .map((t) => t.id)
              .join('\n') || 'No tools.',
          )
          return true
        case '/model':
          if (arg) model = arg
          say(`model ${model}`)
          return true
        case '/status':
          say(describe())
          return true
        case '/budget':
          return (say(budgetCommand(opened.budget, arg)), true)
        case '/memory': {
          // Through the principal's own recall tool: exactly what policy lets this session read.
          const recall = tools.named(`mycelium${loaded.config.namespace.separator}recall_memory`)
          if (!recall) {
            say(
              `No active skill grants memory to role ${principal().role ?? '(open mode)'}. /skills lists the skills; one with grants.memory adds it.`,
            )
            return true
          }
          const { Cancellation } = await import('../protocol/cancellation.js')
          const done = await tools.call({
            wireName: recall.wireName,
            args: { all_roles: true, limit: 50, ...(arg ? { query: arg } : {}) },
            callId: 'memory',
            cancellation: new Cancellation(),
          })
          if (!done.sent) return (say(`memory: ${done.reason}`), true)
          const called = done.outcome
          say(
            called.ok
              ? called.result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
              : `memory: ${called.error.message}`,
          )
          return true
        }
        case '/roles':
          say(
            `role ${principal().role ?? '(open mode)'}: fixed at launch (--role, MYCELIUM_ROLE or roles.default); start myc chat again to change it.`,
          )
          return true
        case '/clear':
          conversation.length = 0
          // Recorded, so a resume, fork or export starts from here too.
          writer.append({ type: 'cleared' })
          say('Conversation cleared.')
          return true
        default:
          return false
      }
    }

    if (interactive) rl.prompt()
    let quit = false
    for await (const raw of rl) {
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
          await command(line)
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
          tools,
          events.emit,
          options.logger,
          turn.signal,
          interactive ? yesNo : undefined,
        )
      )
        recordSkills()
      const p = principal()
      // Tracing on: each turn is a trace of its own, as a run is.
      const traced = startRunSpan(rt.tracing, model, 'chat')
      const outcome = await runAgent(line, {
        client,
        sdk,
        model,
        tools,
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
      writer.append(
        ...conversation.slice(recorded).map((message) => ({
          type: 'message' as const,
          message: message as { role: 'user' | 'assistant'; content: unknown },
        })),
        opened.budget.usageRecord(),
      )
      recordSkills()
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
      if (dir !== undefined) say(`${quit ? '' : '\n'}session ${writer.id} is recorded: myc chat --resume ${writer.id}`)
    }
    return ExitCode.ok
  } finally {
    prompt?.close()
    await runtime?.close()
  }
}

const DIM = '\u001b[2m'
const UNDIM = '\u001b[22m'

/** Tab completion: slash commands, and skill names after /add and /remove. */
function complete(line: string, skills: readonly string[]): [string[], string] {
  const match = /^\/(add|remove)\s+(\S*)$/.exec(line)
  if (match) {
    const hits = skills.filter((s) => s.startsWith(match[2]!))
    return [hits, match[2]!]
  }
  if (line.startsWith('/') && !line.includes(' '))
    return [[...COMMANDS.keys(), ...LATER].filter((c) => c.startsWith(line)), line]
  return [[], line]
}

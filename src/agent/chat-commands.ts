import { writeFileSync } from 'node:fs'
import path from 'node:path'
import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages'
import { didYouMean } from '../config/suggest.js'
import { countOf } from '../words.js'
import type { PrincipalView } from '../principal/view.js'
import type { AgentContext } from './agent-context.js'
import { budgetCommand } from './budget.js'
import type { TokenUsage } from './events.js'
import { EXPORT_FORMATS, exportChatRecord, type ExportFormat } from './chat-export.js'
import type { ToolDoor } from './tool-call.js'
import {
  firstTurns,
  listChatRecords,
  loadChatRecord,
  NOT_RECORDED,
  ChatRecorder,
  summaryPair,
  turnStarts,
  type ChatRecord,
} from './chat-store.js'

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

/** What a chat's slash commands act on. */
export interface ChatState {
  view: PrincipalView
  /** The chat's one door to its tools: the model's calls and /memory's (agent/tool-call.ts). */
  tools: ToolDoor
  opened: Pick<AgentContext, 'budget' | 'client' | 'loaded'>
  conversation: BetaMessageParam[]
  usage: TokenUsage
  /** Where chat records are written; undefined without a config file (nothing is). */
  dir: string | undefined
  /** The chat record being written. */
  writer: ChatRecorder
  /** Its saved name (`/save NAME`, or the one it was resumed by), if any. */
  name?: string | undefined
  model: string
  version: string
  say(text: string): void
  principal(): { role: string | null; activeSkills: Array<{ name: string }> }
}

/**
 * Continues a chat record: its conversation, and its skills as far as
 * today's policy lets the role reach them (a skill it no longer reaches is
 * dropped, and said so); the chat is recorded on in its own file.
 */
export async function resumeChatRecord(chat: ChatState, record: ChatRecord): Promise<void> {
  const { view, conversation, say } = chat
  conversation.length = 0
  conversation.push(...record.messages)
  const reachable = new Set(view.reachableSkills?.().map((s) => s.name) ?? [])
  for (const name of record.activeSkills) {
    if (!reachable.has(name)) say(`skill ${name} is no longer reachable for this role: dropped`)
    else if (!view.reachableSkills?.().find((s) => s.name === name)?.active) await view.activate?.(name, 'person')
  }
  // Skills active now that the resumed record did not have are turned off (protected ones stay).
  const wanted = new Set(record.activeSkills)
  for (const s of view.reachableSkills?.() ?? [])
    if (s.active && !wanted.has(s.name)) view.deactivate?.(s.name, 'person')
  chat.writer = new ChatRecorder(chat.dir, record.id)
  chat.name = record.name
  say(`resumed session ${record.id}${record.name ? ` (${record.name})` : ''}: ${countOf(record.turns, 'turn')}`)
}

/** How to resume this chat: by its saved name when it has one, else by its id (as one shell word). */
export function resumeHint(chat: Pick<ChatState, 'writer' | 'name'>): string {
  const by = chat.name ?? chat.writer.id
  return `myc chat --resume ${/^[\w.:@%+-]+$/.test(by) ? by : `'${by.replace(/'/g, `'\\''`)}'`}`
}

/** Records the skills active now in the chat record. */
export function recordSkills(chat: ChatState): void {
  chat.writer.append({ type: 'skills', active: chat.principal().activeSkills.map((s) => s.name) })
}

/** The /status line: role, model, skills, tools offered and tokens used. */
function describe(chat: ChatState): string {
  const p = chat.principal()
  const { usage } = chat
  return `role ${p.role ?? '(open mode)'} · model ${chat.model} · skills ${p.activeSkills.map((s) => s.name).join(', ') || 'none'} · ${chat.tools.list().length} tools · ${usage.inputTokens + usage.outputTokens} tokens`
}

type Handler = (chat: ChatState, arg: string, rest: string[]) => void | Promise<void>

/**
 * Runs one slash command (the line as typed); an unknown one gets a
 * did-you-mean. `/quit` is the chat loop's own.
 */
export async function runCommand(line: string, chat: ChatState): Promise<void> {
  const [name = '', ...rest] = line.trim().split(/\s+/)
  const handler = HANDLERS.get(name)
  if (!handler) {
    const guess = didYouMean(name, [...COMMANDS.keys()])
    return chat.say(`Unknown command ${name}.${guess ? ` Did you mean ${guess}?` : ''} /help lists the commands.`)
  }
  await handler(chat, rest.join(' '), rest)
}

/** Tab completion: slash commands, and skill names after /add and /remove. */
export function complete(line: string, skills: readonly string[]): [string[], string] {
  const match = /^\/(add|remove)\s+(\S*)$/.exec(line)
  if (match) {
    const hits = skills.filter((s) => s.startsWith(match[2]!))
    return [hits, match[2]!]
  }
  if (line.startsWith('/') && !line.includes(' ')) return [[...COMMANDS.keys()].filter((c) => c.startsWith(line)), line]
  return [[], line]
}

const HANDLERS = new Map<string, Handler>([
  ['/help', (chat) => chat.say([...COMMANDS].map(([c, d]) => `${c.padEnd(9)} ${d}`).join('\n'))],
  ['/skills', skillsCommand],
  ['/add', (chat, arg) => skillCommand(chat, '/add', arg)],
  ['/remove', (chat, arg) => skillCommand(chat, '/remove', arg)],
  ['/save', saveCommand],
  ['/sessions', listRecordsCommand],
  ['/fork', forkCommand],
  ['/compress', compressCommand],
  ['/export', (chat, _arg, rest) => exportCommand(chat, rest)],
  ['/resume', resumeCommand],
  [
    '/tools',
    (chat) =>
      chat.say(
        chat.tools
          .list()
          .map((t) => t.id)
          .join('\n') || 'No tools.',
      ),
  ],
  ['/model', modelCommand],
  ['/status', (chat) => chat.say(describe(chat))],
  ['/budget', (chat, arg) => chat.say(budgetCommand(chat.opened.budget, arg))],
  ['/memory', memoryCommand],
  [
    '/roles',
    (chat) =>
      chat.say(
        `role ${chat.principal().role ?? '(open mode)'}: fixed at launch (--role, MYCELIUM_ROLE or roles.default); start myc chat again to change it.`,
      ),
  ],
  ['/clear', clearCommand],
])

function skillsCommand(chat: ChatState): void {
  const skills = chat.view.reachableSkills?.() ?? []
  chat.say(
    skills.length
      ? skills.map((s) => `${s.active ? '*' : ' '} ${s.name}`).join('\n')
      : 'No skills (open mode: every tool is offered).',
  )
}

/**
 * /add and /remove: the skill turned on or off as the person asked, and the
 * tools that came or went named as /tools names them (`server:tool`; the
 * model is told the wire names); a refusal as the view says it.
 */
async function skillCommand(chat: ChatState, name: '/add' | '/remove', arg: string): Promise<void> {
  if (!arg) return chat.say(`${name} needs a skill: ${name} SKILL`)
  const { view } = chat
  const ids = () => new Set(chat.tools.list().map((t) => t.id))
  const before = ids()
  const wasActive = view.reachableSkills?.().find((s) => s.name === arg)?.active === true
  const result = name === '/add' ? await view.activate?.(arg, 'person') : view.deactivate?.(arg, 'person')
  const text = result ? ((result.content[0] as { text?: string } | undefined)?.text ?? '') : 'No skills in open mode.'
  if (!result || result.isError || (name === '/remove' && !wasActive)) return chat.say(text)
  const after = ids()
  const changed = name === '/add' ? [...after].filter((t) => !before.has(t)) : [...before].filter((t) => !after.has(t))
  const tools = changed.length ? ` Tools ${name === '/add' ? 'added' : 'removed'}: ${changed.join(', ')}.` : ''
  const instructions = (result.structuredContent as { instructions?: unknown } | undefined)?.instructions
  const state = name === '/remove' ? 'no longer active' : wasActive ? 'already active' : 'active'
  const more = name === '/add' && typeof instructions === 'string' && instructions ? `\n\n${instructions}` : ''
  chat.say(`Skill ${arg} is ${state}.${tools}${more}`)
  recordSkills(chat)
}

function saveCommand(chat: ChatState, arg: string): void {
  if (arg) {
    chat.writer.append({ type: 'name', name: arg })
    chat.name = arg
  }
  if (chat.dir === undefined) chat.say(`myc: ${NOT_RECORDED}`)
  else
    chat.say(`session ${chat.writer.id}${arg ? ` saved as "${arg}"` : ' is recorded as it goes'} (${chat.writer.file})`)
}

/** /sessions: the chat records in this project's folder. */
function listRecordsCommand(chat: ChatState): void {
  const all = listChatRecords(chat.dir)
  chat.say(
    all.length
      ? all.map((x) => `${x.id}${x.name ? ` ${x.name}` : ''} · ${x.meta.mode} · ${countOf(x.turns, 'turn')}`).join('\n')
      : 'No sessions yet.',
  )
}

async function forkCommand(chat: ChatState, arg: string): Promise<void> {
  const at = /(?:^|\s)--at\s+(\d+)/.exec(arg)
  const source = arg.replace(/(?:^|\s)--at\s+\d+/, '').trim()
  const { dir } = chat
  try {
    const from = source ? loadChatRecord(dir, source) : loadChatRecord(dir, chat.writer.id)
    const messages = at ? firstTurns(from.messages, Number(at[1])) : from.messages
    const fork = new ChatRecorder(dir, ChatRecorder.newId())
    fork.append(
      {
        type: 'meta',
        id: fork.id,
        created: new Date().toISOString(),
        role: chat.principal().role,
        mode: 'chat',
        model: chat.model,
        version: chat.version,
      },
      ...messages.map((message) => ({
        type: 'message' as const,
        message: message as { role: 'user' | 'assistant'; content: unknown },
      })),
      { type: 'skills', active: from.activeSkills },
    )
    await resumeChatRecord(chat, loadChatRecord(dir, fork.id))
    chat.say(`forked ${from.id}${at ? ` at turn ${at[1]}` : ''} into ${fork.id}; ${from.id} is untouched`)
  } catch (error) {
    chat.say((error as Error).message)
  }
}

async function compressCommand(chat: ChatState): Promise<void> {
  const { conversation, usage } = chat
  const starts = turnStarts(conversation)
  if (starts.length <= 2) return chat.say('Nothing to compress yet: the last two turns are always kept whole.')
  const cut = starts[starts.length - 2]!
  const older = conversation.slice(0, cut)
  const estimate = (m: readonly BetaMessageParam[]) => Math.round(JSON.stringify(m).length / 4)
  const before = estimate(conversation)
  try {
    const reply = await chat.opened.budget.send(
      {
        model: chat.model,
        max_tokens: 1_024,
        system:
          'Summarise this conversation between a user and an agent for the agent to go on from: decisions, facts found, files and tools used, open questions. Be brief and concrete.',
        messages: [{ role: 'user' as const, content: JSON.stringify(older) }],
      },
      (request) => chat.opened.client.messages.create(request),
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
    chat.writer.append({ type: 'compressed', summary, kept })
    chat.say(
      `compressed ${countOf(starts.length - 2, 'turn')}: about ${before} tokens before, ${estimate(conversation)} after (estimated as characters / 4); the originals stay in ${chat.writer.file}`,
    )
  } catch (error) {
    chat.say(`could not compress: ${(error as Error).message}`)
  }
}

async function exportCommand(chat: ChatState, rest: string[]): Promise<void> {
  const [formatArg, fileArg] = rest
  const format = (formatArg ?? 'md') as ExportFormat
  if (!EXPORT_FORMATS.includes(format)) return chat.say(`/export takes md, json or html, not "${formatArg}"`)
  const text = await exportChatRecord(loadChatRecord(chat.dir, chat.writer.id), format)
  const file = path.resolve(fileArg ?? `${chat.writer.id}.${format}`)
  writeFileSync(file, text)
  chat.say(`exported to ${file}`)
}

async function resumeCommand(chat: ChatState, arg: string): Promise<void> {
  if (!arg) return chat.say('/resume needs a session: /resume ID (or its saved name)')
  try {
    await resumeChatRecord(chat, loadChatRecord(chat.dir, arg))
  } catch (error) {
    chat.say((error as Error).message)
  }
}

function modelCommand(chat: ChatState, arg: string): void {
  if (arg) chat.model = arg
  chat.say(`model ${chat.model}`)
}

/** Through the principal's own recall tool: exactly what policy lets this chat's principal read. */
async function memoryCommand(chat: ChatState, arg: string): Promise<void> {
  const recall = chat.tools.named(`mycelium${chat.opened.loaded.config.namespace.separator}recall_memory`)
  if (!recall)
    return chat.say(
      `No active skill grants memory to role ${chat.principal().role ?? '(open mode)'}. /skills lists the skills; one with grants.memory adds it.`,
    )
  const { Cancellation } = await import('../protocol/cancellation.js')
  const done = await chat.tools.call({
    wireName: recall.wireName,
    args: { all_roles: true, limit: 50, ...(arg ? { query: arg } : {}) },
    callId: 'memory',
    cancellation: new Cancellation(),
  })
  if (!done.sent) return chat.say(`memory: ${done.reason}`)
  const called = done.outcome
  chat.say(
    called.ok
      ? called.result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
      : `memory: ${called.error.message}`,
  )
}

function clearCommand(chat: ChatState): void {
  chat.conversation.length = 0
  // Recorded, so a resume, fork or export starts from here too.
  chat.writer.append({ type: 'cleared' })
  chat.say('Conversation cleared.')
}

import { randomBytes } from 'node:crypto'
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import path from 'node:path'
import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages'
import * as v from 'valibot'
import { MycError } from '../errors.js'
import { projectState, type StateConfig } from '../config/state-roots.js'

/**
 * One entry of a chat record, the file of one recorded agent conversation
 * (what people and `myc sessions` call a session; append-only JSON Lines under
 * `.mycelium/sessions/<id>.jsonl`): the messages exactly as sent to and
 * received from the API (tool_use and tool_result blocks whole), the active
 * skills after each turn, usage, and a name when saved under one. A
 * workflow's record and the adhoc one it handed off to name each other
 * (`handoff.to`, `meta.from`).
 */
const ChatEntrySchema = v.variant('type', [
  v.strictObject({
    type: v.literal('meta'),
    id: v.string(),
    created: v.string(),
    role: v.nullable(v.string()),
    mode: v.string(),
    model: v.string(),
    version: v.string(),
    /** The chat record this one was handed off from (a failed workflow's). */
    from: v.optional(v.string()),
  }),
  v.strictObject({
    type: v.literal('message'),
    message: v.strictObject({ role: v.picklist(['user', 'assistant']), content: v.unknown() }),
  }),
  v.strictObject({ type: v.literal('skills'), active: v.array(v.string()) }),
  /** What a turn (or a run's phase) spent: its requests, its workers' and its answers to children's sampling; `costUsd` when agent.price is set. */
  v.strictObject({
    type: v.literal('usage'),
    inputTokens: v.number(),
    outputTokens: v.number(),
    cacheReadInputTokens: v.optional(v.number()),
    cacheCreationInputTokens: v.optional(v.number()),
    costUsd: v.optional(v.number()),
  }),
  v.strictObject({ type: v.literal('name'), name: v.string() }),
  /** /compress: the messages before the last `kept` became `summary` (the originals stay above in the file). */
  v.strictObject({
    type: v.literal('compressed'),
    summary: v.string(),
    kept: v.pipe(v.number(), v.integer(), v.minValue(0)),
  }),
  /** /clear: the conversation starts again from here (the earlier messages stay above in the file). */
  v.strictObject({ type: v.literal('cleared') }),
  /** A workflow handed off: the adhoc chat record that went on from its failure context. */
  v.strictObject({ type: v.literal('handoff'), to: v.string(), contextFile: v.string() }),
])
export type ChatEntry = v.InferOutput<typeof ChatEntrySchema>

/** A chat record as loaded: its conversation and what it last had active. */
export interface ChatRecord {
  id: string
  file: string
  meta: Extract<ChatEntry, { type: 'meta' }>
  name?: string
  messages: BetaMessageParam[]
  activeSkills: string[]
  /** The model's turns (one per API answer), counted as `session_end` counts them; since the last /clear. */
  turns: number
  /** The person's tasks (messages typed or given as the task); since the last /clear. */
  tasks: number
  /** The first line of the conversation's first task. */
  firstTask?: string
  /** Summed over the usage records; `costUsd` when they were priced. */
  usage: { inputTokens: number; outputTokens: number; costUsd?: number }
  /** A workflow that handed off: the adhoc chat record it went on in, and the failure context. */
  handoff?: { to: string; contextFile: string }
}

const ID = /^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$/
/** What may name a file in the chat records' folder: no separators, no dots. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/

/** Where chat records live: `agent.sessionsDir`, else `.mycelium/sessions/` beside the config (config/state-roots.ts). */
export function chatRecordsDir(loaded: StateConfig): string {
  return projectState(loaded).sessionsDir.path
}

/**
 * Where a config's chats are recorded: `chatRecordsDir` beside the config
 * file; with no config file (myc started in any folder), nowhere, so that
 * myc writes no `.mycelium/` into a folder that is not a project.
 */
export function recordedChatsDir(loaded: StateConfig): string | undefined {
  return loaded.file === undefined ? undefined : chatRecordsDir(loaded)
}

/** Why a chat record cannot be found or written when there is no config file (said as people say it: sessions). */
export const NOT_RECORDED =
  'there is no config file here, so sessions are not recorded (run `myc init` to make this folder a project, or give --config)'

/** Appends a chat record's entries as they happen: a crash loses at most the turn in progress. Without a folder (no config file), records nothing. */
export class ChatRecorder {
  /** The chat record's file, or `(not recorded)`. */
  readonly file: string

  constructor(
    readonly dir: string | undefined,
    readonly id: string,
  ) {
    if (dir !== undefined) mkdirSync(dir, { recursive: true })
    this.file = dir === undefined ? '(not recorded)' : path.join(dir, `${id}.jsonl`)
  }

  /** A new chat id: when it started, and a random tail. */
  static newId(now = new Date()): string {
    const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
    return `${stamp}-${randomBytes(3).toString('hex')}`
  }

  append(...entries: ChatEntry[]): void {
    if (this.dir !== undefined) appendFileSync(this.file, entries.map((e) => `${JSON.stringify(e)}\n`).join(''))
  }
}

/** Finds a chat record by id or saved name. */
function chatRecordFile(dir: string, idOrName: string): string {
  if (SAFE_ID.test(idOrName)) {
    const file = path.join(dir, `${idOrName}.jsonl`)
    try {
      if (statSync(file).isFile()) return file
    } catch {
      if (ID.test(idOrName))
        throw new MycError('usage', `no session ${idOrName} in ${dir} (\`myc sessions list\` shows them)`)
    }
  }
  const byName = listChatRecords(dir).find((s) => s.name === idOrName)
  if (!byName)
    throw new MycError('usage', `no session named "${idOrName}" in ${dir} (\`myc sessions list\` shows them)`)
  return byName.file
}

/**
 * Reads a chat record. A torn last line (a crash mid-write) is ignored; a
 * bad line anywhere else is an error naming the file and the line.
 */
export function loadChatRecord(dir: string | undefined, idOrName: string): ChatRecord {
  if (dir === undefined) throw new MycError('usage', `no session ${idOrName}: ${NOT_RECORDED}`)
  return loadChatRecordFile(chatRecordFile(dir, idOrName))
}

function loadChatRecordFile(file: string): ChatRecord {
  const lines = readFileSync(file, 'utf8').split('\n')
  let meta: ChatRecord['meta'] | undefined
  const loaded: Omit<ChatRecord, 'meta' | 'id' | 'file'> = {
    messages: [],
    activeSkills: [],
    turns: 0,
    tasks: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
  }
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue
    let raw: unknown
    try {
      raw = JSON.parse(line)
    } catch {
      // Only the last line may be torn.
      if (lines.slice(i + 1).every((l) => l.trim() === '')) break
      throw new MycError(
        'usage',
        `${file}:${i + 1}: not a JSON record (the session file is damaged; \`myc sessions rm\` removes it)`,
      )
    }
    const parsed = v.safeParse(ChatEntrySchema, raw)
    if (!parsed.success)
      throw new MycError('usage', `${file}:${i + 1}: ${parsed.issues[0].message} (not a session record)`)
    const r = parsed.output
    if (r.type === 'meta') meta = r
    else if (r.type === 'message') {
      loaded.messages.push(r.message as BetaMessageParam)
      if (r.message.role === 'assistant') loaded.turns++
      else if (typeof r.message.content === 'string') {
        loaded.tasks++
        loaded.firstTask ??= r.message.content.trim().split('\n')[0]
      }
    } else if (r.type === 'skills') loaded.activeSkills = r.active
    else if (r.type === 'usage') {
      loaded.usage.inputTokens += r.inputTokens
      loaded.usage.outputTokens += r.outputTokens
      if (r.costUsd !== undefined)
        loaded.usage.costUsd = Math.round(((loaded.usage.costUsd ?? 0) + r.costUsd) * 1e6) / 1e6
    } else if (r.type === 'compressed')
      loaded.messages = [...summaryPair(r.summary), ...loaded.messages.slice(loaded.messages.length - r.kept)]
    else if (r.type === 'handoff') loaded.handoff = { to: r.to, contextFile: r.contextFile }
    else if (r.type === 'cleared') {
      loaded.messages = []
      loaded.turns = 0
      loaded.tasks = 0
    } else loaded.name = r.name
  }
  if (!meta) throw new MycError('usage', `${file}: no meta record (not a session file)`)
  return { id: meta.id, file, meta, ...loaded }
}

/** Every chat record in the folder, newest first. Files that do not load are skipped. */
export function listChatRecords(dir: string | undefined): ChatRecord[] {
  let names: string[]
  if (dir === undefined) return []
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.jsonl'))
  } catch {
    return []
  }
  const out: ChatRecord[] = []
  for (const n of names) {
    try {
      out.push(loadChatRecordFile(path.join(dir, n)))
    } catch {
      // A damaged file is not a chat record to list.
    }
  }
  return out.sort((a, b) => (a.meta.created < b.meta.created ? 1 : -1))
}

export function removeChatRecord(dir: string, idOrName: string): string {
  const file = chatRecordFile(dir, idOrName)
  rmSync(file)
  return file
}

/** The first line of a /compress summary's user message: it stands for turns, it is not one. */
const SUMMARY_OPENING = '(The earlier part of this conversation, summarised:)'

/** How a compressed stretch of conversation reads to the model: the summary, acknowledged. */
export function summaryPair(summary: string): BetaMessageParam[] {
  return [
    { role: 'user', content: `${SUMMARY_OPENING}\n${summary}` },
    { role: 'assistant', content: 'Understood; I will go on from there.' },
  ]
}

/**
 * Where the conversation can be cut so that the last `keepTurns` turns stay
 * whole: the index of the user message (plain text, not tool results) that
 * starts the first kept turn. A tool_use is never separated from its result.
 */
export function turnStarts(messages: readonly BetaMessageParam[]): number[] {
  // A /compress summary stands for earlier turns: it goes with the first turn after it (a fork at N keeps it and N turns).
  return messages.flatMap((m, i) =>
    m.role === 'user' && typeof m.content === 'string' && !(i === 0 && m.content.startsWith(SUMMARY_OPENING))
      ? [i]
      : [],
  )
}

/** The first `turns` turns of a conversation (a fork point). */
export function firstTurns(messages: readonly BetaMessageParam[], turns: number): BetaMessageParam[] {
  const starts = turnStarts(messages)
  return turns >= starts.length ? [...messages] : messages.slice(0, starts[turns])
}

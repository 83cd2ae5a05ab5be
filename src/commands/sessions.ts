import { defineCommand } from 'citty'
import { commandIO, type CommandIO } from '../command-io.js'
import { loadConfig } from '../config/load.js'
import { terminalText } from '../terminal-text.js'
import { countOf } from '../words.js'
import { commonArgs, jsonArgs, printJson, printResult } from './_shared.js'

async function dirOf(io: CommandIO, configPath: string | undefined): Promise<string> {
  const { chatRecordsDir } = await import('../agent/chat-store.js')
  const loaded = await loadConfig({ configPath, cwd: io.cwd, env: io.env })
  return chatRecordsDir(loaded)
}

/**
 * One line of `myc sessions list` (each session people see is a chat record,
 * agent/chat-store.ts): id, start (UTC), mode, the model's turns (as
 * session_end counts them), name, the first task.
 */
function listLine(s: {
  id: string
  name: string | null
  mode: string
  created: string
  turns: number
  firstTask: string | null
}): string {
  const head = `${s.id}  ${s.created.slice(0, 16).replace('T', ' ')}  ${s.mode.padEnd(8)} ${String(s.turns).padStart(3)} ${s.turns === 1 ? 'turn ' : 'turns'}  ${s.name ? `${s.name}  ` : ''}`
  const task = terminalText(s.firstTask ?? '')
  const room = Math.max(20, 100 - head.length)
  return `${head}${task.length > room ? `${task.slice(0, room - 1)}…` : task}`.trimEnd()
}

const list = defineCommand({
  meta: { name: 'list', description: 'The recorded sessions, newest first' },
  args: { ...commonArgs, ...jsonArgs },
  async run({ args, data }) {
    const io = commandIO(data)
    const { listChatRecords } = await import('../agent/chat-store.js')
    const records = listChatRecords(await dirOf(io, args.config)).map((s) => ({
      id: s.id,
      name: s.name ?? null,
      mode: s.meta.mode,
      role: s.meta.role,
      model: s.meta.model,
      created: s.meta.created,
      turns: s.turns,
      tasks: s.tasks,
      firstTask: s.firstTask ?? null,
      messages: s.messages.length,
      activeSkills: s.activeSkills,
      usage: s.usage,
      file: s.file,
    }))
    if (args.json) printJson(io, { ok: true, sessions: records })
    else printResult(io, records.map(listLine).join('\n') || 'No sessions.')
    return 0
  },
})

/** A chat record (a session, as people see it), by id or saved name. */
const idArg = {
  id: {
    type: 'positional',
    required: true,
    description: 'Session id or saved name (`myc sessions list` shows them)',
    valueHint: 'id',
  },
} as const

const show = defineCommand({
  meta: { name: 'show', description: 'One session: its turns as text' },
  args: {
    ...commonArgs,
    ...jsonArgs,
    ...idArg,
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const { loadChatRecord } = await import('../agent/chat-store.js')
    const s = loadChatRecord(await dirOf(io, args.config), String(args.id))
    if (args.json) {
      printJson(io, {
        ok: true,
        id: s.id,
        name: s.name ?? null,
        meta: s.meta,
        activeSkills: s.activeSkills,
        usage: s.usage,
        messages: s.messages,
      })
      return 0
    }
    const text = (content: unknown): string =>
      typeof content === 'string'
        ? content
        : (content as Array<{ type: string; text?: string; name?: string; input?: unknown }>)
            .map((b) =>
              b.type === 'text'
                ? b.text
                : b.type === 'tool_use'
                  ? `[tool ${b.name} ${JSON.stringify(b.input)}]`
                  : b.type === 'tool_result'
                    ? '[tool result]'
                    : `[${b.type}]`,
            )
            .join('\n')
    printResult(
      io,
      [
        `session ${s.id}${s.name ? ` (${s.name})` : ''} · ${s.meta.mode} · role ${s.meta.role ?? '-'} · ${countOf(s.turns, 'turn')}`,
        ...s.messages.map((m) => `${m.role}: ${text(m.content)}`),
      ].join('\n\n'),
    )
    return 0
  },
})

const rm = defineCommand({
  meta: { name: 'rm', description: 'Remove a recorded session' },
  args: {
    ...commonArgs,
    ...idArg,
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const { removeChatRecord } = await import('../agent/chat-store.js')
    printResult(io, `removed ${removeChatRecord(await dirOf(io, args.config), String(args.id))}`)
    return 0
  },
})

const exportCommand = defineCommand({
  meta: { name: 'export', description: 'A session as Markdown, JSON or one self-contained HTML file, on stdout' },
  args: {
    ...commonArgs,
    ...idArg,
    format: { type: 'string', description: 'md (default), json or html', valueHint: 'md|json|html' },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const [{ loadChatRecord }, { exportChatRecord, EXPORT_FORMATS }, { MycError }] = await Promise.all([
      import('../agent/chat-store.js'),
      import('../agent/chat-export.js'),
      import('../errors.js'),
    ])
    const format = (args.format ?? 'md') as 'md' | 'json' | 'html'
    if (!EXPORT_FORMATS.includes(format))
      throw new MycError('usage', `--format takes md, json or html, not "${args.format}"`)
    io.stdout.write(await exportChatRecord(loadChatRecord(await dirOf(io, args.config), String(args.id)), format))
    return 0
  },
})

export default defineCommand({
  meta: { name: 'sessions', description: 'Recorded agent sessions: list, show, export, rm' },
  subCommands: { list, show, export: exportCommand, rm },
})

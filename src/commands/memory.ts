import { defineCommand } from 'citty'
import { commandIO, type CommandIO } from '../command-io.js'
import type { MemoryStore } from '../memory/memory-store.js'
import type { AuditSink } from '../audit.js'
import { terminalText } from '../terminal-text.js'
import { commonArgs, jsonArgs, printJson, printResult } from './_shared.js'

/**
 * The config's role memory, opened as the operator: every role, no policy
 * (said once on stderr). Never starts children.
 */
async function openStore(
  io: CommandIO,
  configPath: string | undefined,
): Promise<{ store: MemoryStore; audit: AuditSink }> {
  const [{ loadConfig }, { openMemoryStore }, { fileAuditSink }, { projectState }] = await Promise.all([
    import('../config/load.js'),
    import('../principal/policy-mode.js'),
    import('../audit.js'),
    import('../config/state-roots.js'),
  ])
  const loaded = await loadConfig({ configPath, cwd: io.cwd, env: io.env })
  const state = projectState(loaded)
  const audit = fileAuditSink(state.auditFile?.path, (error) =>
    io.stderr.write(`${terminalText(`myc: audit log: ${String(error)}`)}\n`),
  )
  io.stderr.write(
    `${terminalText(`myc memory: acting as operator (every role's memory, no role policy) in ${state.memoryDir.path}`)}\n`,
  )
  return { store: openMemoryStore(loaded, audit), audit }
}

async function checkedRole(role: string, flag: string): Promise<string> {
  const [{ isRoleName, ROLE_NAME_RULE }, { usageError }] = await Promise.all([
    import('../config/role-name.js'),
    import('../errors.js'),
  ])
  if (!isRoleName(role)) throw usageError(`${flag}: "${role}" is not a role name: ${ROLE_NAME_RULE}`)
  return role
}

async function rolesOf(store: MemoryStore, role: string | undefined): Promise<string[]> {
  return role === undefined ? store.roles() : [await checkedRole(role, '--role')]
}

async function checkedType(
  type: string | undefined,
): Promise<import('../memory/memory-file.js').MemoryType | undefined> {
  if (type === undefined) return undefined
  const [{ MEMORY_TYPES }, { usageError }] = await Promise.all([
    import('../memory/memory-file.js'),
    import('../errors.js'),
  ])
  if (!(MEMORY_TYPES as readonly string[]).includes(type))
    throw usageError(`--type takes ${MEMORY_TYPES.join(', ')}, not "${type}"`)
  return type as import('../memory/memory-file.js').MemoryType
}

function entryText(e: import('../memory/memory-file.js').MemoryEntry): string {
  return `[${e.id}] ${e.role} · ${e.type}${e.tags.length ? ` · tags: ${e.tags.join(', ')}` : ''} · ${e.createdAt}\n${e.content.replace(/^/gm, '  ')}`
}

const roleArg = { role: { type: 'string', description: 'Only this role', valueHint: 'role' } } as const

const list = defineCommand({
  meta: { name: 'list', description: 'Each role with memory: entries per type, the newest, the file' },
  args: { ...commonArgs, ...jsonArgs, ...roleArg },
  async run({ args, data }) {
    const io = commandIO(data)
    const { store } = await openStore(io, args.config)
    const { summarize } = await import('../memory/memory-tools.js')
    const memories = await Promise.all((await rolesOf(store, args.role)).map((r) => store.read(r)))
    const rows = memories
      .filter((m) => m.exists)
      .map((m) => ({
        ...(summarize(m.entries)[0] ?? { role: m.role, total: 0, byType: {}, newest: null }),
        file: m.file,
        bytes: m.bytes,
        problems: m.problems.length,
      }))
    if (args.json) printJson(io, { ok: true, roles: rows })
    else
      printResult(
        io,
        rows
          .map(
            (r) =>
              `${r.role.padEnd(16)} ${String(r.total).padStart(4)} entries  ${Object.entries(r.byType)
                .map(([t, n]) => `${t} ${n}`)
                .join(
                  ', ',
                )}${r.newest ? `  newest ${r.newest}` : ''}${r.problems ? `  (${r.problems} problems: myc memory lint)` : ''}`,
          )
          .join('\n') || 'No role has memory yet.',
      )
    return 0
  },
})

const show = defineCommand({
  meta: { name: 'show', description: "One role's entries, newest first" },
  args: {
    ...commonArgs,
    ...jsonArgs,
    role: { type: 'positional', required: true, description: 'The role (`myc roles` lists them)', valueHint: 'role' },
    type: { type: 'string', description: 'Only entries of this type', valueHint: 'preference|fact|decision|note' },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const { store } = await openStore(io, args.config)
    const { matchEntries } = await import('../memory/memory-store.js')
    const memory = await store.read(await checkedRole(String(args.role), 'ROLE'))
    const type = await checkedType(args.type)
    const entries = matchEntries(memory.entries, type ? { type } : {})
    if (args.json) printJson(io, { ok: true, role: memory.role, file: memory.file, entries, problems: memory.problems })
    else
      printResult(
        io,
        entries.map(entryText).join('\n\n') || `Role ${memory.role} has no memory${type ? ` of type ${type}` : ''}.`,
      )
    return 0
  },
})

const search = defineCommand({
  meta: { name: 'search', description: 'Entries whose words begin with every word of the query, newest first' },
  args: {
    ...commonArgs,
    ...jsonArgs,
    ...roleArg,
    query: { type: 'positional', required: true, description: 'Words to find', valueHint: 'query' },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const { store } = await openStore(io, args.config)
    const entries = await store.recall(await rolesOf(store, args.role), { query: String(args.query) })
    if (args.json) printJson(io, { ok: true, entries })
    else printResult(io, entries.map(entryText).join('\n\n') || 'No memories found.')
    return 0
  },
})

const forget = defineCommand({
  meta: { name: 'forget', description: 'Removes one entry (recorded in the audit log)' },
  args: {
    ...commonArgs,
    role: { type: 'positional', required: true, description: 'The role (`myc roles` lists them)', valueHint: 'role' },
    id: {
      type: 'positional',
      required: true,
      description: 'The entry id (mem_…; `myc memory show ROLE` shows them)',
      valueHint: 'id',
    },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const { store, audit } = await openStore(io, args.config)
    const role = await checkedRole(String(args.role), 'ROLE')
    const removed = await store.forget(role, String(args.id), 'operator')
    await audit.flush()
    if (!removed)
      throw (await import('../errors.js')).usageError(
        `role ${role} has no memory entry ${args.id} (see the ids with: myc memory show ${role})`,
      )
    printResult(io, `forgot ${args.id} (role ${role})`)
    return 0
  },
})

const exportCommand = defineCommand({
  meta: { name: 'export', description: 'Memory as Markdown (the files) or JSON (every entry), on stdout' },
  args: {
    ...commonArgs,
    ...roleArg,
    format: { type: 'string', description: 'md or json', valueHint: 'md|json', required: true },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const { store } = await openStore(io, args.config)
    if (args.format !== 'md' && args.format !== 'json')
      throw (await import('../errors.js')).usageError(`--format takes md or json, not "${args.format}"`)
    const memories = (await Promise.all((await rolesOf(store, args.role)).map((r) => store.read(r)))).filter(
      (m) => m.exists,
    )
    if (args.format === 'json') {
      printJson(io, { ok: true, roles: memories.map((m) => ({ role: m.role, entries: m.entries, unparsed: m.kept })) })
      return 0
    }
    const { renderMemoryFile } = await import('../memory/memory-file.js')
    const now = new Date().toISOString()
    const files = memories.map((m) => renderMemoryFile(m.role, m.entries, m.kept, now)).join('\n')
    // The files exactly into a pipe or a file; on a terminal, what a model saved cannot act on it (control characters shown as escapes).
    io.stdout.write(io.stdout.isTTY === true ? terminalText(files) : files)
    return 0
  },
})

const lint = defineCommand({
  meta: { name: 'lint', description: 'Checks every memory file; exits 3 when one has problems (nothing is rewritten)' },
  args: { ...commonArgs, ...jsonArgs },
  async run({ args, data }) {
    const io = commandIO(data)
    const { store } = await openStore(io, args.config)
    const [{ readdir }, path, { isRoleName, ROLE_NAME_RULE }] = await Promise.all([
      import('node:fs/promises'),
      import('node:path'),
      import('../config/role-name.js'),
    ])
    const problems: Array<{ file: string; line?: number; message: string }> = []
    const names = await readdir(store.dir).catch(() => [] as string[])
    for (const name of names.filter((n) => n.endsWith('.memory.md')).sort()) {
      const role = name.slice(0, -'.memory.md'.length)
      const file = path.join(store.dir, name)
      if (!isRoleName(role)) {
        problems.push({
          file,
          message: `"${role}" is not a role name (${ROLE_NAME_RULE}), so this file is never read; rename it`,
        })
        continue
      }
      for (const p of (await store.read(role)).problems) problems.push({ file, line: p.line, message: p.message })
    }
    if (args.json) printJson(io, { ok: problems.length === 0, problems })
    else
      printResult(
        io,
        problems.map((p) => `${p.file}${p.line ? `:${p.line}` : ''}: ${p.message}`).join('\n') ||
          'Memory files are fine.',
      )
    return problems.length === 0 ? 0 : 3
  },
})

export default defineCommand({
  meta: { name: 'memory', description: 'Role memory, as the operator: list, show, search, forget, export, lint' },
  subCommands: { list, show, search, forget, export: exportCommand, lint },
})

import { renderUsage, runCommand, type CommandDef } from 'citty'
import { ExitCode, MycError } from './errors.js'
import { createLogger } from './logger.js'
import { commonArgs } from './commands/_shared.js'
import { forStream, stripAnsi } from './terminal-colour.js'
import { version } from './version.js'

type Loader = () => Promise<CommandDef<any>>
/** Subcommands, each loaded only when it runs so start-up stays fast. */
const commands: Record<string, Loader> = Object.assign(Object.create(null) as Record<string, Loader>, {
  serve: () => import('./commands/serve.js').then((m) => m.default),
  status: () => import('./commands/status.js').then((m) => m.default),
  tools: () => import('./commands/tools.js').then((m) => m.default),
  roles: () => import('./commands/roles.js').then((m) => m.default),
  skills: () => import('./commands/skills.js').then((m) => m.default),
  skill: () => import('./commands/skill.js').then((m) => m.default),
  policy: () => import('./commands/policy.js').then((m) => m.default),
  explain: () => import('./commands/explain.js').then((m) => m.default),
  preview: () => import('./commands/preview.js').then((m) => m.default),
  init: () => import('./commands/init.js').then((m) => m.default),
  sandbox: () => import('./commands/sandbox.js').then((m) => m.default),
  doctor: () => import('./commands/doctor.js').then((m) => m.default),
  run: () => import('./commands/run.js').then((m) => m.default),
  adhoc: () => import('./commands/adhoc.js').then((m) => m.default),
  workflow: () => import('./commands/workflow.js').then((m) => m.default),
  chat: () => import('./commands/chat.js').then((m) => m.default),
  sessions: () => import('./commands/sessions.js').then((m) => m.default),
  memory: () => import('./commands/memory.js').then((m) => m.default),
})

const main: CommandDef<typeof commonArgs> = {
  meta: { name: 'myc', version, description: 'Mycelium: one MCP server in front of many, filtered by role and skill' },
  args: commonArgs,
  subCommands: commands,
}

/** Flags that take a value, so the first bare word after them is not a command. */
const valueFlags = new Set(['--config', '--role', '--skills', '--http', '--model', '--trust', '--executor', '--template', '--context', '--mode', '--on-failure', '--max-turns', '--approve', '--resume', '--format', '--type'])

function findCommandIndex(argv: string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') return -1
    if (arg.startsWith('-')) {
      if (!arg.includes('=') && valueFlags.has(arg)) i++
      continue
    }
    return i
  }
  return -1
}

/**
 * Runs `myc` with the given arguments and returns the exit code. The only
 * place that maps errors to exit codes (DESIGN.md section 3).
 */
export async function runCli(argv: string[], stdinIsTTY = process.stdin.isTTY === true): Promise<number> {
  // Words after `--` belong to a command myc runs (`myc sandbox exec -- cmd --help`), not to myc.
  const dashes = argv.indexOf('--')
  const own = dashes === -1 ? argv : argv.slice(0, dashes)
  const wantsJson = own.includes('--json')
  const verbose = own.includes('--verbose')
  const logger = createLogger({ verbose })
  try {
    if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
      process.stdout.write(`${version}\n`)
      return ExitCode.ok
    }
    const index = findCommandIndex(argv)
    const name = index === -1 ? undefined : argv[index]!
    if (own.includes('--help') || own.includes('-h')) {
      if (name === undefined || !Object.hasOwn(commands, name)) {
        writeUsage(await renderUsage(main))
        return ExitCode.ok
      }
      // The usage of the deepest command named (`myc skills lint --help`).
      const rest = own.filter((a) => a !== '--help' && a !== '-h')
      const top = await commands[name]!()
      const [leaf, , path] = await resolveLeaf(top, rest.slice(rest.indexOf(name) + 1), name).catch(() => [top, [], name] as const)
      const meta = typeof leaf.meta === 'function' ? await leaf.meta() : await leaf.meta
      writeUsage(await renderUsage({ ...leaf, meta: { ...meta, name: path } }, main))
      return ExitCode.ok
    }
    if (name === undefined) {
      // What MCP client configs run: `myc --config F` with a pipe on stdin. On a terminal: a chat.
      return await runSub(stdinIsTTY ? 'chat' : 'serve', argv)
    }
    if (!Object.hasOwn(commands, name)) {
      const known = Object.keys(commands).join(', ')
      throw new MycError('USAGE', `Unknown command "${name}". Commands: ${known}. Run \`myc --help\` for usage.`)
    }
    return await runSub(name, [...argv.slice(0, index), ...argv.slice(index + 1)])
  } catch (error) {
    return reportError(error, { json: wantsJson, verbose, logger })
  }
}

/** Usage text on stdout; citty colours it whatever stdout is, so the codes go when stdout may not have colour. */
function writeUsage(usage: string): void {
  process.stdout.write(`${forStream(process.stdout, usage)}\n`)
}

async function runSub(name: string, rawArgs: string[]): Promise<number> {
  const [leaf, args] = await resolveLeaf(await commands[name]!(), rawArgs, name)
  const { result } = await runCommand(leaf, { rawArgs: args })
  return typeof result === 'number' ? result : ExitCode.ok
}

/**
 * Walks nested subcommands (`skills lint`, `policy check`) down to the one
 * that runs, so its return value (the exit code) reaches us: citty returns
 * only the top command's result.
 */
async function resolveLeaf(cmd: CommandDef<any>, rawArgs: string[], path: string): Promise<[CommandDef<any>, string[], string]> {
  const subs = (typeof cmd.subCommands === 'function' ? await cmd.subCommands() : await cmd.subCommands) as Record<string, CommandDef<any> | (() => Promise<CommandDef<any>>)> | undefined
  if (!subs) return [cmd, rawArgs, path]
  const index = findCommandIndex(rawArgs)
  const name = index === -1 ? (cmd.default as string | undefined) : rawArgs[index]
  if (name === undefined || !Object.hasOwn(subs, name)) {
    const known = Object.keys(subs).join(', ')
    throw new MycError('USAGE', name === undefined ? `\`myc ${path}\` needs a subcommand: ${known}` : `Unknown command "${path} ${name}". Subcommands: ${known}`)
  }
  const sub = subs[name]!
  const resolved = typeof sub === 'function' ? await sub() : sub
  return resolveLeaf(resolved, index === -1 ? rawArgs : [...rawArgs.slice(0, index), ...rawArgs.slice(index + 1)], `${path} ${name}`)
}

function reportError(error: unknown, opts: { json: boolean; verbose: boolean; logger: ReturnType<typeof createLogger> }): number {
  const known = error instanceof MycError
  const isCittyUsage = !known && error instanceof Error && error.name === 'CLIError'
  const code = known ? error.code : isCittyUsage ? 'USAGE' : 'RUNTIME'
  const exitCode = known ? error.exitCode : isCittyUsage ? ExitCode.usage : ExitCode.runtime
  // citty colours parts of its messages (argument names); JSON is data and never carries escape codes.
  const message = error instanceof Error ? error.message : String(error)
  if (opts.json) process.stdout.write(`${JSON.stringify({ ok: false, error: { code, message: stripAnsi(message) } })}\n`)
  else if (opts.verbose && error instanceof Error) opts.logger.error(error)
  else opts.logger.error(message)
  return exitCode
}

/** Runs the CLI on this process's arguments and sets its exit code (build/myc.cjs calls it; so does a direct run). */
export function runMain(): void {
  runCli(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code
    },
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`)
      process.exitCode = ExitCode.runtime
    },
  )
}

// Run when executed (the bundle, the executable, or `tsx src/cli.ts`), not when imported (tests, the build/myc.cjs launcher, which calls runMain).
const invokedDirectly = typeof require !== 'undefined' ? require.main === module : process.argv[1]?.endsWith('cli.ts')
if (invokedDirectly) runMain()

import { renderUsage, runCommand, type ArgsDef, type CommandDef } from 'citty'
import {
  argsOf,
  checkWords,
  FlagError,
  findCommandWord,
  isFlagWord,
  loadSubCommand,
  nearest,
  subCommandsOf,
} from './cli-args.js'
import { processIO, type CommandData, type CommandIO } from './command-io.js'
import { ExitCode, MycError } from './errors.js'
import { cleanLogValue } from './logger.js'
import { commonArgs, eraArgs } from './commands/_shared.js'
import { randomUUID } from 'node:crypto'
import { forStream, stripAnsi, useColour } from './terminal-colour.js'
import { jsonText, terminalText } from './terminal-text.js'
import { fitUsage } from './usage-text.js'
import { version } from './version.js'
import { RUNNER_SWITCH } from './code/protocol.js'

/** myc's own flags: accepted with every command, before or after it; given to a command only when it defines them. */
const globalArgs = { ...commonArgs, ...eraArgs }

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
  tokens: () => import('./commands/tokens.js').then((m) => m.default),
  init: () => import('./commands/init.js').then((m) => m.default),
  sandbox: () => import('./commands/sandbox.js').then((m) => m.default),
  doctor: () => import('./commands/doctor.js').then((m) => m.default),
  pin: () => import('./commands/pin.js').then((m) => m.default),
  run: () => import('./commands/run.js').then((m) => m.default),
  adhoc: () => import('./commands/adhoc.js').then((m) => m.default),
  workflow: () => import('./commands/workflow.js').then((m) => m.default),
  chat: () => import('./commands/chat.js').then((m) => m.default),
  sessions: () => import('./commands/sessions.js').then((m) => m.default),
  memory: () => import('./commands/memory.js').then((m) => m.default),
  auth: () => import('./commands/auth.js').then((m) => m.default),
  secrets: () => import('./commands/secrets.js').then((m) => m.default),
  search: () => import('./commands/search.js').then((m) => m.default),
  add: () => import('./commands/add.js').then((m) => m.default),
})

/** `myc` itself: its args are the global flags, accepted before or after any command. */
const main: CommandDef<typeof globalArgs> = {
  meta: { name: 'myc', version, description: 'Mycelium: one MCP server in front of many, filtered by role and skill' },
  args: globalArgs,
  subCommands: commands,
}

/** The whole command tree, as citty sees it (tests walk it). */
export const mycCommand: CommandDef<any> = main

/** The command a command line names (its words after `myc`), with those words minus the command's path. */
interface Located {
  leaf: CommandDef<any>
  /** `skills lint`. */
  path: string
  words: string[]
}

/**
 * Finds the command `argv` names, from citty's command tree: the first bare
 * word (not a flag's value) is the command; with none, myc serves (a pipe
 * on stdin: what MCP client configs run) or chats (a terminal).
 */
async function locate(argv: string[], stdinIsTTY: boolean): Promise<Located> {
  const globals = await argsOf(main)
  const fallback = stdinIsTTY ? 'chat' : 'serve'
  // A flag before the command that is not global may be the default command's (`myc --config F --role guest` serves as guest).
  const index = await findCommandWord(argv, [globals], async () => argsOf(await commands[fallback]!()))
  if (index === -1) return { leaf: await commands[fallback]!(), path: fallback, words: argv }
  const name = argv[index]!
  if (!Object.hasOwn(commands, name)) {
    // `myc --config F --sklls a`: a typo of a flag of the default command, not of a command, is what to report.
    const prefix = argv.slice(0, index)
    if (prefix.some(isFlagWord)) {
      try {
        checkWords(prefix, { path: fallback, args: await argsOf(await commands[fallback]!()), globals })
      } catch (error) {
        if (error instanceof FlagError && error.suggestion !== undefined) throw error
      }
    }
    throw unknownCommand(name)
  }
  return descend(await commands[name]!(), name, without(argv, index), globals)
}

function unknownCommand(name: string): MycError {
  const known = Object.keys(commands)
  const guess = nearest(name, [...known, 'help'])
  return new MycError(
    'usage',
    `Unknown command "${name}"${guess ? ` (did you mean ${guess}?)` : ''}. Commands: ${known.join(', ')}. Run \`myc help [COMMAND]\` or \`myc --help\` for usage.`,
  )
}

/** Walks nested subcommands (`skills lint`, `memory show`) down to the one that runs. */
async function descend(cmd: CommandDef<any>, path: string, words: string[], globals: ArgsDef): Promise<Located> {
  const subs = await subCommandsOf(cmd)
  if (!subs) return { leaf: cmd, path, words }
  const args = await argsOf(cmd)
  const known = Object.keys(subs)
  const index = await findCommandWord(words, [args, globals])
  if (index === -1) {
    const fallback = typeof cmd.default === 'function' ? await cmd.default() : await cmd.default
    if (fallback === undefined || !Object.hasOwn(subs, fallback)) {
      // A wrong flag is named before the missing subcommand (`myc memory --jsno`).
      checkWords(words, { path, args, globals })
      throw new MycError('usage', `\`myc ${path}\` needs a subcommand: ${known.join(', ')}`)
    }
    return descend(await loadSubCommand(subs, fallback), `${path} ${fallback}`, words, globals)
  }
  const name = words[index]!
  if (!Object.hasOwn(subs, name)) {
    const guess = nearest(name, known)
    throw new MycError(
      'usage',
      `Unknown command "${path} ${name}"${guess ? ` (did you mean ${path} ${guess}?)` : ''}. Subcommands: ${known.join(', ')}`,
    )
  }
  return descend(await loadSubCommand(subs, name), `${path} ${name}`, without(words, index), globals)
}

function without(words: readonly string[], index: number): string[] {
  return [...words.slice(0, index), ...words.slice(index + 1)]
}

/**
 * Runs `myc` with the given arguments and returns the exit code. The only
 * place that maps errors to exit codes (README.md, Commands). Every command
 * reads and writes through `io` (the process's own for the program; a
 * test's own in its process: tests/helpers/cli.ts).
 */
export async function runCli(argv: string[], io: CommandIO = processIO()): Promise<number> {
  const stdinIsTTY = io.stdin.isTTY === true
  // Words after `--` belong to a command myc runs (`myc sandbox exec -- cmd --help`), not to myc.
  const dashes = argv.indexOf('--')
  const own = dashes === -1 ? argv : argv.slice(0, dashes)
  let wantsJson = own.includes('--json') || own.includes('--json=true')
  let located: string | undefined
  const verbose = own.includes('--verbose')
  try {
    if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
      io.stdout.write(`${version}\n`)
      return ExitCode.ok
    }
    if (own.includes('--help') || own.includes('-h')) {
      writeUsage(
        io,
        await usageFor([...own.filter((a) => a !== '--help' && a !== '-h'), ...argv.slice(own.length)], stdinIsTTY),
      )
      return ExitCode.ok
    }
    // `myc help [COMMAND…]` is `myc [COMMAND…] --help`.
    const first = await findCommandWord(own, [await argsOf(main)])
    if (first !== -1 && own[first] === 'help') {
      const rest = without(own, first)
      const named = rest.find((w) => !isFlagWord(w))
      if (named !== undefined && !Object.hasOwn(commands, named)) throw unknownCommand(named)
      writeUsage(io, await usageFor(rest, stdinIsTTY))
      return ExitCode.ok
    }
    const { leaf, path, words } = await locate(argv, stdinIsTTY)
    located = path
    const args = await argsOf(leaf)
    // The JSON error document is for a command that prints JSON; any other reads its error as text.
    wantsJson &&= Object.hasOwn(args, 'json')
    const rawArgs = checkWords(words, { path, args, globals: await argsOf(main) })
    const data: CommandData = { io }
    const { result } = await runCommand(leaf, { rawArgs, data })
    return typeof result === 'number' ? result : ExitCode.ok
  } catch (error) {
    return reportError(error, { json: wantsJson, path: located, verbose, io })
  }
}

/** The usage of the deepest command `words` name (`myc skills lint --help`), else of myc. */
async function usageFor(words: string[], stdinIsTTY: boolean): Promise<string> {
  const fallback = stdinIsTTY ? 'chat' : 'serve'
  const index = await findCommandWord(words, [await argsOf(main)], async () => argsOf(await commands[fallback]!()))
  const name = index === -1 ? undefined : words[index]!
  // The list of every command (`serve|status|…`) is past 100 columns: COMMAND, listed under COMMANDS below.
  if (name === undefined || !Object.hasOwn(commands, name))
    return withExamples((await renderUsage(main)).replace(/(?:[a-z]+\|){4,}[a-z]+/, 'COMMAND'), '')
  const top = await commands[name]!()
  const { leaf, path } = await descend(top, name, without(words, index), await argsOf(main)).catch(() => ({
    leaf: top,
    path: name,
  }))
  const meta = typeof leaf.meta === 'function' ? await leaf.meta() : await leaf.meta
  return withExamples(await renderUsage({ ...leaf, meta: { ...meta, name: path } }, main), path)
}

/** citty's usage with the command's EXAMPLES section after it (src/commands/_examples.ts), its heading styled as citty styles its own. */
async function withExamples(usage: string, path: string): Promise<string> {
  const { examplesText } = await import('./commands/_examples.js')
  const examples = examplesText(path, (text) => `\u001b[4m\u001b[1m${text}\u001b[22m\u001b[24m`)
  return examples === undefined ? usage : `${usage.trimEnd()}\n\n${examples}\n`
}

/** Usage text on stdout, within 100 columns; citty colours it whatever stdout is, so the codes go when stdout may not have colour. */
function writeUsage(io: CommandIO, usage: string): void {
  io.stdout.write(`${forStream(io.stdout, fitUsage(usage), io.env)}\n`)
}

/** The codes of citty's CLIError (a flag or argument it refused); citty does not export the class, so its code tells it. */
const CITTY_USAGE_CODES = new Set<unknown>([
  'EARG',
  'E_DEFAULT_CONFLICT',
  'E_NO_COMMAND',
  'E_NO_VERSION',
  'E_UNKNOWN_COMMAND',
])

/** The commands whose `--json` output is the agent's event stream (JSON Lines), not one document. */
const EVENT_STREAM_COMMANDS = new Set(['run', 'workflow', 'adhoc'])

/**
 * The one error contract: with `--json`, `{"ok":false,"error":{"code","message","fix"?}}`
 * on stdout (for the agent's commands, an `error` event and a `session_end`,
 * so a reader of the stream always sees it end); and always one human line
 * on stderr.
 */
function reportError(
  error: unknown,
  opts: { json: boolean; path: string | undefined; verbose: boolean; io: CommandIO },
): number {
  const known = error instanceof MycError
  const isCittyUsage = !known && error instanceof Error && CITTY_USAGE_CODES.has((error as { code?: unknown }).code)
  const code = known ? error.code : isCittyUsage ? 'usage' : 'runtime'
  const exitCode = known ? error.exitCode : isCittyUsage ? ExitCode.usage : ExitCode.runtime
  // citty colours parts of its messages (argument names); JSON is data and never carries escape codes.
  const message = stripAnsi(error instanceof Error ? error.message : String(error))
  const fix = known ? error.fix : undefined
  if (opts.json && opts.path !== undefined && EVENT_STREAM_COMMANDS.has(opts.path))
    opts.io.stdout.write(streamEnd(code, message, exitCode))
  else if (opts.json)
    opts.io.stdout.write(`${jsonText({ ok: false, error: { code, message, ...(fix ? { fix } : {}) } })}\n`)
  writeErrorLine(
    opts.io,
    fix ? `${message} (fix: ${fix})` : message,
    opts.verbose && error instanceof Error ? error : undefined,
  )
  return exitCode
}

/**
 * The one error style of every command on stderr (docs/development.md, "Errors"):
 * `myc: <message>`, the prefix red where stderr has colour; the text cleaned
 * as a log line is (secrets of URLs, control characters). With --verbose,
 * the stack below it.
 */
function writeErrorLine(io: CommandIO, message: string, verbose: Error | undefined): void {
  const prefix = useColour(io.stderr, io.env) ? '\u001b[31mmyc:\u001b[39m' : 'myc:'
  const stack = verbose?.stack?.split('\n').slice(1).join('\n')
  io.stderr.write(
    `${prefix} ${cleanLogValue(message) as string}\n${stack ? `${cleanLogValue(stack) as string}\n` : ''}`,
  )
}

/** An `error` event and the `session_end` after it: a run that never started, in the stream's own shape. */
function streamEnd(code: string, message: string, exitCode: number): string {
  const stamp = { time: new Date().toISOString(), sessionId: randomUUID() }
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }
  return (
    [
      jsonText({ type: 'error', seq: 1, ...stamp, code, message }),
      jsonText({
        type: 'session_end',
        seq: 2,
        ...stamp,
        ok: false,
        reason: 'error',
        turns: 0,
        usage,
        durationMs: 0,
        text: '',
        exitCode,
        permissionDenials: [],
      }),
    ].join('\n') + '\n'
  )
}

/** Runs the CLI on this process's arguments and sets its exit code (build/myc.cjs calls it; so does a direct run). */
export function runMain(): void {
  // Code mode's runner is this same executable, started inside the sandbox with this switch (docs/code-mode.md).
  if (process.env[RUNNER_SWITCH] === '1') return void import('./code/runner.js').then((m) => m.runRunner())
  runCli(process.argv.slice(2), processIO()).then(
    (code) => {
      process.exitCode = code
    },
    (error: unknown) => {
      process.stderr.write(`myc: ${terminalText(String(error))}\n`)
      process.exitCode = ExitCode.runtime
    },
  )
}

// Run when executed (the bundle, the executable, or `tsx src/cli.ts`), not when imported (tests, the build/myc.cjs launcher, which calls runMain).
const invokedDirectly = typeof require !== 'undefined' ? require.main === module : process.argv[1]?.endsWith('cli.ts')
if (invokedDirectly) runMain()

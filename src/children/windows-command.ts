import path from 'node:path'

/**
 * How cmd.exe finds a command on Windows, and how a batch file (`.cmd`,
 * `.bat`) is started through it with its arguments intact. Pure: the
 * environment and a file check are passed in, so this runs (and is tested)
 * on any platform.
 */

/** A variable of a Windows environment: names are case-insensitive there (`Path`, `PATH`). */
export function windowsEnv(env: Record<string, string | undefined>, name: string): string | undefined {
  const upper = name.toUpperCase()
  for (const [key, value] of Object.entries(env)) if (key.toUpperCase() === upper && value !== undefined) return value
  return undefined
}

/** cmd.exe's list when PATHEXT is unset. */
const DEFAULT_PATHEXT = '.COM;.EXE;.BAT;.CMD'

/** The extensions of PATHEXT, in order, lower-cased (`.exe`). */
export function pathExtensions(pathExt: string | undefined): string[] {
  const list = (pathExt?.trim() ? pathExt : DEFAULT_PATHEXT)
    .split(';')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e.startsWith('.') && e.length > 1)
  return [...new Set(list)]
}

/** The folders of a Windows `Path`: empty entries dropped, quotes around an entry removed (`"C:\Program Files\x"`). */
export function pathFolders(pathValue: string | undefined): string[] {
  return (pathValue ?? '')
    .split(';')
    .map((d) => d.trim().replace(/^"(.*)"$/, '$1'))
    .filter(Boolean)
}

/** Whether a command names a file by path (`C:\x\srv`, `.\srv`, `tools/srv.cmd`) rather than a name to look up on Path. */
export function hasWindowsPath(command: string): boolean {
  return command.includes('\\') || command.includes('/') || /^[a-z]:/i.test(command)
}

function hasExtension(file: string): boolean {
  return path.win32.extname(file) !== ''
}

/** The files cmd.exe tries for one name in one folder: the name itself when it has an extension, then the name with each PATHEXT extension. */
function candidates(file: string, exts: readonly string[]): string[] {
  return [...(hasExtension(file) ? [file] : []), ...exts.map((ext) => file + ext)]
}

export interface WindowsLookup {
  env: Record<string, string | undefined>
  /** Whether a file (not a folder) is there. */
  isFile: (file: string) => boolean
  /** The folder a relative path is read from (the child's working folder). */
  cwd: string
}

/**
 * The file cmd.exe would run for `command`, or undefined. A path (absolute,
 * or relative to `cwd`) is tried as given and with each PATHEXT extension;
 * a bare name is looked for folder by folder along `Path`, the same way. A
 * name without an extension is never taken as it is (cmd.exe would not run
 * an extensionless file either: beside npm's `foo.cmd` lies a `foo` shell
 * script). cmd.exe's look in the current folder first is left out: a
 * child's command is never taken from wherever myc was started.
 */
export function findWindowsCommand(command: string, lookup: WindowsLookup): string | undefined {
  const exts = pathExtensions(windowsEnv(lookup.env, 'PATHEXT'))
  if (hasWindowsPath(command)) {
    const file = path.win32.resolve(lookup.cwd, command)
    return candidates(file, exts).find((f) => lookup.isFile(f))
  }
  for (const dir of pathFolders(windowsEnv(lookup.env, 'PATH'))) {
    const found = candidates(path.win32.join(dir, command), exts).find((f) => lookup.isFile(f))
    if (found) return found
  }
  return undefined
}

/** Files CreateProcess starts itself; anything else found on Path is started the way cmd.exe starts it, by cmd.exe. */
export function isWindowsExecutable(file: string): boolean {
  return /\.(exe|com)$/i.test(file)
}

/** cmd.exe's special characters, each escaped with `^` (the set cross-spawn escapes). */
const CMD_META = /[()[\]%!^"`<>&|;, *?]/g

/**
 * A command (the file's path) for a cmd.exe command line: every special
 * character, spaces included, escaped with `^` as cross-spawn does, and in
 * escaped quotes (`^"…^"`), which cmd.exe reads as the quoted path of the
 * command but not as the start of a quoted stretch. (cross-spawn leaves the
 * quotes out; Wine's cmd.exe then takes the whole line for the command when
 * the path has a space.)
 */
export function escapeCmdCommand(file: string): string {
  return `^"${file.replace(CMD_META, '^$&')}^"`
}

/**
 * One argument as the C runtime's argv parser (CommandLineToArgvW) reads it
 * back: in double quotes, a quote inside as `\"`, and each run of
 * backslashes before a quote (or before the closing quote) doubled.
 * (cross-spawn 7.0.6 does the same with a regex that doubles only one of
 * several backslashes: `a\\"b` and `x\\` lose one. This one keeps them all.)
 */
export function quoteArgv(arg: string): string {
  let out = '"'
  let backslashes = 0
  for (const ch of arg) {
    if (ch === '\\') {
      backslashes++
      continue
    }
    out += ch === '"' ? `${'\\'.repeat(backslashes * 2 + 1)}"` : `${'\\'.repeat(backslashes)}${ch}`
    backslashes = 0
  }
  return `${out}${'\\'.repeat(backslashes * 2)}"`
}

/**
 * One argument for a cmd.exe command line: quoted for argv, then every
 * special character escaped with `^` (the quotes too, so cmd.exe never
 * enters a quoted stretch and every `&`, `|`, `%` and `"` stays literal: a
 * `%NAME%` becomes `^%NAME^%`, which cmd.exe does not expand). `twice`
 * escapes a second time, for a batch file that hands its arguments on
 * (`%*`), where cmd.exe reads them once more.
 */
export function escapeCmdArgument(arg: string, twice: boolean): string {
  const once = quoteArgv(arg).replace(CMD_META, '^$&')
  return twice ? once.replace(CMD_META, '^$&') : once
}

/** A batch file started through cmd.exe: what to spawn, with `windowsVerbatimArguments` (the line is quoted already). */
export interface CmdInvocation {
  command: string
  args: string[]
  windowsVerbatimArguments: true
}

/**
 * How a file that CreateProcess cannot start (a `.cmd` or `.bat`, or another
 * PATHEXT type, which cmd.exe opens by its association) runs with its
 * arguments intact: `cmd.exe /d /s /c "<file> <args>"` (`/d`: no AutoRun
 * commands; `/s`: the outer quotes are removed and the rest taken as it
 * is), the file and each argument escaped as cross-spawn escapes them. A
 * batch file's arguments are escaped twice: a `.cmd` on Path is nearly
 * always a shim that hands `%*` to the real program (npm's global shims, in
 * `%APPDATA%\npm`, are), so cmd.exe reads them a second time. cross-spawn
 * escapes twice only under `node_modules\.bin`, and its users report the
 * global shims (its pull request 158).
 */
export function cmdInvocation(
  file: string,
  args: readonly string[],
  env: Record<string, string | undefined>,
): CmdInvocation {
  // cmd.exe ends its command line at a line break: the rest would be lost, or run.
  if (args.some((a) => /[\r\n]/.test(a)))
    throw new Error(
      `${file} runs through cmd.exe, which cannot pass an argument with a line break (start the program it wraps instead)`,
    )
  const batch = /\.(cmd|bat)$/i.test(file)
  const line = [escapeCmdCommand(file), ...args.map((a) => escapeCmdArgument(a, batch))].join(' ')
  return {
    command: windowsEnv(env, 'COMSPEC') ?? 'cmd.exe',
    args: ['/d', '/s', '/c', `"${line}"`],
    windowsVerbatimArguments: true,
  }
}

import { statSync } from 'node:fs'
import path from 'node:path'
import { cmdInvocation, findWindowsCommand, hasWindowsPath, isWindowsExecutable } from './windows-command.js'

/** What command resolution needs to know about the host; injectable for tests. */
export interface CommandHost {
  platform: NodeJS.Platform
  /** The running Node.js binary, or undefined inside a single executable (it is myc, not node). */
  nodePath: string | undefined
  /** The environment commands are looked up in (PATH, and on Windows PATHEXT and COMSPEC, any case); a child's own `env` is laid over it. */
  env: Record<string, string | undefined>
  /** Whether a file (not a folder) is there. */
  exists: (file: string) => boolean
}

function isFile(file: string): boolean {
  return statSync(file, { throwIfNoEntry: false })?.isFile() ?? false
}

/** The host as it is: the current platform, Node binary and environment. */
export function currentHost(isSingleExecutable: boolean): CommandHost {
  return {
    platform: process.platform,
    nodePath: isSingleExecutable ? undefined : process.execPath,
    env: process.env,
    exists: isFile,
  }
}

/** A command ready to spawn without a shell. */
export interface ResolvedCommand {
  command: string
  args: string[]
  /** Set when the command was rewritten, for the log. */
  resolvedFrom?: string
  /** What it was resolved to, in words for the log, when that is more than `command` (npm's cli.js, a `.cmd` through cmd.exe). */
  resolvedTo?: string
  /** The arguments are one cmd.exe command line, quoted already: spawn must pass them as they are. */
  windowsVerbatimArguments?: true
}

function lookPosix(name: string, host: CommandHost): string | undefined {
  const dirs = (host.env.PATH ?? '').split(':').filter(Boolean)
  return dirs.map((dir) => path.posix.join(dir, name)).find((candidate) => host.exists(candidate))
}

/**
 * Resolves a child's command so that it starts even when the MCP client
 * launched myc with a bare PATH (the usual cause of "spawn npx ENOENT" under
 * Claude Desktop):
 * - `node` → the running Node.js (or `node` on PATH inside a single executable);
 * - `npm`/`npx` → the ones beside that Node.js, else on PATH; on Windows
 *   `node <npm's cli.js>` when that file is beside node.exe;
 * - on Windows, every other command the way cmd.exe finds it
 *   (windows-command.ts): on `Path` with PATHEXT, or a path with or without
 *   its extension; a `.cmd` or `.bat` found (which CreateProcess cannot run)
 *   is run through `cmd.exe /d /s /c` with its arguments escaped.
 * On other platforms absolute paths and other commands are left as they are.
 * `cwd` is the child's working folder (a relative path is read from there).
 */
export function resolveCommand(
  command: string,
  args: readonly string[],
  host: CommandHost,
  cwd = '.',
): ResolvedCommand {
  if (host.platform === 'win32') return resolveWindows(command, args, host, cwd)
  const plain = { command, args: [...args] }
  if (command.includes('/')) return plain
  const node = host.nodePath ?? lookPosix('node', host)
  if (command === 'node') return node ? { command: node, args: [...args], resolvedFrom: command } : plain
  if (command !== 'npm' && command !== 'npx') return plain
  if (node) {
    const beside = path.posix.join(path.posix.dirname(node), command)
    if (host.exists(beside)) return { command: beside, args: [...args], resolvedFrom: command }
  }
  const found = lookPosix(command, host)
  return found ? { command: found, args: [...args], resolvedFrom: command } : plain
}

/** Where `command` would be found the way a child's command is (npm and npx beside the running Node.js first), or undefined. */
export function findCommand(command: string, host: CommandHost): string | undefined {
  const resolved = resolveCommand(command, [], host)
  if (resolved.resolvedFrom !== undefined) return resolved.resolvedTo ?? resolved.command
  if (host.platform === 'win32') return undefined
  return command.includes('/') ? (host.exists(command) ? command : undefined) : lookPosix(command, host)
}

function resolveWindows(command: string, args: readonly string[], host: CommandHost, cwd: string): ResolvedCommand {
  const lookup = { env: host.env, isFile: host.exists, cwd }
  if (!hasWindowsPath(command)) {
    const base = command.toLowerCase().replace(/\.(exe|cmd)$/, '')
    const node = host.nodePath ?? findWindowsCommand('node', lookup)
    if (base === 'node' && node) return { command: node, args: [...args], resolvedFrom: command }
    if ((base === 'npm' || base === 'npx') && node) {
      // npm's `.cmd` shims need cmd.exe; its cli.js beside node.exe does not.
      const cli = path.win32.join(path.win32.dirname(node), 'node_modules', 'npm', 'bin', `${base}-cli.js`)
      if (host.exists(cli))
        return { command: node, args: [cli, ...args], resolvedFrom: command, resolvedTo: `${node} ${cli}` }
    }
  }
  const found = findWindowsCommand(command, lookup)
  if (!found) return { command, args: [...args] }
  if (isWindowsExecutable(found))
    return found === command ? { command, args: [...args] } : { command: found, args: [...args], resolvedFrom: command }
  const invocation = cmdInvocation(found, args, host.env)
  return { ...invocation, resolvedFrom: command, resolvedTo: `${found}, run through ${invocation.command} /d /s /c` }
}

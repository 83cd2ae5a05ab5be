import { existsSync } from 'node:fs'
import path from 'node:path'

/** What command resolution needs to know about the host; injectable for tests. */
export interface CommandHost {
  platform: NodeJS.Platform
  /** The running Node.js binary, or undefined inside a single executable (it is myc, not node). */
  nodePath: string | undefined
  pathEnv: string | undefined
  pathExt?: string | undefined
  exists: (file: string) => boolean
}

/** The host as it is: the current platform, Node binary and PATH. */
export function currentHost(isSingleExecutable: boolean): CommandHost {
  return {
    platform: process.platform,
    nodePath: isSingleExecutable ? undefined : process.execPath,
    pathEnv: process.env.PATH ?? process.env.Path,
    pathExt: process.env.PATHEXT,
    exists: existsSync,
  }
}

/** A command ready to spawn without a shell. */
export interface ResolvedCommand {
  command: string
  args: string[]
  /** Set when the command was rewritten, for the log. */
  resolvedFrom?: string
}

function lookPath(name: string, host: CommandHost): string | undefined {
  const p = host.platform === 'win32' ? path.win32 : path.posix
  const dirs = (host.pathEnv ?? '').split(host.platform === 'win32' ? ';' : ':').filter(Boolean)
  const exts = host.platform === 'win32' ? ['', ...(host.pathExt ?? '.COM;.EXE;.BAT;.CMD').split(';').map((e) => e.toLowerCase())] : ['']
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = p.join(dir, name + ext)
      if (host.exists(candidate)) return candidate
    }
  }
  return undefined
}

/**
 * Resolves `node`, `npm` and `npx` to absolute paths so that a child starts
 * even when the MCP client launched myc with a bare PATH (the usual cause of
 * "spawn npx ENOENT" under Claude Desktop):
 * - `node` → the running Node.js (or `node` on PATH inside a single executable);
 * - `npm`/`npx` → the ones beside that Node.js, else on PATH. On Windows the
 *   `.cmd` shims cannot be spawned without a shell, so they become
 *   `node <npm's cli.js>` when that file is there.
 * Absolute paths and every other command are left as they are.
 */
export function resolveCommand(command: string, args: readonly string[], host: CommandHost): ResolvedCommand {
  const p = host.platform === 'win32' ? path.win32 : path.posix
  const plain = { command, args: [...args] }
  if (p.isAbsolute(command) || command.includes('/') || command.includes('\\')) return plain
  const base = host.platform === 'win32' ? command.toLowerCase().replace(/\.(exe|cmd)$/, '') : command
  const node = host.nodePath ?? lookPath('node', host)
  if (base === 'node') return node ? { command: node, args: [...args], resolvedFrom: command } : plain
  if (base !== 'npm' && base !== 'npx') return plain
  if (node) {
    const binDir = p.dirname(node)
    if (host.platform === 'win32') {
      const cli = p.join(binDir, 'node_modules', 'npm', 'bin', `${base}-cli.js`)
      if (host.exists(cli)) return { command: node, args: [cli, ...args], resolvedFrom: command }
    } else {
      const beside = p.join(binDir, base)
      if (host.exists(beside)) return { command: beside, args: [...args], resolvedFrom: command }
    }
  }
  const found = lookPath(base, host)
  return found ? { command: found, args: [...args], resolvedFrom: command } : plain
}

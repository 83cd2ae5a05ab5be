import path from 'node:path'
import type { StdioServerConfig } from '../config/server-schema.js'
import { resolveCommand, type CommandHost } from './resolve-command.js'

/** Exactly what a stdio child is started with: the same for an early start (prespawn.ts) and a normal one, so one can stand for the other. */
export interface StdioSpawnSpec {
  command: string
  args: string[]
  env: Record<string, string>
  cwd: string
  /** The command as the config gave it, when it was resolved to another (for the log). */
  resolvedFrom?: string
  /** What it was resolved to, in words, when that is more than `command` (for the log). */
  resolvedTo?: string
  /** `args` are one cmd.exe command line, escaped already (Windows, a `.cmd` or `.bat`). */
  windowsVerbatimArguments?: true
}

/**
 * The variables a child inherits from myc's environment besides its own
 * `env`: the MCP SDK's default list (its `getDefaultEnvironment`, which is
 * not imported here because its module brings the SDK's schemas with it,
 * and this runs before they are loaded). A test holds the two equal.
 */
const INHERITED =
  process.platform === 'win32'
    ? [
        'APPDATA', // check-state: a variable passed on, not a place
        'COMSPEC',
        'HOMEDRIVE',
        'HOMEPATH',
        'LOCALAPPDATA', // check-state: a variable passed on, not a place
        'PATH',
        'PATHEXT',
        'PROCESSOR_ARCHITECTURE',
        'PROGRAMDATA',
        'PROGRAMFILES',
        'PROGRAMFILES(X86)',
        'PROGRAMW6432',
        'SYSTEMDRIVE',
        'SYSTEMROOT',
        'TEMP',
        'USERNAME',
        'USERPROFILE', // check-state: a variable passed on, not a place
        'WINDIR',
      ]
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER']

export function inheritedEnvironment(env: Record<string, string | undefined> = process.env): Record<string, string> {
  const inherited: Record<string, string> = {}
  for (const key of INHERITED) {
    const value = env[key]
    // Exported shell functions ("() { …") are not passed on.
    if (value === undefined || value.startsWith('()')) continue
    inherited[key] = value
  }
  return inherited
}

/** `base` with `over` laid on it; on Windows a name replaces its namesake in any case (`PATH` over `Path`). */
function overlay(
  base: Record<string, string | undefined>,
  over: Record<string, string> | undefined,
  windows: boolean,
): Record<string, string | undefined> {
  const out = { ...base }
  for (const [key, value] of Object.entries(over ?? {})) {
    if (windows) for (const k of Object.keys(out)) if (k.toUpperCase() === key.toUpperCase()) delete out[k]
    out[key] = value
  }
  return out
}

/** A stdio entry's `env` as text: every value a string (its person's secrets filled in first: withSecrets). */
export function textEnv(env: Readonly<Record<string, string | { secret: string }>> = {}): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) {
    if (typeof value !== 'string')
      throw new Error(`env.${key} names a person's secret ("${value.secret}") that was not filled in before the start`)
    out[key] = value
  }
  return out
}

/** How a stdio server of the config is started: its command resolved, its environment, its folder (a relative `cwd` means the config's folder). */
export function stdioSpawnSpec(config: StdioServerConfig, host: CommandHost, configDir: string): StdioSpawnSpec {
  const windows = host.platform === 'win32'
  const p = windows ? path.win32 : path.posix
  const cwd = p.resolve(configDir, config.cwd ?? '.')
  // The command is looked up on the child's own PATH when its `env` sets one.
  const own = textEnv(config.env)
  const resolved = resolveCommand(config.command, config.args, { ...host, env: overlay(host.env, own, windows) }, cwd)
  // The child inherits from the environment its command is looked up in (this process's, unless a test gives another).
  const env = overlay(inheritedEnvironment(host.env), own, windows) as Record<string, string>
  // npx and npm start `node` through a shebang: keep the resolved Node on PATH.
  if (host.nodePath) {
    const nodeDir = p.dirname(host.nodePath)
    const pathKey = Object.keys(env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH'
    const parts = (env[pathKey] ?? '').split(p.delimiter)
    if (!parts.includes(nodeDir)) env[pathKey] = [nodeDir, ...parts.filter(Boolean)].join(p.delimiter)
  }
  return {
    command: resolved.command,
    args: [...resolved.args],
    env,
    cwd,
    ...(resolved.resolvedFrom ? { resolvedFrom: resolved.resolvedFrom } : {}),
    ...(resolved.resolvedTo ? { resolvedTo: resolved.resolvedTo } : {}),
    ...(resolved.windowsVerbatimArguments ? { windowsVerbatimArguments: true as const } : {}),
  }
}

/** What a command resolved to, for the debug log (undefined when it was left as given). */
export function describeResolution(spec: StdioSpawnSpec): string | undefined {
  return spec.resolvedFrom ? `resolved "${spec.resolvedFrom}" to ${spec.resolvedTo ?? spec.command}` : undefined
}

/** Whether two specs start the same process. */
export function sameSpawn(a: StdioSpawnSpec, b: StdioSpawnSpec): boolean {
  if (
    a.command !== b.command ||
    a.cwd !== b.cwd ||
    a.windowsVerbatimArguments !== b.windowsVerbatimArguments ||
    a.args.length !== b.args.length ||
    a.args.some((arg, i) => arg !== b.args[i])
  )
    return false
  const keys = Object.keys(a.env)
  return (
    keys.length === Object.keys(b.env).length && keys.every((k) => Object.hasOwn(b.env, k) && a.env[k] === b.env[k])
  )
}

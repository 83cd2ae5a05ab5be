import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { parseText } from '../config/load.js'
import { usageError } from '../errors.js'

/** The MCP clients whose servers `myc add --from-client` imports. */
export const CLIENTS = ['claude-desktop', 'claude-code', 'cursor', 'vscode'] as const
export type ClientName = (typeof CLIENTS)[number]

/** Where a machine keeps things: for the paths of the clients' configs. */
export interface Place {
  platform: NodeJS.Platform
  home: string
  env: Record<string, string | undefined>
  cwd: string
}

/** How a client writes values: as they are, with `${VAR}` expanded (Claude Code), or with VS Code's `${env:VAR}`, `${userHome}`, `${workspaceFolder}`. */
type Dialect = 'literal' | 'expanding' | 'vscode'

/** One config file of a client: where, which key holds its servers, how it writes values, and the folder `${workspaceFolder}` means. */
interface ClientFile {
  file: string
  servers: (doc: Record<string, unknown>) => unknown
  dialect: Dialect
  workspace?: string
}

/** The folder a desktop app keeps its settings in: Application Support, %APPDATA%, or $XDG_CONFIG_HOME (~/.config). */
function appData(place: Place, app: string): string {
  if (place.platform === 'darwin') return path.join(place.home, 'Library', 'Application Support', app)
  if (place.platform === 'win32')
    return path.join(place.env.APPDATA || path.join(place.home, 'AppData', 'Roaming'), app) // check-state: another app's folder
  const xdg = place.env.XDG_CONFIG_HOME // check-state: another app's folder, not myc's state
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(place.home, '.config'), app)
}

const key =
  (name: string) =>
  (doc: Record<string, unknown>): unknown =>
    doc[name]

/** Every config file a client may keep its servers in, the user's first, then the project's (the working folder's). */
export function clientFiles(client: ClientName, place: Place): ClientFile[] {
  const project = (...parts: string[]) => path.join(place.cwd, ...parts)
  switch (client) {
    case 'claude-desktop':
      return [
        {
          file: path.join(appData(place, 'Claude'), 'claude_desktop_config.json'),
          servers: key('mcpServers'),
          dialect: 'literal',
        },
      ]
    case 'claude-code':
      return [
        { file: path.join(place.home, '.claude.json'), servers: key('mcpServers'), dialect: 'expanding' },
        {
          // Its "local" scope: the servers it keeps for this folder.
          file: path.join(place.home, '.claude.json'),
          servers: (doc) =>
            (doc.projects as Record<string, { mcpServers?: unknown }> | undefined)?.[place.cwd]?.mcpServers,
          dialect: 'expanding',
        },
        { file: project('.mcp.json'), servers: key('mcpServers'), dialect: 'expanding' },
      ]
    case 'cursor':
      return [
        { file: path.join(place.home, '.cursor', 'mcp.json'), servers: key('mcpServers'), dialect: 'vscode' },
        { file: project('.cursor', 'mcp.json'), servers: key('mcpServers'), dialect: 'vscode', workspace: place.cwd },
      ]
    case 'vscode':
      return [
        { file: path.join(appData(place, 'Code'), 'User', 'mcp.json'), servers: key('servers'), dialect: 'vscode' },
        { file: project('.vscode', 'mcp.json'), servers: key('servers'), dialect: 'vscode', workspace: place.cwd },
      ]
  }
}

/** A server of a client's config, as myc would write it, its env and header values not yet kept (secrets.ts decides). */
export interface ImportedServer {
  name: string
  from: string
  entry: Record<string, unknown>
}

/** What the client configs hold: the servers myc can take, and the ones it cannot with why. */
export interface ClientServers {
  files: string[]
  servers: ImportedServer[]
  skipped: { name: string; from: string; why: string }[]
}

/**
 * Reads a client's servers from every config file of it that is there. A
 * client with none here is a usage error naming where myc looked.
 */
export async function readClientServers(client: ClientName, place: Place): Promise<ClientServers> {
  const candidates = clientFiles(client, place)
  const present = candidates.filter((c) => existsSync(c.file))
  if (present.length === 0)
    throw usageError(
      `no ${client} config here: myc looked at ${[...new Set(candidates.map((c) => c.file))].join(', ')}`,
    )
  const result: ClientServers = { files: [...new Set(present.map((c) => c.file))], servers: [], skipped: [] }
  for (const source of present) {
    const doc = parseText(await readFile(source.file, 'utf8'), source.file)
    const servers = doc !== null && typeof doc === 'object' ? source.servers(doc as Record<string, unknown>) : undefined
    if (servers === null || typeof servers !== 'object') continue
    for (const [name, raw] of Object.entries(servers as Record<string, unknown>)) {
      const translated = translate(raw, source, place)
      if (typeof translated === 'string') result.skipped.push({ name, from: source.file, why: translated })
      else result.servers.push({ name, from: source.file, entry: translated })
    }
  }
  return result
}

/** A client's entry as a myc entry (only the keys myc reads), or why it cannot be one. */
function translate(raw: unknown, source: ClientFile, place: Place): Record<string, unknown> | string {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return 'not an object'
  const e = raw as Record<string, unknown>
  if (e.disabled === true) return 'disabled in the client'
  try {
    const value = (v: string) => valueOf(v, source, place)
    const map = (m: unknown) => Object.fromEntries(Object.entries(stringMap(m)).map(([k, v]) => [k, value(v)]))
    const { command, url } = e
    if (typeof command === 'string') {
      if (isMyc(e)) return 'it is myc itself'
      const args = Array.isArray(e.args) ? e.args.map((a) => value(String(a))) : []
      const env = map(e.env)
      return {
        command: value(command),
        ...(args.length ? { args } : {}),
        ...(Object.keys(env).length ? { env } : {}),
        ...(typeof e.cwd === 'string' ? { cwd: value(e.cwd) } : {}),
      }
    }
    if (typeof url === 'string') {
      const headers = map(e.headers)
      const type = e.type === 'sse' ? 'sse' : 'http'
      return { type, url: value(url), ...(Object.keys(headers).length ? { headers } : {}) }
    }
    return 'it has neither a command nor a url'
  } catch (error) {
    return (error as Error).message
  }
}

function stringMap(m: unknown): Record<string, string> {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return {}
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, String(v)]))
}

/** Whether a client entry runs myc (the entry a person made to put myc in front of the others). */
function isMyc(e: Record<string, unknown>): boolean {
  const words = [String(e.command), ...(Array.isArray(e.args) ? e.args.map(String) : [])]
  return words.some((w) => /(^|[\\/])(myc|myc\.cjs|myc\.exe|mycelium-agg)$/.test(w) || w.startsWith('mycelium-agg@'))
}

/** A literal for a myc config: `$` written `$$`. */
const literal = (text: string) => text.replaceAll('$', '$$$$')

/** A value in a client's dialect, as a myc config writes it (its own `${VAR}` expansion). */
function valueOf(text: string, source: ClientFile, place: Place): string {
  if (source.dialect === 'expanding') return text
  if (source.dialect === 'literal') return literal(text)
  let out = ''
  let last = 0
  for (const m of text.matchAll(/\$\{([^}]*)\}/g)) {
    out += literal(text.slice(last, m.index))
    out += vscodeVariable(m[1]!, source, place)
    last = m.index + m[0].length
  }
  return out + literal(text.slice(last))
}

function vscodeVariable(name: string, source: ClientFile, place: Place): string {
  const env = /^env:([A-Za-z_][A-Za-z0-9_]*)$/.exec(name)
  if (env) return `\${${env[1]}}`
  if (name === 'userHome') return literal(place.home)
  if (name === 'workspaceFolder' && source.workspace !== undefined) return literal(source.workspace)
  throw new Error(`it uses \${${name}}, which only the client can fill in: add it by hand`)
}

import * as v from 'valibot'
import { MycError } from '../errors.js'
import { expandTree, formatPath, isSecretPath, isSecretRefPath, SECRET_NAME } from './expand-env.js'
import { ConfigSchema, type MyceliumConfig } from './schema.js'
import { HTTP_ONLY_KEYS, SCOPED_ONLY_KEYS, STDIO_ONLY_KEYS, type ServerConfig } from './server-schema.js'
import { didYouMean } from './suggest.js'

/** Server keys: a letter or digit, then letters, digits, `_` and `-`. */
export const SERVER_KEY = /^[A-Za-z0-9][A-Za-z0-9_-]*$/
/** Reserved for myc's own tools and skills. */
export const RESERVED_SERVER_KEY = 'mycelium'

/** File names of MCP client configs that myc accepts as they stand. */
const CLIENT_CONFIG_NAMES = new Set(['claude_desktop_config.json', '.mcp.json', 'mcp.json'])

export interface ParseSource {
  /** The file the config came from (for messages); absolute. */
  file: string
  env: Record<string, string | undefined>
}

type Path = (string | number)[]
type Problem = { path: Path; message: string }

/**
 * Validates and resolves a parsed config document (pure: no I/O). Every
 * problem is collected; if there are any, one MycError('config_invalid')
 * lists them all, each naming the file, the key path and the fix. Values of
 * `env` and `headers` never appear in a message.
 */
export function parseConfig(raw: unknown, source: ParseSource): { config: MyceliumConfig; secrets: string[] } {
  const problems: Problem[] = []
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw configError(source.file, [
      { path: [], message: 'the file must hold a JSON/YAML object such as { "mcpServers": { … } }' },
    ])
  }
  let doc = raw as Record<string, unknown>
  // A Claude Desktop or Claude Code file carries other settings of its own: keep only what myc reads.
  if (CLIENT_CONFIG_NAMES.has(basename(source.file))) doc = pick(doc, Object.keys(ConfigSchema.entries))

  const expanded = expandTree(doc, source.env)
  for (const m of expanded.missing) {
    problems.push({
      path: [],
      message: `${m.path}: environment variable ${m.name} is not set; set it, or write \${${m.name}:-default} to give a default`,
    })
  }
  for (const ref of expanded.secretRefs) {
    if (!isSecretRefPath(ref.path))
      problems.push({
        path: ref.path,
        message: `\${secret:${ref.name}} stands only in a server's "env" or "headers" values or in its "args"; move it there`,
      })
    else if (!SECRET_NAME.test(ref.name))
      problems.push({
        path: ref.path,
        message: `\${secret:${ref.name}}: a secret's name is letters, digits, ".", "_" and "-", starting with a letter or digit`,
      })
  }
  const normalized = normalizeServers(expanded.value as Record<string, unknown>, problems)
  checkServerKeys(normalized, problems)
  const result = v.safeParse(ConfigSchema, normalized)
  if (!result.success) for (const issue of result.issues) problems.push(describeIssue(issue, normalized))
  if (result.success) checkScopes(result.output.mcpServers, problems)
  if (problems.length > 0 || !result.success) throw configError(source.file, problems)
  const { mcpServers, $schema: _schema, ...rest } = result.output
  return {
    config: { ...rest, servers: new Map<string, ServerConfig>(Object.entries(mcpServers)) },
    secrets: expanded.secrets.filter((s) => s.length > 0),
  }
}

/**
 * A shared server (no `scope`, or `shared`) is one process for everyone: the
 * keys of a scoped server's instances, and a person's own secret in `env`,
 * have no one to be for there.
 */
function checkScopes(servers: Record<string, ServerConfig>, problems: Problem[]): void {
  for (const [key, config] of Object.entries(servers)) {
    if (config.type !== 'stdio' || (config.scope !== undefined && config.scope !== 'shared')) continue
    for (const name of SCOPED_ONLY_KEYS)
      if (config[name] !== undefined)
        problems.push({
          path: ['mcpServers', key, name],
          message: `shapes the processes of a scoped server: set "scope" to "principal" (one per person) or "session" (one per MCP session), or remove it`,
        })
    for (const [variable, value] of Object.entries(config.env))
      if (typeof value !== 'string')
        problems.push({
          path: ['mcpServers', key, 'env', variable],
          message: `{ "secret": "${value.secret}" } is the secret of the person a process runs for, and a shared server runs one process for everyone: set "scope" to "principal" or "session", or write "\${secret:${value.secret}}" for this machine's own secret`,
        })
  }
}

/** Server keys: the allowed characters, the reserved key, and no wire separator inside. */
function checkServerKeys(doc: Record<string, unknown>, problems: Problem[]): void {
  const servers = doc.mcpServers
  if (servers === null || typeof servers !== 'object') return
  const ns = doc.namespace as { separator?: unknown } | undefined
  const separator = typeof ns?.separator === 'string' ? ns.separator : '__'
  for (const key of Object.keys(servers)) {
    if (!SERVER_KEY.test(key))
      problems.push({
        path: ['mcpServers', key],
        message: 'server keys start with a letter or digit and contain only letters, digits, "_" and "-"; rename it',
      })
    else if (key.toLowerCase() === RESERVED_SERVER_KEY)
      problems.push({
        path: ['mcpServers', key],
        message: `"${RESERVED_SERVER_KEY}" is reserved for myc's built-in tools; choose another key`,
      })
    else if (key.includes(separator))
      problems.push({
        path: ['mcpServers', key],
        message: `the key contains the wire separator "${separator}", so tool names could not be split back; rename it, or set namespace.separator to another of "__", "_", "-", ".", ":"`,
      })
  }
  checkPrefixes(servers as Record<string, unknown>, separator, problems)
}

/**
 * `prefix` strings: no wire separator, not the reserved key, and no two
 * servers named alike on the wire (a prefix equal to another server's key or
 * prefix); each problem names both servers.
 */
function checkPrefixes(servers: Record<string, unknown>, separator: string, problems: Problem[]): void {
  const wireOwner = new Map<string, string>()
  for (const [key, entry] of Object.entries(servers)) {
    const prefix = entry !== null && typeof entry === 'object' ? (entry as { prefix?: unknown }).prefix : undefined
    if (prefix !== undefined && typeof prefix !== 'string') continue
    const name = prefix ?? key
    if (prefix !== undefined) {
      if (prefix.includes(separator))
        problems.push({
          path: ['mcpServers', key, 'prefix'],
          message: `contains the wire separator "${separator}"; choose a word without it`,
        })
      if (prefix.toLowerCase() === RESERVED_SERVER_KEY)
        problems.push({
          path: ['mcpServers', key, 'prefix'],
          message: `"${RESERVED_SERVER_KEY}" is reserved for myc's built-in tools; choose another prefix`,
        })
    }
    const other = wireOwner.get(name.toLowerCase())
    if (other !== undefined)
      problems.push({
        path: ['mcpServers', key, ...(prefix !== undefined ? ['prefix'] : [])],
        message: `servers "${other}" and "${key}" would both put "${name}${separator}" in front of their names; give one another prefix`,
      })
    else wireOwner.set(name.toLowerCase(), key)
  }
}

function basename(file: string): string {
  return file.split(/[\\/]/).pop() ?? file
}

function pick(obj: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(obj).filter(([k]) => keys.includes(k)))
}

/**
 * Fills in `type` the way Claude Desktop and Claude Code files imply it:
 * `stdio` when there is a `command`, `http` when there is only a `url`
 * (Claude Code's `streamable-http` spelling included).
 */
function normalizeServers(doc: Record<string, unknown>, problems: Problem[]): Record<string, unknown> {
  const servers = doc.mcpServers
  if (servers === undefined) return doc
  if (servers === null || typeof servers !== 'object' || Array.isArray(servers)) {
    problems.push({
      path: ['mcpServers'],
      message:
        'must be an object mapping server keys to server entries, e.g. { "fs": { "command": "npx", "args": [...] } }',
    })
    const { mcpServers: _drop, ...rest } = doc
    return rest
  }
  const out: Record<string, unknown> = {}
  for (const [key, entry] of Object.entries(servers)) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      out[key] = entry
      continue
    }
    const e = { ...(entry as Record<string, unknown>) }
    // valibot's record() takes a list too (its indexes as keys): say what is meant instead.
    for (const mapKey of ['env', 'headers'] as const) {
      if (Array.isArray(e[mapKey])) {
        problems.push({
          path: ['mcpServers', key, mapKey],
          message: `must be an object of string values, not a list: { "NAME": "value" }`,
        })
        delete e[mapKey]
      }
    }
    if (e.type === 'streamable-http' || e.type === 'streamableHttp') e.type = 'http'
    if (e.type === undefined) {
      if (Object.hasOwn(e, 'command') && Object.hasOwn(e, 'url')) {
        problems.push({
          path: ['mcpServers', key],
          message:
            'has both "command" and "url": a server is either started (command, type "stdio") or connected to (url, type "http" or "sse"); keep one',
        })
        continue
      }
      if (Object.hasOwn(e, 'command')) e.type = 'stdio'
      else if (Object.hasOwn(e, 'url')) e.type = 'http'
      else {
        const typo = Object.keys(e)
          .map((k) => ({ k, s: didYouMean(k, ['command', 'url']) }))
          .find((x) => x.s !== undefined)
        problems.push(
          typo
            ? { path: ['mcpServers', key, typo.k], message: `unknown key "${typo.k}"; did you mean "${typo.s}"?` }
            : {
                path: ['mcpServers', key],
                message: 'needs "command" (a program to start) or "url" (a server to connect to)',
              },
        )
        continue
      }
    }
    out[key] = e
  }
  return { ...doc, mcpServers: out }
}

type AnySchema = {
  type: string
  entries?: Record<string, AnySchema>
  wrapped?: AnySchema
  value?: AnySchema
  item?: AnySchema
  options?: AnySchema[]
}

/** The schema at a key path, for "did you mean" suggestions. */
function schemaAt(path: readonly (string | number)[], rawDoc: unknown): AnySchema | undefined {
  let schema: AnySchema | undefined = ConfigSchema as unknown as AnySchema
  let node: unknown = rawDoc
  const resolve = (s: AnySchema | undefined, at: unknown): AnySchema | undefined => {
    while (s?.wrapped) s = s.wrapped
    if (s?.type !== 'variant') return s
    const type = (at as { type?: unknown } | undefined)?.type
    return resolve(
      s.options?.find((o) => {
        const t = o.entries?.type as (AnySchema & { literal?: unknown; options?: unknown[] }) | undefined
        return t?.literal === type || (Array.isArray(t?.options) && t.options.includes(type))
      }),
      at,
    )
  }
  for (const part of path) {
    schema = resolve(schema, node)
    if (!schema) return undefined
    if (schema?.entries) schema = schema.entries[String(part)]
    else if (schema?.type === 'record') schema = schema.value
    else if (schema?.type === 'array') schema = schema.item
    else return undefined
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[String(part)] : undefined
  }
  return resolve(schema, node)
}

function keysOf(schema: AnySchema | undefined): string[] {
  return schema?.entries ? Object.keys(schema.entries) : []
}

function describeIssue(issue: v.BaseIssue<unknown>, doc: Record<string, unknown>): Problem {
  const path: Path = (issue.path ?? []).map((p) => p.key as string | number)
  const secret = isSecretPath(path)
  if (issue.type === 'strict_object' && issue.expected === 'never') {
    const key = String(path.at(-1))
    const parentPath = path.slice(0, -1)
    const parent = schemaAt(parentPath, doc)
    const allowed = keysOf(parent)
    const isServer = parentPath.length === 2 && parentPath[0] === 'mcpServers'
    if (isServer) {
      const type = (getAt(doc, parentPath) as { type?: string } | undefined)?.type
      const otherKeys: readonly string[] = type === 'stdio' ? HTTP_ONLY_KEYS : STDIO_ONLY_KEYS
      if (otherKeys.includes(key)) {
        const fits =
          type === 'stdio'
            ? '"url", "headers" and "oauth" fit type "http" or "sse"'
            : `${STDIO_ONLY_KEYS.map((k) => `"${k}"`).join(', ')} fit type "stdio" (a process myc starts)`
        return {
          path,
          message: `"${key}" does not fit a server of type "${type}": ${fits}; remove it or change "type"`,
        }
      }
    }
    const suggestion = didYouMean(key, allowed)
    return {
      path,
      message: `unknown key "${key}"${suggestion ? `; did you mean "${suggestion}"?` : ''} (allowed here: ${allowed.join(', ')})`,
    }
  }
  if (issue.type === 'variant') {
    return {
      path: path.at(-1) === 'type' ? path : [...path, 'type'],
      message: `unknown server type ${describeValue(issue.input, false)}; use "stdio", "http" or "sse"`,
    }
  }
  if (issue.type === 'union' && path.length === 4 && path[2] === 'env')
    return {
      path,
      message: `expected a string, or { "secret": "NAME" } (the secret of the person a scoped server's process runs for), got ${describeValue(issue.input, secret)}`,
    }
  if (issue.type === 'picklist' || issue.type === 'literal') {
    return { path, message: `is ${describeValue(issue.input, secret)}, expected one of ${issue.expected}` }
  }
  if (issue.kind === 'validation') {
    // valibot's own messages start with "Invalid"; ours (the schema's) say the fix.
    if (!issue.message.startsWith('Invalid '))
      return { path, message: `${describeValue(issue.input, secret)} ${issue.message}` }
    const expected =
      issue.type === 'integer'
        ? 'an integer'
        : issue.type === 'min_value'
          ? `at least ${String(issue.requirement)}`
          : issue.type === 'max_value'
            ? `at most ${String(issue.requirement)}`
            : (issue.expected ?? issue.type)
    return { path, message: `is ${describeValue(issue.input, secret)}, expected ${expected}` }
  }
  return {
    path,
    message: `expected ${issue.expected ?? 'another value'}, got ${describeValue(issue.input, secret)}${fixFor(path)}`,
  }
}

function fixFor(path: Path): string {
  const last = path.at(-1)
  if (last === 'args') return ' (write args as a list of strings: ["-y", "pkg"])'
  if (last === 'env' || last === 'headers') return ' (an object of string values)'
  if (last === 'prefix') return ' (false serves the child\'s own names; a word such as "gh" replaces the server key)'
  return ''
}

function getAt(doc: unknown, path: readonly (string | number)[]): unknown {
  let node = doc
  for (const part of path)
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[String(part)] : undefined
  return node
}

/** How a value is named in a message; a secret is never shown, only its type. */
function describeValue(value: unknown, secret: boolean): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'object') return 'an object'
  if (secret) return `a ${typeof value}`
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)
  return `${typeof value} ${String(value)}`
}

function configError(file: string, problems: Problem[]): MycError {
  const lines = problems.map((p) => (p.path.length > 0 ? `  ${formatPath(p.path)}: ${p.message}` : `  ${p.message}`))
  return new MycError('config_invalid', `Invalid config ${file}:\n${lines.join('\n')}`)
}

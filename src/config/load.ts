import { readFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { parseDocument } from 'yaml'
import { MycError } from '../errors.js'
import { parseConfig } from './parse.js'
import type { MyceliumConfig } from './schema.js'
import { DEFAULT_CONFIG_FILES } from './state-roots.js'

export { parseConfig }

export interface LoadConfigOptions {
  /** `--config F`, relative to `cwd`; without it, `MYC_CONFIG` from `env`. */
  configPath?: string
  cwd: string
  env: Record<string, string | undefined>
}

export interface LoadedConfig {
  /** Absolute path of the file, or undefined for the embedded default. */
  file: string | undefined
  /** Base directory for relative paths in the config (the file's folder, or cwd). */
  dir: string
  config: MyceliumConfig
  /** Every expanded value of `env` and `headers`, for redaction. */
  secrets: string[]
}

export { DEFAULT_CONFIG_FILES }

/**
 * Finds, reads, parses and validates the config. With no `--config` and no
 * default file, the embedded default (no servers) is used. Throws
 * MycError('config_not_found' | 'config_invalid') with the file named.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<LoadedConfig> {
  let file: string | undefined
  const fromEnv = options.configPath === undefined && options.env.MYC_CONFIG ? options.env.MYC_CONFIG : undefined
  const given = options.configPath ?? fromEnv
  if (given !== undefined) {
    file = path.resolve(options.cwd, given)
    if (!existsSync(file))
      throw new MycError(
        'config_not_found',
        `Config file not found: ${file} (named by ${fromEnv !== undefined ? 'MYC_CONFIG' : '--config'})`,
        { fix: 'check the path, or run `myc init` to create one' },
      )
  } else {
    file = DEFAULT_CONFIG_FILES.map((name) => path.join(options.cwd, name)).find((candidate) => existsSync(candidate))
  }
  if (file === undefined) {
    const { config, secrets } = parseConfig({}, { file: '(embedded default)', env: options.env })
    return { file: undefined, dir: options.cwd, config, secrets }
  }
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new MycError('config_not_found', `Cannot read config file ${file}: ${(error as Error).message}`)
  }
  const raw = parseText(text, file)
  const { config, secrets } = parseConfig(raw, { file, env: options.env })
  return { file, dir: path.dirname(file), config, secrets }
}

/** Parses JSON or YAML by extension (anything else: JSON, then YAML); errors name line and column. */
export function parseText(text: string, file: string): unknown {
  const ext = path.extname(file).toLowerCase()
  const asJson = () => {
    try {
      return JSON.parse(stripJsonComments(text.replace(/^\uFEFF/, ''))) as unknown
    } catch (error) {
      const message = (error as Error).message
      const at = /position (\d+)/.exec(message)
      const where = at ? lineColumn(text, Number(at[1])) : undefined
      const place = where
        ? ` at line ${where.line}, column ${where.column}`
        : // error-text: JSON.parse's SyntaxError has no code, and no position when the text ends too soon
          /end of JSON input/.test(message)
          ? ' at the end of the file (it stops in the middle of a value)'
          : ''
      throw new MycError(
        'config_invalid',
        `Invalid JSON in ${file}${place}: ${message.replace(/ in JSON at position \d+.*$/, '')} (fix the syntax)`,
      )
    }
  }
  const asYaml = () => {
    const doc = parseDocument(text)
    const error = doc.errors[0]
    if (error) {
      const pos = error.linePos?.[0]
      throw new MycError(
        'config_invalid',
        `Invalid YAML in ${file}${pos ? ` at line ${pos.line}, column ${pos.col}` : ''}: ${error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')} (fix the syntax)`,
      )
    }
    return doc.toJS() as unknown
  }
  if (ext === '.json') return asJson()
  if (ext === '.yaml' || ext === '.yml') return asYaml()
  try {
    return asJson()
  } catch {
    return asYaml()
  }
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset)
  const line = before.split('\n').length
  return { line, column: offset - before.lastIndexOf('\n') }
}

/**
 * JSON with comments (JSONC, as in VS Code's settings): `//` and `/* … *\/`
 * comments and trailing commas before `}` or `]` become spaces, so every
 * position (and so every error's line and column) stays where it was.
 * Strings are copied as they are.
 */
export function stripJsonComments(text: string): string {
  let out = ''
  let i = 0
  let pendingComma = -1
  while (i < text.length) {
    const c = text[i]!
    if (c === '"') {
      let j = i + 1
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      out += text.slice(i, j + 1)
      i = j + 1
      pendingComma = -1
      continue
    }
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i)
      const stop = end === -1 ? text.length : end
      out += ' '.repeat(stop - i)
      i = stop
      continue
    }
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2)
      const stop = end === -1 ? text.length : end + 2
      out += text.slice(i, stop).replace(/[^\n]/g, ' ')
      i = stop
      continue
    }
    if (c === ',') pendingComma = out.length
    else if ((c === '}' || c === ']') && pendingComma !== -1)
      out = `${out.slice(0, pendingComma)} ${out.slice(pendingComma + 1)}`
    if (!/\s/.test(c) && c !== ',') pendingComma = -1
    out += c
    i++
  }
  return out
}

import type { Prompt, Tool } from '@modelcontextprotocol/client'
import { existsSync } from 'node:fs'
import { chmod, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { DEFAULT_CONFIG_FILES, loadConfig, parseText } from '../config/load.js'
import { parseConfig } from '../config/parse.js'
import type { MyceliumConfig } from '../config/schema.js'
import type { CommandHost } from '../children/resolve-command.js'
import { MycError } from '../errors.js'
import type { Logger } from '../logger.js'
import { withFileLock, writeFileAtomic } from '../memory/atomic-file.js'
import type { SecretMode } from './build-entry.js'
import { addServersToText } from './config-text.js'
import { pinAdded } from './pin.js'

/** What every way of adding servers is given: where, how secrets are kept, whether to write, and this machine. */
export interface AddContext {
  secrets: SecretMode
  dryRun: boolean
  /** `--config`. */
  configPath?: string | undefined
  cwd: string
  env: Record<string, string | undefined>
  host: CommandHost
  logger: Logger
}

/** The config `myc add` writes to: the one `--config`, MYC_CONFIG or the folder names, or a new ./mycelium.config.json. */
export interface ConfigTarget {
  /** Absolute path. */
  file: string
  /** Whether it is there already (else myc add makes it). */
  exists: boolean
  /** The config as it is now (the embedded default when there is none yet). */
  config: MyceliumConfig
}

/**
 * Finds the config to add to, as every command finds its config, except
 * that a named file that does not exist yet is made (a config with only the
 * new servers). A config that does not load is an error: it is fixed first.
 */
export async function configTarget(options: {
  configPath?: string | undefined
  cwd: string
  env: Record<string, string | undefined>
}): Promise<ConfigTarget> {
  const named = options.configPath ?? (options.env.MYC_CONFIG || undefined)
  const file =
    named !== undefined
      ? path.resolve(options.cwd, named)
      : (DEFAULT_CONFIG_FILES.map((n) => path.join(options.cwd, n)).find((f) => existsSync(f)) ??
        path.join(options.cwd, DEFAULT_CONFIG_FILES[0]))
  if (!existsSync(file)) {
    const { config } = parseConfig({}, { file, env: options.env })
    return { file, exists: false, config }
  }
  const loaded = await loadConfig({ configPath: file, cwd: options.cwd, env: options.env })
  return { file, exists: true, config: loaded.config }
}

/** A server to write: its key, its entry as written, and the tools and prompts its trial start listed. */
export interface AddedEntry {
  key: string
  entry: Record<string, unknown>
  tools: readonly Tool[]
  prompts: readonly Prompt[]
}

/**
 * Adds entries to the target's file under its lock (another myc add at the
 * same moment waits): the text as it is then, edited (config-text.ts),
 * checked to load with exactly these entries, and written atomically with
 * the file's mode kept; then each is pinned (pin.ts: the one place myc add
 * calls it). `env` is what the check expands the config with (the variables
 * a person is to export given stand-in values).
 */
export async function writeAdded(
  target: ConfigTarget,
  added: readonly AddedEntry[],
  env: Record<string, string | undefined>,
  logger: Logger,
): Promise<void> {
  const { file } = target
  const entries = added.map((a): [string, Record<string, unknown>] => [a.key, a.entry])
  await withFileLock(`${file}.lock`, async () => {
    const before = existsSync(file) ? await readFile(file, 'utf8') : ''
    const text = addServersToText(before, file, entries)
    checkWritten(text, file, entries, env)
    const mode = existsSync(file) ? (await stat(file)).mode & 0o777 : undefined
    await writeFileAtomic(file, text)
    if (mode !== undefined) await chmod(file, mode)
  })
  for (const a of added) await pinAdded({ configFile: file, key: a.key, tools: a.tools, prompts: a.prompts }, logger)
}

/** The edited text must load, and hold each entry exactly as meant: else nothing is written. */
function checkWritten(
  text: string,
  file: string,
  entries: readonly [string, Record<string, unknown>][],
  env: Record<string, string | undefined>,
): void {
  const raw = parseText(text, file) as { mcpServers?: Record<string, unknown> }
  parseConfig(raw, { file, env })
  for (const [key, entry] of entries)
    if (!isDeepStrictEqual(raw.mcpServers?.[key], entry))
      throw new MycError('runtime', `myc add could not write "${key}" into ${file} as meant, so nothing was written`, {
        fix: 'add the entry by hand (myc add --dry-run prints it)',
      })
}

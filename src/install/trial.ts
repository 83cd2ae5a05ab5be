import path from 'node:path'
import type { Prompt, Tool } from '@modelcontextprotocol/client'
import { parseConfig } from '../config/parse.js'
import type { CommandHost } from '../children/resolve-command.js'
import { MycError } from '../errors.js'
import type { Logger } from '../logger.js'
import { Runtime } from '../runtime/runtime.js'
import { version } from '../version.js'
import { childSessions } from '../eras/child-sessions.js'

/** How long a trial start may take: longer than a child's usual start, for an npx or uvx that downloads its package first. */
const TRIAL_STARTUP_MS = 120_000

/** What the trial start of each server found: its tools, or why it did not start. */
export type TrialOutcome = { ok: true; tools: Tool[]; prompts: Prompt[] } | { ok: false; why: string }

/**
 * Starts servers once, as `myc serve` would start them from a config in
 * `configFile`'s folder (entries as written there, with the secrets' values
 * in place), lists their tools and prompts and stops them. Nothing is written anywhere.
 */
export async function trialStart(options: {
  entries: ReadonlyMap<string, unknown>
  configFile: string
  env: Record<string, string | undefined>
  host: CommandHost
  logger: Logger
}): Promise<Map<string, TrialOutcome>> {
  const servers = Object.fromEntries(
    [...options.entries].map(([key, entry]) => [key, { ...(entry as object), startupTimeoutMs: TRIAL_STARTUP_MS }]),
  )
  const { config, secrets } = parseConfig({ mcpServers: servers }, { file: options.configFile, env: options.env })
  const loaded = { file: options.configFile, dir: path.dirname(options.configFile), config, secrets }
  const runtime = new Runtime({
    loaded,
    childSessions,
    logger: options.logger,
    version,
    host: options.host,
    oneShot: { failuresShown: true },
  })
  try {
    const outcomes = new Map<string, TrialOutcome>()
    await Promise.all(
      [...options.entries.keys()].map(async (key) => {
        await runtime.supervisor.ensureRunning(key)
        const child = runtime.supervisor.children.get(key)!
        outcomes.set(
          key,
          child.state === 'RUNNING'
            ? { ok: true, tools: child.lists.tools, prompts: child.lists.prompts }
            : { ok: false, why: child.lastError ?? 'it did not start' },
        )
      }),
    )
    return outcomes
  } finally {
    await runtime.close()
  }
}

/** The error of a trial start that failed: nothing was written. */
export function trialFailed(what: string, why: string): MycError {
  return new MycError('child_failed', `${what} did not start, so nothing was written: ${why}`, {
    fix: 'see its stderr above (--verbose shows all of it); fix the cause, or choose another package with --package',
  })
}

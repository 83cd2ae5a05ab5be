import type { Logger } from '../logger.js'
import { MycError } from '../errors.js'
import { redactUrls } from '../redact.js'
import { compareToLock, recordOffered, type HiddenItem, type LockComparison, type Offered } from '../pinning/compare.js'
import { lockPathOf, readLockFile, updateLockFile } from '../pinning/lock-file.js'
import type { DefinitionLock } from '../pinning/lock.js'
import { openRuntime } from '../runtime/open-runtime.js'
import type { Runtime } from '../runtime/runtime.js'
import { version } from '../version.js'
import { childSessions } from '../eras/child-sessions.js'

/** A configured server whose definitions could not be read (it did not start). */
export interface UncheckedServer {
  server: string
  state: string
  error: string | null
}

/** What the running children offer, beside the lock (`myc pin`, `myc pin --check`, `myc init`). */
export interface PinSurvey {
  lockFile: string
  /** The lock on disk; undefined when there is none. */
  lock: DefinitionLock | undefined
  offered: ReadonlyMap<string, Offered>
  comparison: LockComparison
  unchecked: UncheckedServer[]
  /** Servers whose pins stay as they are: disabled, or not started. */
  kept: ReadonlySet<string>
  allowsHiddenText: (server: string) => boolean
}

/**
 * Starts every configured child (lazy ones too) with nothing withheld, reads
 * what each offers and compares it with the lock. The children are stopped
 * before it resolves. Throws MycError for a config or lock that cannot be
 * read, and when there is no config file (nothing to pin).
 */
export async function surveyPins(options: {
  configPath?: string
  logger: Logger
  cwd?: string
  env?: Record<string, string | undefined>
}): Promise<PinSurvey> {
  const { runtime, loaded } = await openRuntime({
    childSessions,
    configPath: options.configPath,
    logger: options.logger,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
    version,
    oneShot: { failuresShown: true },
    ungated: true,
  })
  try {
    if (!loaded.file)
      throw new MycError('usage', 'no config file here: there are no servers to pin', {
        fix: 'run `myc init` to create a project, or give --config',
      })
    const lockFile = lockPathOf(loaded.dir)
    const lock = await readLockFile(lockFile)
    await Promise.all([...runtime.supervisor.children.keys()].map((key) => runtime.supervisor.ensureRunning(key)))
    return { lockFile, lock, ...offeredBy(runtime, lock) }
  } finally {
    await runtime.close()
  }
}

/** Each running child's definitions, the comparison with the lock, and the servers that could not be read. */
function offeredBy(runtime: Runtime, lock: DefinitionLock | undefined): Omit<PinSurvey, 'lockFile' | 'lock'> {
  const { servers } = runtime.loaded.config
  const allowsHiddenText = (server: string) => servers.get(server)?.dangerouslyAllowHiddenText === true
  const offered = new Map<string, Offered>()
  const unchecked: UncheckedServer[] = []
  const kept = new Set<string>()
  for (const [server, config] of servers) {
    const child = runtime.supervisor.children.get(server)
    if (child?.state === 'RUNNING') {
      offered.set(server, { tools: child.lists.tools, prompts: child.lists.prompts })
      continue
    }
    kept.add(server)
    if (config.disabled || !child) continue
    unchecked.push({
      server,
      state: child.state,
      error: child.lastError === undefined ? null : redactUrls(child.lastError),
    })
  }
  const comparison = compareToLock(lock, offered, { allowsHiddenText, kept })
  return { offered, comparison, unchecked, kept, allowsHiddenText }
}

/**
 * Writes what a survey found into its lock: the lock as it is on disk at
 * that moment, with every running server's definitions as they were read
 * (hidden text left out), the servers that did not start kept as they were,
 * and servers no longer configured dropped. Resolves with the items left out.
 */
export async function writeSurvey(survey: PinSurvey): Promise<HiddenItem[]> {
  return updateLockFile(survey.lockFile, (current) => {
    const { lock, hidden } = recordOffered(current, survey.offered, {
      allowsHiddenText: survey.allowsHiddenText,
      kept: survey.kept,
    })
    return { lock, result: hidden }
  })
}

/**
 * `myc init`: the lock of the project it just wrote, from what its servers
 * offer when started once. A server that does not start is not pinned (its
 * tools stay withheld until `myc pin` is run once it starts).
 */
export async function pinNewProject(
  configFile: string,
  logger: Logger,
  env?: Record<string, string | undefined>,
): Promise<{ lockFile: string; unchecked: UncheckedServer[]; hidden: HiddenItem[] }> {
  const survey = await surveyPins({ configPath: configFile, logger, ...(env ? { env } : {}) })
  const hidden = await writeSurvey(survey)
  return { lockFile: survey.lockFile, unchecked: survey.unchecked, hidden }
}

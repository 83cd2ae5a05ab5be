import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { MycError } from '../../src/errors.js'
import { parseGiven } from '../../src/install/answers.js'
import { addServer, type AddRequest } from '../../src/install/add-server.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { repoRoot } from '../helpers/fixtures.js'
import { pathWithStandIns } from '../helpers/registry.js'
import { captureLogger } from '../helpers/runtime.js'

/** A sealed store's key for tests (MYC_TOKEN_KEY): no keychain is asked. */
const TEST_TOKEN_KEY = Buffer.alloc(32, 9).toString('base64')

/**
 * A project folder for myc add: a config (JSONC text, or none), a
 * node_modules beside it that is the repo's (so `npx -y pkg@version` finds
 * the reference servers installed there, offline), and a user config folder
 * of its own for the secret store.
 */
export function project(configText?: string, name = 'mycelium.config.json') {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-add-'))
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'))
  const file = path.join(dir, name)
  if (configText !== undefined) writeFileSync(file, configText)
  const env = {
    ...process.env,
    XDG_CONFIG_HOME: path.join(dir, '.user-config'),
    MYC_TOKEN_KEY: TEST_TOKEN_KEY,
  } as Record<string, string | undefined>
  return { dir, file, env }
}

/** Runs myc add in-process for `project`, with the given flags' words; the stand-in runtimes first on PATH unless `path` says otherwise. */
export function add(
  where: ReturnType<typeof project>,
  source: string,
  options: Partial<AddRequest> & { flags?: { env?: string[]; header?: string[]; arg?: string[] }; path?: string } = {},
) {
  const { flags = {}, path: pathValue, ...rest } = options
  const { env: envWords = [], header = [], arg = [] } = flags
  const hostEnv = { ...where.env, PATH: pathValue ?? pathWithStandIns(where.env) }
  return addServer({
    source,
    given: parseGiven({ env: envWords, header, arg }, where.env),
    secrets: 'sealed',
    yes: false,
    dryRun: false,
    cwd: where.dir,
    env: where.env,
    host: { ...hostForThisProcess(), env: hostEnv },
    logger: captureLogger().logger,
    ...rest,
  })
}

/** The MycError a promise rejects with (it must reject with one). */
export async function failure(promise: Promise<unknown>): Promise<MycError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(MycError)
  return error as MycError
}

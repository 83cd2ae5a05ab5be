import type { CommandIO } from '../command-io.js'
import { MycError } from '../errors.js'
import type { SharedEntries } from '../oauth/sealed-store.js'

/** A person's entries where the replicas keep them, and the connection to close once done. */
export interface PeopleEntries {
  /** MYC_TOKEN_KEY: the replicas seal what they share with it. */
  key: string
  entries: SharedEntries
  close(): Promise<void>
}

/**
 * Where `myc serve --http` with this config keeps person `who`'s OAuth logins
 * or secrets (`kind`), when it is not this machine's file: with a Redis
 * `http.sessionStore`, that Redis, sealed with MYC_TOKEN_KEY (refused, naming
 * the variable, without it), as the replicas read them (http/shared-people.ts).
 * Undefined for the local person, or with the in-memory store: the file.
 */
export async function peopleEntries(
  io: CommandIO,
  who: string,
  configPath: string | undefined,
  kind: 'logins' | 'secrets',
): Promise<PeopleEntries | undefined> {
  const [{ LOCAL_PRINCIPAL }, { loadConfig }] = await Promise.all([
    import('../oauth/token-store.js'),
    import('../config/load.js'),
  ])
  if (who === LOCAL_PRINCIPAL) return undefined
  const loaded = await loadConfig({ configPath, cwd: io.cwd, env: io.env })
  const setting = loaded.config.http.sessionStore
  if (setting === 'memory') return undefined
  const key = io.env.MYC_TOKEN_KEY
  if (!key)
    throw new MycError(
      'usage',
      `${loaded.file}: http.sessionStore is Redis, where the replicas keep people's ${kind} sealed with MYC_TOKEN_KEY, and it is not set here`,
      { fix: "set MYC_TOKEN_KEY to the replicas' value, then run this again" },
    )
  const { openSessionStore } = await import('../http/session-store.js')
  const shared = await openSessionStore(setting)
  const entries = kind === 'logins' ? shared.tokenEntries!() : shared.secretEntries!()
  return { key, entries, close: () => shared.close() }
}

import { osKeyVault } from './keychain.js'
import { SealedStore, type SharedEntries } from './sealed-store.js'
import { sealedStoreFiles, userState } from '../config/state-roots.js'
import { LOCAL_PRINCIPAL } from './token-store.js'

/**
 * Secrets kept out of the project, by principal and name: a sealed store
 * (sealed-store.ts) beside the OAuth logins, under the same key, so no
 * secret is ever in the project, the config or a `.env` file. The local
 * person's (`local`) are this machine's: what `myc add` keeps for an API key
 * the registry marks `isSecret`, and what a config's `${secret:NAME}` reads.
 * Every other principal's are that person's own (`myc secrets set NAME
 * --principal P`, or `PUT /secrets/NAME` behind `myc serve --http`): what
 * `{ "secret": "NAME" }` in a scoped server's `env` reads for the person an
 * instance runs for (docs/team.md). One principal's entry never opens as
 * another's (the sealing is derived per principal).
 */

/** One secret as kept. */
export interface StoredSecret {
  value: string
  savedAt: number
}

/**
 * The entry that lists a principal's secret names (sealed as any other):
 * entries are found by a keyed digest, so the names cannot be read back
 * from the file. Not a secret's name (those start with a letter or digit).
 */
const INDEX = '#names'

/** A secret's value as piped or sent: the text with one trailing newline (`\n` or `\r\n`) dropped, as `echo` and editors add one. */
export function secretValue(text: string): string {
  return text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text
}

export interface SecretStoreOptions {
  principal?: string
  /** The replicas' shared entries (the Redis session store): then the key must be MYC_TOKEN_KEY. */
  shared?: SharedEntries
}

export class SecretStore extends SealedStore<StoredSecret> {
  /** The store of `principal` (default: the local person's) in the user's config folder, its key from MYC_TOKEN_KEY, the key file, or the OS keychain. */
  static forUser(env: Record<string, string | undefined> = process.env, options: SecretStoreOptions = {}): SecretStore {
    const dir = userState(env).configDir.path
    return new SecretStore({
      dir,
      principal: options.principal ?? LOCAL_PRINCIPAL,
      files: { entries: sealedStoreFiles(dir).secrets, key: sealedStoreFiles(dir).key },
      purpose: 'mycelium-secrets',
      what: 'a myc secret store',
      envKey: env.MYC_TOKEN_KEY || undefined,
      vault: env.MYC_TOKEN_KEY ? undefined : osKeyVault(env),
      ...(options.shared ? { shared: options.shared } : {}),
    })
  }

  /** The value of secret `name`, or undefined. */
  async value(name: string): Promise<string | undefined> {
    return (await this.get(name))?.value
  }

  /** Keeps `value` as secret `name` (replacing any), and lists the name. */
  async set(name: string, value: string): Promise<void> {
    await this.put(name, { value, savedAt: Date.now() })
    await this.index((names) => names.add(name))
  }

  /** Forgets secret `name`; false when there was none. */
  async remove(name: string): Promise<boolean> {
    const had = await this.delete(name)
    await this.index((names) => names.delete(name))
    return had
  }

  /** The names of this principal's secrets, sorted (secrets kept before names were listed show once set again). */
  async names(): Promise<string[]> {
    const listed = await this.value(INDEX)
    return listed === undefined ? [] : (JSON.parse(listed) as string[])
  }

  private async index(change: (names: Set<string>) => void): Promise<void> {
    await this.update(INDEX, (current) => {
      const names = new Set(current ? (JSON.parse(current.value) as string[]) : [])
      change(names)
      return names.size === 0 ? null : { value: JSON.stringify([...names].sort()), savedAt: Date.now() }
    })
  }

  /**
   * Keeps `value` under `base`, or under `base-2`, `base-3`… when `base`
   * already holds another value (another project's server of the same key):
   * resolves to the name it is kept under.
   */
  async keep(base: string, value: string): Promise<string> {
    for (let n = 1; ; n++) {
      const name = n === 1 ? base : `${base}-${n}`
      let kept = false
      await this.update(name, (current) => {
        if (current !== undefined && current.value !== value) return undefined
        kept = true
        return current ?? { value, savedAt: Date.now() }
      })
      if (kept) {
        await this.index((names) => names.add(name))
        return name
      }
    }
  }
}

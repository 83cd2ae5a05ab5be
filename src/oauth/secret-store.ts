import { osKeyVault } from './keychain.js'
import { SealedStore } from './sealed-store.js'
import { sealedStoreFiles, userState } from '../config/state-roots.js'
import { LOCAL_PRINCIPAL } from './token-store.js'

/**
 * The secrets of servers added with `myc add` (an API key the registry marks
 * `isSecret`), by the name a config's `${secret:NAME}` gives: a sealed store
 * (sealed-store.ts) beside the OAuth logins, under the same key, so no
 * secret is ever in the project, the config or a `.env` file.
 */

/** One secret as kept. */
export interface StoredSecret {
  value: string
  savedAt: number
}

export class SecretStore extends SealedStore<StoredSecret> {
  /** The local user's store in the user's config folder, its key from MYC_TOKEN_KEY, the key file, or the OS keychain. */
  static forUser(env: Record<string, string | undefined> = process.env): SecretStore {
    const dir = userState(env).configDir.path
    return new SecretStore({
      dir,
      principal: LOCAL_PRINCIPAL,
      files: { entries: sealedStoreFiles(dir).secrets, key: sealedStoreFiles(dir).key },
      purpose: 'mycelium-secrets',
      what: 'a myc secret store',
      envKey: env.MYC_TOKEN_KEY || undefined,
      vault: env.MYC_TOKEN_KEY ? undefined : osKeyVault(env),
    })
  }

  /** The value of secret `name`, or undefined. */
  async value(name: string): Promise<string | undefined> {
    return (await this.get(name))?.value
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
      if (kept) return name
    }
  }
}

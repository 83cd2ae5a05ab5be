import { sealedStoreFiles, userState } from '../config/state-roots.js'
import { osKeyVault, type KeyVault } from './keychain.js'
import { SealedStore, type SharedEntries } from './sealed-store.js'
import type {
  AuthorizationServerMetadata,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client'

/**
 * OAuth logins to HTTP children, kept out of the project: a sealed store
 * (sealed-store.ts; where, says config/state-roots.ts) whose entries are
 * named by server URL, so its file names no server and holds no token text.
 */

export { parseTokenKey, type SealedEntry, type SharedEntries } from './sealed-store.js'

/** One login: what `myc auth login` got, and what a refresh needs. */
export interface StoredLogin {
  serverUrl: string
  tokens: StoredOAuthTokens
  /** When the access token expires (ms since the epoch), from `expires_in`; absent when the server did not say. */
  expiresAt?: number
  client: StoredOAuthClientInformation
  authorizationServerUrl: string
  authorizationServerMetadata?: AuthorizationServerMetadata
  /** The RFC 8707 resource indicator the tokens were issued for. */
  resource?: string
  /** Scope a 403 `insufficient_scope` asked for since: the next login asks for it too (step-up). */
  scopeNeeded?: string
  savedAt: number
}

/** The principal of the CLI and of `myc serve` on stdio. */
export const LOCAL_PRINCIPAL = 'local'

/** The name an entry is kept under: the server URL as the config writes it, normalised. */
function urlKey(serverUrl: string): string {
  return new URL(serverUrl).href
}

export class TokenStore extends SealedStore<StoredLogin> {
  constructor(
    dir: string,
    principal: string,
    envKey: string | undefined = undefined,
    /** The OS keychain to keep the key in (keychain.ts); absent, the key file. */
    vault: KeyVault | undefined = undefined,
    /** Entries shared by replicas instead of the file (their key must be MYC_TOKEN_KEY). */
    shared: SharedEntries | undefined = undefined,
  ) {
    super({
      dir,
      principal,
      envKey,
      vault,
      shared,
      files: { entries: sealedStoreFiles(dir).tokens, key: sealedStoreFiles(dir).key },
      purpose: 'mycelium-oauth-tokens',
      what: 'a myc token store',
    })
  }

  /** The store of `principal` in the user's config folder, its key from MYC_TOKEN_KEY, the key file, or the OS keychain. */
  static forUser(
    principal: string = LOCAL_PRINCIPAL,
    env: Record<string, string | undefined> = process.env,
  ): TokenStore {
    return new TokenStore(
      userState(env).configDir.path,
      principal,
      env.MYC_TOKEN_KEY || undefined,
      env.MYC_TOKEN_KEY ? undefined : osKeyVault(env),
    )
  }

  /** The login of `serverUrl`, or undefined (read on every request of a child: cached until the file changes). */
  override get(serverUrl: string): Promise<StoredLogin | undefined> {
    return super.get(urlKey(serverUrl))
  }

  override update(
    serverUrl: string,
    change: (
      current: StoredLogin | undefined,
    ) => StoredLogin | null | undefined | Promise<StoredLogin | null | undefined>,
  ): Promise<StoredLogin | undefined> {
    return super.update(urlKey(serverUrl), change)
  }
}

import { SecretStore } from '../oauth/secret-store.js'
import { TokenStore } from '../oauth/token-store.js'
import { userState } from '../config/state-roots.js'
import type { Runtime } from '../runtime/runtime.js'
import type { SessionStore } from './session-store.js'

/**
 * With a session store shared by replicas (Redis), the people's OAuth logins
 * (servers with an `oauth` key) and their own secrets (scoped servers'
 * `{ "secret": … }`) are kept there too, sealed with MYC_TOKEN_KEY (the same
 * on every replica: serve-http.ts refuses to start without it): a login or
 * a secret set through one replica is used by every one. The operator's
 * own stay in each machine's files.
 */
export function sharePeople(runtime: Runtime, store: SessionStore | undefined, tokenKey: string | undefined): void {
  if (!store || !tokenKey) return
  if (store.tokenEntries) {
    const entries = store.tokenEntries()
    runtime.setPersonalStores(
      (owner) => new TokenStore(userState().configDir.path, owner, tokenKey, undefined, entries),
    )
  }
  if (store.secretEntries) {
    const entries = store.secretEntries()
    const env = { ...runtime.deps.host.env, MYC_TOKEN_KEY: tokenKey }
    runtime.secrets.share((person) => SecretStore.forUser(env, { principal: person, shared: entries }))
  }
}

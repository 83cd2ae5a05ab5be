import type { ServerConfig } from '../config/server-schema.js'
import type { TokenStore } from '../oauth/token-store.js'
import { redactUrl } from '../redact.js'

/** One HTTP child's login, as `auth status` and `doctor` show it (never a token). */
export interface LoginState {
  server: string
  url: string
  state: 'none' | 'valid' | 'expired' | 'refreshable'
  expiresAt: string | null
  refreshable: boolean
  scopes: string[]
}

/** The login `store` holds for each HTTP or SSE server of `servers` (those `only` keeps), as it stands at `now`. */
export async function loginStates(
  servers: ReadonlyMap<string, ServerConfig>,
  store: Pick<TokenStore, 'get'>,
  options: { now?: number; only?: (config: ServerConfig) => boolean } = {},
): Promise<LoginState[]> {
  const now = options.now ?? Date.now()
  const rows: LoginState[] = []
  for (const [server, config] of servers) {
    if (config.type === 'stdio' || (options.only && !options.only(config))) continue
    const login = await store.get(config.url)
    const expired = login?.expiresAt !== undefined && now >= login.expiresAt
    const refreshable = login?.tokens.refresh_token !== undefined
    rows.push({
      server,
      url: redactUrl(config.url),
      state: !login ? 'none' : !expired ? 'valid' : refreshable ? 'refreshable' : 'expired',
      expiresAt: login?.expiresAt === undefined ? null : new Date(login.expiresAt).toISOString(),
      refreshable,
      scopes: login?.tokens.scope ? login.tokens.scope.split(' ').filter(Boolean) : [],
    })
  }
  return rows
}

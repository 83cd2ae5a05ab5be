import {
  computeScopeUnion,
  refreshAuthorization,
  type AuthProvider,
  type FetchLike,
} from '@modelcontextprotocol/client'
import type { OAuthConfig } from '../config/server-schema.js'
import { MycError } from '../errors.js'
import type { StoredLogin, TokenStore } from './token-store.js'

/** Refresh this long before the access token expires. */
const REFRESH_MARGIN_MS = 60_000
/** How long a refresh request may take (it holds the token store's lock). */
const REFRESH_TIMEOUT_MS = 20_000

/**
 * A child that needs a login myc does not have (or can no longer refresh).
 * Its message says the fix; `myc serve` shows it as the child's error.
 */
export class NeedsLoginError extends MycError {
  constructor(
    readonly server: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super('needs_login', `needs an OAuth login (${reason}); run: myc auth login ${server}`, options)
  }
}

/** The NeedsLoginError in an error's cause chain (the SDK may wrap it), or undefined. */
export function needsLoginIn(error: unknown): NeedsLoginError | undefined {
  let e: unknown = error
  for (let depth = 0; e !== undefined && e !== null && depth < 6; depth++) {
    if (e instanceof NeedsLoginError) return e
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}

/** Whether a login's access token is past (or near) its expiry: within a minute, or half its life for a short-lived one. */
function isExpiring(login: StoredLogin, now: number): boolean {
  if (login.expiresAt === undefined) return false
  const margin = Math.min(REFRESH_MARGIN_MS, Math.max(0, (login.expiresAt - login.savedAt) / 2))
  return now >= login.expiresAt - margin
}

/** A login from a token response: `expires_in` made absolute. */
export function loginWithTokens(
  base: Omit<StoredLogin, 'tokens' | 'expiresAt' | 'savedAt'>,
  tokens: StoredLogin['tokens'],
  now: number,
): StoredLogin {
  return {
    ...base,
    tokens,
    ...(typeof tokens.expires_in === 'number' ? { expiresAt: now + tokens.expires_in * 1000 } : {}),
    savedAt: now,
  }
}

/** A stored client with the secret the config names today (the store keeps no copy of a configured secret). */
function withConfiguredSecret(client: StoredLogin['client'], oauth: OAuthConfig | undefined): StoredLogin['client'] {
  return oauth?.clientId === client.client_id && oauth.clientSecret
    ? { ...client, client_secret: oauth.clientSecret }
    : client
}

/** Refreshes in flight in this process, by store file, principal and server: two callers share one. */
const inFlight = new Map<string, Promise<string>>()

export interface ChildAuthOptions {
  /** The server's config key (named in the fix). */
  key: string
  url: string
  /** The server's `oauth` config: a pre-registered client's secret comes from here, never from the store. */
  oauth?: OAuthConfig | undefined
  store: TokenStore
  fetch?: FetchLike
  now?: () => number
}

/**
 * Refreshes the login of `url` once, however many ask at the same time (in
 * this process, and across processes through the store's lock): a caller
 * that saw `seen` gets the newer token another caller already stored.
 */
export async function refreshLogin(options: ChildAuthOptions, seen: string | undefined): Promise<string> {
  const now = options.now ?? Date.now
  const id = `${options.store.file}\0${options.store.principal}\0${new URL(options.url).href}`
  const running = inFlight.get(id)
  if (running) return running
  const work = (async () => {
    const after = await options.store.update(options.url, async (current) => {
      if (!current) throw new NeedsLoginError(options.key, 'no login is stored for it')
      // Someone else refreshed (another process, or before this call): theirs is the token.
      if (current.tokens.access_token !== seen && !isExpiring(current, now())) return undefined
      const refreshToken = current.tokens.refresh_token
      if (!refreshToken) throw new NeedsLoginError(options.key, 'the login expired and has no refresh token')
      let tokens
      try {
        tokens = await refreshAuthorization(current.authorizationServerUrl, {
          ...(current.authorizationServerMetadata ? { metadata: current.authorizationServerMetadata } : {}),
          clientInformation: withConfiguredSecret(current.client, options.oauth),
          refreshToken,
          ...(current.resource ? { resource: current.resource } : {}),
          // Under the store's lock: a token endpoint that hangs must not hold it.
          fetchFn:
            options.fetch ?? ((url, init) => fetch(url, { ...init, signal: AbortSignal.timeout(REFRESH_TIMEOUT_MS) })),
        })
      } catch (error) {
        throw new NeedsLoginError(
          options.key,
          `the refresh was refused: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        )
      }
      return loginWithTokens(
        current,
        { ...tokens, ...(current.tokens.issuer ? { issuer: current.tokens.issuer } : {}) },
        now(),
      )
    })
    if (!after) throw new NeedsLoginError(options.key, 'no login is stored for it')
    return after.tokens.access_token
  })()
  inFlight.set(id, work)
  try {
    return await work
  } finally {
    inFlight.delete(id)
  }
}

/** The auth of an HTTP child's transport, and what a 403 `insufficient_scope` does to its login. */
export interface ChildAuth extends AuthProvider {
  /** Keeps the scope the server asked for with the login (the next `myc auth login` asks for it) and says the fix. */
  needsScope(scope: string | undefined): Promise<NeedsLoginError>
  /** Whether a login is stored (one that went bad can be asked of the person again; none at all is `myc auth login`'s). */
  hasLogin(): Promise<boolean>
  /** Whether the stored login was granted every scope of `scope` already (then asking the person again for it cannot help). */
  grants(scope: string | undefined): Promise<boolean>
}

/**
 * The `authProvider` of an HTTP child's transport: the stored access token
 * on every request (refreshed first when it is about to expire), a refresh
 * on a 401, and a {@link NeedsLoginError} when only a person can help (no
 * login, or a refresh refused). It never starts an authorization itself:
 * that is `myc auth login`.
 */
export function childAuthProvider(options: ChildAuthOptions): ChildAuth {
  const now = options.now ?? Date.now
  let sent: string | undefined
  return {
    hasLogin: async () => (await options.store.get(options.url)) !== undefined,
    async grants(scope) {
      const granted = new Set((await options.store.get(options.url))?.tokens.scope?.split(' ') ?? [])
      const wanted = (scope ?? '').split(' ').filter(Boolean)
      return wanted.length > 0 && wanted.every((s) => granted.has(s))
    },
    async needsScope(scope) {
      await options.store.update(options.url, (current) =>
        current
          ? {
              ...current,
              ...(computeScopeUnion(current.scopeNeeded, scope)
                ? { scopeNeeded: computeScopeUnion(current.scopeNeeded, scope)! }
                : {}),
            }
          : undefined,
      )
      return new NeedsLoginError(options.key, `the server asks for more scope${scope ? `: ${scope}` : ''}`)
    },
    async token() {
      const login = await options.store.get(options.url)
      if (!login) return (sent = undefined)
      if (isExpiring(login, now())) {
        if (!login.tokens.refresh_token)
          throw new NeedsLoginError(options.key, 'the login expired and has no refresh token')
        return (sent = await refreshLogin(options, login.tokens.access_token))
      }
      return (sent = login.tokens.access_token)
    },
    async onUnauthorized() {
      const login = await options.store.get(options.url)
      if (!login) throw new NeedsLoginError(options.key, 'the server answered 401 and no login is stored for it')
      if (!login.tokens.refresh_token) {
        // Another process may have logged in again since this request was sent.
        if (login.tokens.access_token !== sent) return
        throw new NeedsLoginError(options.key, 'the server refused the stored token and it has no refresh token')
      }
      // The token sent was refused: refresh it (unless another caller already stored a newer one).
      await refreshLogin(options, sent)
    },
  }
}

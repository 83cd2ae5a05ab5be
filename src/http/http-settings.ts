import type { LoadedConfig } from '../config/load.js'
import { formatListen, isLoopbackHost, parseListen, type ListenAddress } from '../config/listen-address.js'
import { MycError } from '../errors.js'
import type { PolicyMode } from '../principal/policy-mode.js'
import type { Runtime } from '../runtime/runtime.js'
import { hasPersonSecrets } from '../children/secret-refs.js'
import { isPersonal } from '../runtime/caller-child.js'
import type { JwtConfig } from './jwt.js'
import {
  checkPrincipals,
  checkScopedTokens,
  launchPrincipal,
  type HttpPrincipal,
  type IdentityCheck,
} from './principals.js'
import { credentialKeyer, readMetricsToken, readTokens, SESSION_SECRET_ENV, type HttpToken } from './bearer-tokens.js'

/**
 * What children are offered over HTTP, whoever connects: elicitation,
 * sampling and roots, which myc routes to the client whose call caused them
 * (a 2025 session, or a 2026 request through an input_required result) and
 * refuses for one that did not declare them. Roots only within a call: a
 * client's roots are places on its own machine, and one shared child
 * cannot follow the roots of many clients, so a child asking outside any
 * call gets none (Runtime.rootsWithinCallsOnly), and no roots list_changed
 * is promised.
 */
export const HTTP_CHILD_CAPABILITIES = { roots: {}, sampling: {}, elicitation: { form: {}, url: {} } }

/** `myc serve --http`'s settings, checked: where to listen and with which tokens. */
export interface HttpSettings {
  listen: ListenAddress
  tokens: HttpToken[]
  /** MYC_TOKEN_KEY, when set: the key of people's OAuth logins shared by the replicas (in the Redis session store). */
  tokenKey?: string
  /** The digest of `http.metricsToken` (read from its variable), if set. */
  metricsToken?: Buffer
  /** `http.metricsListen`, parsed: where metrics are served besides (or instead of) the MCP port. */
  metricsListen?: ListenAddress
  /** `http.jwt`: tokens from an identity provider (verified per request). */
  jwt?: JwtConfig
}

/**
 * Resolves where to listen (`--http` value, else `http.listen`) and reads the
 * tokens from the environment. A bad address, a token variable that is not
 * set, or a non-loopback address without tokens is a config error (exit 2).
 */
export function httpSettings(
  loaded: LoadedConfig,
  flag: string | undefined,
  env: Record<string, string | undefined>,
): HttpSettings {
  const file = loaded.file ?? 'config'
  const listen = listenAddress(loaded, flag, file)
  const keyer = credentialKeyer(env, file)
  const tokens = readTokens(loaded.config.http.tokens, env, file, keyer)
  const { jwt } = loaded.config.http
  checkReplicaKeys(loaded, tokens, keyer.shared, env, file)
  const metricsToken = loaded.config.http.metricsToken
    ? readMetricsToken(loaded.config.http.metricsToken, env, tokens, file)
    : undefined
  const metricsListen = metricsAddress(loaded, listen, file)
  checkPathAndCredentials(loaded, listen, tokens, file)
  return {
    listen,
    tokens,
    ...(env.MYC_TOKEN_KEY ? { tokenKey: env.MYC_TOKEN_KEY } : {}),
    ...(jwt ? { jwt } : {}),
    ...(metricsToken ? { metricsToken } : {}),
    ...(metricsListen ? { metricsListen } : {}),
  }
}

/** Where the MCP endpoint listens: the `--http` value, else `http.listen`. */
function listenAddress(loaded: LoadedConfig, flag: string | undefined, file: string): ListenAddress {
  const fromFlag = flag !== undefined && flag !== ''
  if (fromFlag && flag.startsWith('-'))
    throw new MycError('usage', `--http needs [HOST:]PORT (got "${flag}"), such as --http 127.0.0.1:8808`)
  const parsed = parseListen(fromFlag ? flag : loaded.config.http.listen)
  if (!parsed.ok)
    throw fromFlag
      ? new MycError('usage', `--http: ${parsed.error}`)
      : new MycError('config_invalid', `Invalid config ${file}:\n  http.listen: ${parsed.error}`)
  return parsed.address
}

/**
 * What replicas sharing a Redis session store must share besides it: the
 * key of the tokens' digests (MYC_SESSION_SECRET), and the key that seals
 * people's OAuth logins and own secrets (MYC_TOKEN_KEY); each token's scoped
 * servers are checked between the two, as before.
 */
function checkReplicaKeys(
  loaded: LoadedConfig,
  tokens: HttpToken[],
  sharedKeyer: boolean,
  env: Record<string, string | undefined>,
  file: string,
): void {
  const { jwt } = loaded.config.http
  // A token's sessions are bound to a digest keyed by MYC_SESSION_SECRET: replicas sharing sessions must make the same digests.
  if (loaded.config.http.sessionStore !== 'memory' && tokens.length > 0 && !sharedKeyer) {
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.sessionStore: sessions kept in Redis are bound to a keyed digest of their token, and without ${SESSION_SECRET_ENV} each replica would make its own; set ${SESSION_SECRET_ENV} to the same random value on every replica (e.g. \`openssl rand -hex 32\`)`,
    )
  }
  // People's own OAuth logins (servers with an oauth key) are kept with the sessions in Redis, sealed with a key every replica must share.
  const personal = [...loaded.config.servers.values()].some((c) => !c.disabled && isPersonal(c))
  if (loaded.config.http.sessionStore !== 'memory' && personal && (tokens.length > 0 || jwt) && !env.MYC_TOKEN_KEY) {
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.sessionStore: people's OAuth logins to servers with an "oauth" key are kept in Redis for every replica, sealed with MYC_TOKEN_KEY; set MYC_TOKEN_KEY to the same 32 random bytes on every replica (e.g. \`openssl rand -base64 32\`)`,
    )
  }
  checkScopedTokens(loaded, tokens)
  // People's own secrets ({ "secret": … } of a scoped server, or set over HTTP) are kept in Redis for every replica too.
  const secrets = loaded.config.http.selfServiceSecrets || [...loaded.config.servers.values()].some(hasPersonSecrets)
  if (loaded.config.http.sessionStore !== 'memory' && secrets && (tokens.length > 0 || jwt) && !env.MYC_TOKEN_KEY) {
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.sessionStore: people's own secrets ({ "secret": … } in a scoped server's env) are kept in Redis for every replica, sealed with MYC_TOKEN_KEY; set MYC_TOKEN_KEY to the same 32 random bytes on every replica (e.g. \`openssl rand -base64 32\`)`,
    )
  }
}

/** `http.metricsListen`, parsed: never the MCP endpoint's own address. */
function metricsAddress(loaded: LoadedConfig, listen: ListenAddress, file: string): ListenAddress | undefined {
  if (loaded.config.http.metricsListen === undefined) return undefined
  const m = parseListen(loaded.config.http.metricsListen)
  if (!m.ok) throw new MycError('config_invalid', `Invalid config ${file}:\n  http.metricsListen: ${m.error}`)
  if (m.address.port !== 0 && m.address.port === listen.port && m.address.host === listen.host)
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.metricsListen: ${formatListen(m.address)} is where the MCP endpoint listens; give metrics another port`,
    )
  return m.address
}

/** The path clear of /metrics, exactly one JWT key source, and credentials wherever more than this machine may reach. */
function checkPathAndCredentials(loaded: LoadedConfig, listen: ListenAddress, tokens: HttpToken[], file: string): void {
  const { jwt } = loaded.config.http
  if (loaded.config.http.metrics && loaded.config.http.path === '/metrics')
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.path: /metrics is where metrics are served; choose another path (such as /mcp) or set http.metrics: false`,
    )
  if (jwt && !jwt.jwksUrl === !jwt.publicKey)
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.jwt: give exactly one of jwksUrl (the provider's JWKS address) or publicKey (a PEM public key)`,
    )
  if (tokens.length === 0 && !jwt && !isLoopbackHost(listen.host)) {
    throw new MycError(
      'config_invalid',
      `Invalid config ${file}:\n  http.tokens: ${formatListen(listen)} is not a loopback address, and serving it without credentials would let anyone who reaches it in; add tokens (http.tokens: [{ "env": "MYC_TOKEN_DEV", "role": "developer" }]) or listen on 127.0.0.1`,
    )
  }
}

/**
 * Everything `myc serve --http` checks before a child starts: the address,
 * the tokens, the loopback rule, each token's role and skills. Then offers
 * the children what HTTP sessions can answer (HTTP_CHILD_CAPABILITIES).
 */
export function prepareHttp(input: {
  runtime: Runtime
  loaded: LoadedConfig
  mode: PolicyMode
  flag: string | undefined
  role: string | undefined
  skills: readonly string[] | undefined
  env: Record<string, string | undefined>
  /** Says what in the config means nothing here (a token's role in open mode). */
  notice?: (message: string) => void
}): {
  settings: HttpSettings
  launch: HttpPrincipal
  identity: IdentityCheck
} {
  const settings = httpSettings(input.loaded, input.flag, input.env)
  const asked = launchPrincipal(input.role, input.skills)
  const role = checkPrincipals(
    input.mode,
    input.loaded,
    settings.tokens,
    asked,
    input.env,
    settings.jwt !== undefined,
    input.notice,
  )
  input.runtime.offerClientCapabilities(HTTP_CHILD_CAPABILITIES)
  input.runtime.rootsWithinCallsOnly = true
  const { mode } = input
  // A JWT's role and skills are checked per request against the policy of the moment.
  const identity: IdentityCheck = (claimedRole, claimedSkills) => {
    if (mode.kind === 'open') return { ok: true, skills: [] }
    const policy = mode.state.policy
    if (!mode.state.roles.has(claimedRole)) return { ok: false, reason: `role "${claimedRole}" is not a role here` }
    return { ok: true, skills: claimedSkills.filter((s) => policy.reaches(claimedRole, s)) }
  }
  return { settings, launch: role === undefined ? asked : { ...asked, role }, identity }
}

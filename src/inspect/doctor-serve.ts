import { access, constants } from 'node:fs/promises'
import { createServer } from 'node:net'
import type { LoadedConfig } from '../config/load.js'
import { formatListen, parseListen, type ListenAddress } from '../config/listen-address.js'
import { MycError } from '../errors.js'
import { checkPrincipals, launchPrincipal } from '../http/principals.js'
import { httpSettings } from '../http/http-settings.js'
import { RedisSessionStore } from '../http/session-store.js'
import { TokenStore } from '../oauth/token-store.js'
import { redactUrl } from '../redact.js'
import type { PolicyMode } from '../principal/policy-mode.js'
import { isPersonal } from '../runtime/caller-child.js'
import type { DoctorCheck } from './doctor-check.js'
import { loginStates } from './logins.js'

/** How long `myc doctor` waits for Redis to answer. */
const REDIS_CHECK_MS = 2_000

/**
 * What `myc serve` needs beyond the children: over HTTP, the tokens'
 * variables and roles and the other settings serve checks at start, the
 * addresses it listens on, the Redis of `http.sessionStore`; the CA file
 * Node reads for TLS to HTTPS children and rediss:// (NODE_EXTRA_CA_CERTS);
 * the OAuth logins of servers with an `oauth` key.
 */
export async function serveChecks(
  loaded: LoadedConfig,
  mode: PolicyMode,
  env: Record<string, string | undefined>,
): Promise<DoctorCheck[]> {
  const checks = [settingsCheck(loaded, mode, env)]
  for (const [key, value] of listenAddresses(loaded)) checks.push(await listenCheck(key, value))
  const store = loaded.config.http.sessionStore
  if (store !== 'memory') checks.push(await redisCheck(store))
  const ca = env.NODE_EXTRA_CA_CERTS
  if (ca) checks.push(await caCheck(ca))
  checks.push(...(await loginChecks(loaded, env)))
  return checks
}

/** Everything `serve --http` refuses to start without (exit 2), as it checks it: a failure names the key or the variable. */
function settingsCheck(loaded: LoadedConfig, mode: PolicyMode, env: Record<string, string | undefined>): DoctorCheck {
  try {
    const settings = httpSettings(loaded, undefined, env)
    checkPrincipals(
      mode,
      loaded,
      settings.tokens,
      launchPrincipal(undefined, undefined),
      env,
      settings.jwt !== undefined,
    )
    const credentials =
      settings.tokens.length > 0
        ? `${settings.tokens.length} token${settings.tokens.length === 1 ? '' : 's'}, each variable set`
        : settings.jwt
          ? 'JWTs from http.jwt'
          : 'no tokens (loopback only)'
    return { name: 'serve --http', status: 'ok', detail: `${formatListen(settings.listen)}, ${credentials}` }
  } catch (error) {
    if (!(error instanceof MycError)) throw error
    // A usage error (no role chosen) is one `serve --http --role R` does not meet: worth knowing, not a failure of the config.
    return {
      name: 'serve --http',
      status: error.code === 'usage' ? 'warn' : 'fail',
      detail: error.message.replace(/^Invalid config [^\n]*:\n\s*/, '').replace(/\n\s*/g, '; '),
      fix: 'set what is named in the environment `myc serve --http` starts in (tokens are read once, at start), or fix the key; serve --http exits 2 until then',
    }
  }
}

/** http.listen and http.metricsListen, parsed (a bad one is settingsCheck's failure). */
function listenAddresses(loaded: LoadedConfig): Array<[string, ListenAddress]> {
  const { listen, metricsListen } = loaded.config.http
  const out: Array<[string, ListenAddress]> = []
  for (const [key, value] of [
    ['http.listen', listen],
    ['http.metricsListen', metricsListen],
  ] as const) {
    const parsed = value === undefined ? undefined : parseListen(value)
    if (parsed?.ok && parsed.address.port !== 0) out.push([key, parsed.address])
  }
  return out
}

/** Whether serve could listen there now: bound and let go at once. */
function listenCheck(key: string, address: ListenAddress): Promise<DoctorCheck> {
  const where = formatListen(address)
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', (error: NodeJS.ErrnoException) => {
      const inUse = error.code === 'EADDRINUSE'
      resolve({
        name: key,
        status: inUse ? 'warn' : 'fail',
        detail: inUse
          ? `${where} is in use now (a running myc serve --http, or another program): serve --http cannot listen there while it is`
          : `cannot listen on ${where}: ${error.code ?? error.message}`,
        fix: inUse
          ? 'stop what holds the port, or choose another in the config'
          : error.code === 'EACCES'
            ? 'ports below 1024 need privileges: choose a port of 1024 or more'
            : 'give an address of this machine (127.0.0.1, 0.0.0.0, or one of its interfaces)',
      })
    })
    server.listen({ host: address.host, port: address.port }, () =>
      server.close(() => resolve({ name: key, status: 'ok', detail: `${where} is free` })),
    )
  })
}

/** The Redis of http.sessionStore answers PING within REDIS_CHECK_MS. */
async function redisCheck(url: string): Promise<DoctorCheck> {
  try {
    const store = await RedisSessionStore.connect(url, { connectTimeoutMs: REDIS_CHECK_MS })
    await store.close()
    return { name: 'http.sessionStore', status: 'ok', detail: `${redactUrl(url)} answers` }
  } catch (error) {
    return {
      name: 'http.sessionStore',
      status: 'fail',
      detail: (error instanceof Error ? error.message : String(error)).replace(/^http\.sessionStore: /, ''),
      fix: 'start Redis there, or correct the URL (redis://host:port, rediss:// for TLS); serve --http exits 1 until it answers',
    }
  }
}

/** The extra CA certificates Node reads at start (NODE_EXTRA_CA_CERTS): a file it cannot read is ignored with a warning, and TLS to a private CA then fails. */
async function caCheck(file: string): Promise<DoctorCheck> {
  try {
    await access(file, constants.R_OK)
    return { name: 'NODE_EXTRA_CA_CERTS', status: 'ok', detail: `${file} is readable` }
  } catch (error) {
    return {
      name: 'NODE_EXTRA_CA_CERTS',
      status: 'warn',
      detail: `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): Node ignores it, and TLS to HTTPS children or rediss:// signed by that CA fails`,
      fix: 'point NODE_EXTRA_CA_CERTS at a readable PEM file, or unset it',
    }
  }
}

/** Each server with an `oauth` key: your stored login (behind serve --http each person logs in as themselves). */
async function loginChecks(loaded: LoadedConfig, env: Record<string, string | undefined>): Promise<DoctorCheck[]> {
  const rows = await loginStates(loaded.config.servers, TokenStore.forUser(undefined, env), {
    only: (config) => !config.disabled && isPersonal(config),
  })
  return rows.map((row): DoctorCheck => {
    const name = `login ${row.server}`
    if (row.state === 'valid' || row.state === 'refreshable')
      return {
        name,
        status: 'ok',
        detail:
          row.state === 'valid'
            ? `valid until ${row.expiresAt ?? '(no expiry given)'}`
            : `expired ${row.expiresAt}, refreshable`,
      }
    return {
      name,
      status: 'warn',
      detail: row.state === 'none' ? `no login stored for ${row.url}` : `expired ${row.expiresAt}, not refreshable`,
      fix: `run \`myc auth login ${row.server}\` (behind myc serve --http each person logs in as themselves)`,
    }
  })
}

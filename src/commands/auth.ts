import { defineCommand } from 'citty'
import { commandIO, type CommandIO } from '../command-io.js'
import type { HttpServerConfig } from '../config/server-schema.js'
import { ExitCode, MycError, usageError } from '../errors.js'
import { redactUrl } from '../redact.js'
import { terminalText } from '../terminal-text.js'
import type { TokenStore } from '../oauth/token-store.js'
import { peopleEntries } from './_people-store.js'
import { commonArgs, jsonArgs, principalFlag, printJson, printResult } from './_shared.js'

/** The HTTP child `name` of the config (a usage error names the ones there are). */
async function httpServer(io: CommandIO, configPath: string | undefined, name: string): Promise<HttpServerConfig> {
  const { loadConfig } = await import('../config/load.js')
  const loaded = await loadConfig({ configPath, cwd: io.cwd, env: io.env })
  const http = [...loaded.config.servers].filter(([, c]) => c.type !== 'stdio').map(([k]) => k)
  const config = loaded.config.servers.get(name)
  if (!config)
    throw usageError(
      `no server "${name}" in ${loaded.file ?? 'the config'}${http.length ? ` (HTTP servers: ${http.join(', ')})` : ' (it has no HTTP servers)'}`,
    )
  if (config.type === 'stdio')
    throw usageError(`"${name}" is a stdio server: OAuth logins are for servers of type "http" or "sse"`)
  return config
}

function say(io: CommandIO, text: string): void {
  io.stderr.write(`${terminalText(text)}\n`)
}

function when(ms: number | undefined): string {
  return ms === undefined ? 'no expiry given' : new Date(ms).toISOString()
}

const serverArg = {
  server: {
    type: 'positional',
    required: true,
    description: 'The server key in the config (an http or sse server)',
    valueHint: 'server',
  },
} as const
const principalArg = {
  principal: {
    type: 'string',
    description:
      'Whose logins: an http.tokens name, or jwt:SUBJECT (myc serve --http keeps one login per person for servers with an oauth key); default: yours',
    valueHint: 'name',
  },
} as const

/**
 * Runs `use` on the token store of `--principal` (default: the local
 * user's), its name checked: another person's is where `myc serve --http`
 * with this config reads it (this machine's file, or that config's Redis:
 * _people-store.ts), closed after.
 */
async function withStore<T>(
  io: CommandIO,
  principal: string | undefined,
  configPath: string | undefined,
  use: (store: TokenStore) => Promise<T>,
): Promise<T> {
  const [{ TokenStore }, { userState }] = await Promise.all([
    import('../oauth/token-store.js'),
    import('../config/state-roots.js'),
  ])
  const who = principalFlag(principal)
  const shared = who === undefined ? undefined : await peopleEntries(io, who, configPath, 'logins')
  if (!shared) return use(TokenStore.forUser(who, io.env))
  try {
    return await use(new TokenStore(userState(io.env).configDir.path, who!, shared.key, undefined, shared.entries))
  } finally {
    await shared.close()
  }
}

const login = defineCommand({
  meta: {
    name: 'login',
    description:
      'Log in to an HTTP server with OAuth: prints or opens the authorization URL, waits for the redirect, stores the tokens',
  },
  args: {
    ...commonArgs,
    ...serverArg,
    ...principalArg,
    browser: {
      type: 'boolean',
      default: true,
      description: 'Open the authorization URL in a browser',
      negativeDescription: 'Print the authorization URL as the only line on stdout; open no browser',
    },
    port: {
      type: 'string',
      description: 'Port of the loopback redirect listener http://127.0.0.1:PORT/callback (default: any free port)',
      valueHint: 'port',
    },
    timeout: { type: 'string', description: 'Seconds to wait for the redirect (default 300)', valueHint: 'seconds' },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const port = args.port === undefined ? 0 : Number(args.port)
    if (!Number.isInteger(port) || port < 0 || port > 65_535)
      throw usageError(`--port takes a port number (0-65535), not "${args.port}"`)
    const timeout = args.timeout === undefined ? 300 : Number(args.timeout)
    if (!Number.isFinite(timeout) || timeout <= 0)
      throw usageError(`--timeout takes a number of seconds, not "${args.timeout}"`)
    const config = await httpServer(io, args.config, args.server)
    const { login: runLogin } = await import('../oauth/login.js')
    // `--no-browser` is `browser: false`.
    const noBrowser = args.browser === false
    try {
      const stored = await withStore(io, args.principal, args.config, (store) =>
        runLogin({
          server: args.server,
          config,
          store,
          port,
          timeoutMs: timeout * 1000,
          onAuthorizationUrl: (url) => {
            if (noBrowser) {
              io.stdout.write(`${url.href}\n`)
              say(io, `myc: open the URL above to log in to "${args.server}"; waiting for the redirect…`)
              return
            }
            say(io, `myc: log in to "${args.server}" at:\n${url.href}\nwaiting for the redirect…`)
            if (io.stdout.isTTY || io.stderr.isTTY)
              void import('../oauth/browser.js')
                .then(({ openBrowser }) => openBrowser(url, args.server))
                .catch((error: unknown) => say(io, `myc: ${error instanceof Error ? error.message : String(error)}`))
          },
        }),
      )
      const done = `logged in to "${args.server}" (${redactUrl(config.url)}): token valid until ${when(stored.expiresAt)}${stored.tokens.refresh_token ? ', refreshable' : ''}`
      if (noBrowser) say(io, `myc: ${done}`)
      else printResult(io, done)
      return ExitCode.ok
    } catch (error) {
      if (error instanceof MycError) throw error
      throw new MycError(
        'runtime',
        `login to "${args.server}" failed: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      )
    }
  },
})

const status = defineCommand({
  meta: {
    name: 'status',
    description: "Each HTTP server's login: none, valid until, expired, refreshable; its scopes",
  },
  args: { ...commonArgs, ...jsonArgs, ...principalArg },
  async run({ args, data }) {
    const io = commandIO(data)
    const [{ loadConfig }, { loginStates }] = await Promise.all([
      import('../config/load.js'),
      import('../inspect/logins.js'),
    ])
    const loaded = await loadConfig({ configPath: args.config, cwd: io.cwd, env: io.env })
    const { rows, store } = await withStore(io, args.principal, args.config, async (opened) => {
      const rows = await loginStates(loaded.config.servers, opened)
      return { rows, store: { principal: opened.principal, file: opened.file, keySource: opened.keySource } }
    })
    // Where the key is (MYC_TOKEN_KEY, the OS keychain, the key file): known once a login was opened; null with none stored.
    if (args.json)
      printJson(io, {
        ok: true,
        principal: store.principal,
        store: store.file,
        key: store.keySource ?? null,
        servers: rows,
      })
    else {
      const lines = rows.map(
        (r) =>
          `${r.server.padEnd(20)} ${r.state === 'valid' ? `valid until ${r.expiresAt ?? '(no expiry given)'}${r.refreshable ? ', refreshable' : ''}` : r.state === 'refreshable' ? `expired ${r.expiresAt}, refreshable` : r.state === 'expired' ? `expired ${r.expiresAt}: run myc auth login ${r.server}` : 'none'}${r.scopes.length ? `  scopes: ${r.scopes.join(' ')}` : ''}`,
      )
      printResult(io, lines.length ? lines.join('\n') : 'no HTTP servers in the config')
    }
    return ExitCode.ok
  },
})

const logout = defineCommand({
  meta: { name: 'logout', description: "Forget a server's stored login" },
  args: { ...commonArgs, ...serverArg, ...principalArg },
  async run({ args, data }) {
    const io = commandIO(data)
    const config = await httpServer(io, args.config, args.server)
    const had = await withStore(io, args.principal, args.config, (store) => store.delete(config.url))
    const whose = args.principal === undefined ? '' : ` for ${args.principal}`
    printResult(
      io,
      had
        ? `logged out of "${args.server}"${whose}: its tokens are deleted`
        : `no login was stored for "${args.server}"${whose}`,
    )
    return ExitCode.ok
  },
})

export default defineCommand({
  meta: { name: 'auth', description: 'OAuth logins to HTTP servers: login, status, logout' },
  subCommands: { login, status, logout },
})

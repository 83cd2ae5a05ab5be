import { terminalText } from '../terminal-text.js'
import type { HttpServerConfig } from '../config/server-schema.js'
import type { TokenStore } from './token-store.js'

/** How many authorizations one request may ask the person for (a step-up, then another, …). */
export const MAX_AUTHORIZATIONS_PER_CALL = 3

/** Asks the person to authorize `server` again, and resolves once the new tokens are stored (rejects when they do not come). */
export type Reauthorize = (server: string, config: HttpServerConfig, store: TokenStore, reason: string) => Promise<void>

/**
 * The person asked again while myc runs (`myc serve` on stdio, the agent): a
 * login (oauth/login.ts, the loopback redirect) whose URL `announce` tells
 * (one stderr line `myc: authorize: <url>`, and a browser in a terminal).
 * Two calls that need the same login share it.
 */
export function interactiveReauthorize(options: {
  announce: (url: URL, server: string, reason: string) => void
  timeoutMs?: number
}): Reauthorize {
  const inFlight = new Map<string, Promise<void>>()
  return (server, config, store, reason) => {
    const id = `${store.file}\0${store.principal}\0${new URL(config.url).href}`
    const running = inFlight.get(id)
    if (running) return running
    const work = (async () => {
      const { login } = await import('./login.js')
      await login({
        server,
        config,
        store,
        timeoutMs: options.timeoutMs ?? 180_000,
        onAuthorizationUrl: (url) => options.announce(url, server, reason),
      })
    })().finally(() => inFlight.delete(id))
    inFlight.set(id, work)
    return work
  }
}

/**
 * The person asked on stderr (this process's, unless `stderr` is given):
 * one line `myc: authorize: <url> (server: why)`, and the browser opened
 * when stderr is a terminal.
 */
export function stderrReauthorize(
  options: { timeoutMs?: number; stderr?: NodeJS.WritableStream & { readonly isTTY?: boolean } } = {},
): Reauthorize {
  const { stderr = process.stderr, ...rest } = options
  return interactiveReauthorize({
    ...rest,
    announce: (url, server, reason) => {
      stderr.write(`myc: authorize: ${terminalText(url.href)} (${terminalText(server)}: ${terminalText(reason)})\n`)
      if (stderr.isTTY)
        void import('./browser.js')
          .then(({ openBrowser }) => openBrowser(url, server))
          .catch((error: unknown) =>
            stderr.write(`myc: ${terminalText(error instanceof Error ? error.message : String(error))}\n`),
          )
    },
  })
}

import { spawn } from 'node:child_process'
import path from 'node:path'
import { MycError } from '../errors.js'

/** The only schemes an authorization address may have: anything else could run a program (`file:…/x.desktop`). */
const OPENABLE_SCHEMES: ReadonlySet<string> = new Set(['http:', 'https:'])

/**
 * `url` as a browser may be sent to it: an http or https address, else an
 * error naming the server whose login it is and the scheme. Every
 * authorization address is checked here, before anyone is shown it
 * (oauth/login.ts) and again before a browser is opened (openBrowser).
 */
export function authorizationAddress(url: URL, server: string): URL {
  if (OPENABLE_SCHEMES.has(url.protocol)) return url
  throw new MycError(
    'runtime',
    `the authorization address of "${server}" is a ${url.protocol} address: myc opens and shows only http and https addresses (check the authorization_endpoint of its authorization server's metadata)`,
  )
}

/** A program that opens an address, and its arguments: the address is always one argument of its own. */
export interface Opener {
  command: string
  args: string[]
}

/**
 * How `platform` opens `href`: `open` on macOS, `xdg-open` elsewhere, and on
 * Windows the system's own `rundll32.exe url.dll,FileProtocolHandler`, never
 * `cmd /c start` (cmd would expand `%VARS%` and split the line at `&`), and
 * by its full path (Windows looks in the current folder before PATH). Started
 * without a shell, so nothing in the address is read as a command.
 */
export function openerFor(href: string, platform: NodeJS.Platform, env: NodeJS.ProcessEnv = process.env): Opener {
  if (platform === 'darwin') return { command: 'open', args: [href] }
  if (platform === 'win32') {
    const rundll32 = path.win32.join(env.SystemRoot ?? 'C:\\Windows', 'System32', 'rundll32.exe')
    return { command: rundll32, args: ['url.dll,FileProtocolHandler', href] }
  }
  return { command: 'xdg-open', args: [href] }
}

export interface OpenBrowserOptions {
  /** Whose opener to use (default: this process's platform). */
  platform?: NodeJS.Platform
  /** The opener's environment, where it is looked up (PATH; SystemRoot on Windows); default: this process's. */
  env?: NodeJS.ProcessEnv
}

/**
 * The one place myc starts a browser: opens `url` (an authorization address
 * of `server`'s login) with the platform's opener. Rejects, opening nothing,
 * for an address that is not http or https (authorizationAddress); resolves
 * true once the opener started, false when it could not (quiet: the address
 * is printed too, for the person to open).
 */
export async function openBrowser(url: URL, server: string, options: OpenBrowserOptions = {}): Promise<boolean> {
  // Parsed again from its text: what is checked is exactly what the opener gets.
  const address = authorizationAddress(new URL(url.href), server)
  const { command, args } = openerFor(address.href, options.platform ?? process.platform, options.env)
  return new Promise<boolean>((resolve) => {
    try {
      const child = spawn(command, args, {
        detached: true,
        stdio: 'ignore',
        shell: false,
        windowsHide: true,
        ...(options.env ? { env: options.env } : {}),
      })
      child.once('spawn', () => resolve(true))
      child.once('error', () => resolve(false))
      child.unref()
    } catch {
      // spawn throws at once for some arguments: no browser, and the address is printed already.
      resolve(false)
    }
  })
}

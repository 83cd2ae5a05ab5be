import type { TrustLevel } from './types.js'

/**
 * The Seatbelt profile for `sandbox-exec` (macOS): deny by default; read
 * anywhere; write only under the workspace (`sandboxed`) and a private temp
 * folder; run and signal processes of the sandbox. There is no network rule,
 * so there is no network. Paths are never spliced into the text: they are
 * `(param …)` values passed with -D, so no path can break out of the profile.
 */
export function seatbeltProfile(trust: Exclude<TrustLevel, 'unrestricted'>, proxyPort?: number): string {
  const writable = trust === 'sandboxed' ? '\n  (subpath (param "WORKSPACE"))' : ''
  // With an allow-list, the only way out is myc's filtering proxy on loopback (a port number, never a path).
  const network = proxyPort !== undefined && Number.isInteger(proxyPort) ? `(allow network-outbound (remote ip "localhost:${proxyPort}"))\n` : ''
  return `(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup (global-name "com.apple.system.logger"))
(allow file-read*)
(allow file-write*${writable}
  (subpath (param "TMPDIR"))
  (literal "/dev/null")
  (literal "/dev/tty"))
(deny file-write* (subpath (param "PROTECTED")))
${network}`
}

/** The `sandbox-exec` argument vector: the profile inline, the paths as -D parameters. */
export function sandboxExecArgs(input: { trust: Exclude<TrustLevel, 'unrestricted'>; workspace: string; tmpdir: string; protectedDir: string; argv: readonly string[]; proxyPort?: number }): string[] {
  return ['-p', seatbeltProfile(input.trust, input.proxyPort), '-D', `WORKSPACE=${input.workspace}`, '-D', `TMPDIR=${input.tmpdir}`, '-D', `PROTECTED=${input.protectedDir}`, '--', ...input.argv]
}

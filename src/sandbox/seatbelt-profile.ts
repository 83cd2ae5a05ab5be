import type { TrustLevel } from './types.js'

/**
 * The Seatbelt profile for `sandbox-exec` (macOS): deny by default; read
 * anywhere; write only under the workspace (`sandboxed`) and a private temp
 * folder; run and signal processes of the sandbox. There is no network rule,
 * so there is no network. Paths are never spliced into the text: they are
 * `(param …)` values passed with -D, so no path can break out of the profile.
 */
export function seatbeltProfile(trust: Exclude<TrustLevel, 'unrestricted'>): string {
  const writable = trust === 'sandboxed' ? '\n  (subpath (param "WORKSPACE"))' : ''
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
`
}

/** The `sandbox-exec` argument vector: the profile inline, the paths as -D parameters. */
export function sandboxExecArgs(input: { trust: Exclude<TrustLevel, 'unrestricted'>; workspace: string; tmpdir: string; protectedDir: string; argv: readonly string[] }): string[] {
  return ['-p', seatbeltProfile(input.trust), '-D', `WORKSPACE=${input.workspace}`, '-D', `TMPDIR=${input.tmpdir}`, '-D', `PROTECTED=${input.protectedDir}`, '--', ...input.argv]
}

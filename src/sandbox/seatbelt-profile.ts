import type { TrustLevel } from './types.js'

export interface SeatbeltInput {
  trust: Exclude<TrustLevel, 'unrestricted'>
  workspace: string
  tmpdir: string
  /** myc's own state: neither readable nor writable (missing ones cannot be created either: the rules are by path). */
  hidden: readonly string[]
  /** What the host runs later: readable, never written, renamed or created. */
  readOnly: readonly string[]
  /** Folders between the workspace and a guarded path: written into freely, but never renamed or removed themselves. */
  pinned?: readonly string[]
  /** One file readable although it lies in a hidden folder (run_script's script). */
  exposeFile?: string
  argv: readonly string[]
  proxyPort?: number
}

/**
 * The Seatbelt profile for `sandbox-exec` (macOS): deny by default; read
 * anywhere but myc's state; write only under the workspace (`sandboxed`) and
 * a private temp folder, never to a protected path; run and signal processes
 * of the sandbox. There is no network rule, so there is no network. Later
 * rules win, so the denials follow the allowances. Paths are never spliced
 * into the text: they are `(param …)` values passed with -D, so no path can
 * break out of the profile.
 */
export function seatbeltProfile(
  input: Pick<SeatbeltInput, 'trust' | 'hidden' | 'readOnly' | 'pinned' | 'exposeFile' | 'proxyPort'>,
): string {
  const writable = input.trust === 'sandboxed' ? '\n  (subpath (param "WORKSPACE"))' : ''
  // With an allow-list, the only way out is myc's filtering proxy on loopback (a port number, never a path).
  const network =
    input.proxyPort !== undefined && Number.isInteger(input.proxyPort)
      ? `(allow network-outbound (remote ip "localhost:${input.proxyPort}"))\n`
      : ''
  const hidden = input.hidden.map((_, i) => `(deny file-read* file-write* (subpath (param "HIDDEN_${i}")))\n`).join('')
  const readOnly = input.readOnly.map((_, i) => `(deny file-write* (subpath (param "READONLY_${i}")))\n`).join('')
  const pinned = (input.pinned ?? []).map((_, i) => `(deny file-write* (literal (param "PIN_${i}")))\n`).join('')
  const expose = input.exposeFile ? '(allow file-read* (literal (param "SCRIPT")))\n' : ''
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
${hidden}${readOnly}${pinned}${expose}${network}`
}

/** The `sandbox-exec` argument vector: the profile inline, the paths as -D parameters. */
export function sandboxExecArgs(input: SeatbeltInput): string[] {
  const params = [
    `WORKSPACE=${input.workspace}`,
    `TMPDIR=${input.tmpdir}`,
    ...input.hidden.map((p, i) => `HIDDEN_${i}=${p}`),
    ...input.readOnly.map((p, i) => `READONLY_${i}=${p}`),
    ...(input.pinned ?? []).map((p, i) => `PIN_${i}=${p}`),
    ...(input.exposeFile ? [`SCRIPT=${input.exposeFile}`] : []),
  ]
  return ['-p', seatbeltProfile(input), ...params.flatMap((p) => ['-D', p]), '--', ...input.argv]
}

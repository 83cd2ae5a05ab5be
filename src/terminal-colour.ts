/**
 * Whether myc writes colour to a stream, decided in one place for the usage
 * text (citty), command output, the error line and the logger (src/logger.ts
 * writes its own lines and asks {@link useColour}). citty makes its own
 * choice when it loads (it colours unless NO_COLOR=1, CI or TEST), so myc
 * lets it colour and strips the escape codes at the edge when colour is off.
 */

/** The environment variables the decision reads. */
export type ColourEnv = Readonly<Record<string, string | undefined>>

/**
 * The decision, in order: `NO_COLOR` set to anything non-empty turns colour
 * off everywhere; `FORCE_COLOR` non-empty turns it on even in a pipe, except
 * `0` or `false`, which turn it off; otherwise colour only on a terminal
 * (and not when `TERM=dumb`).
 */
export function useColour(stream: { readonly isTTY?: boolean }, env: ColourEnv = process.env): boolean {
  if (env.NO_COLOR) return false
  const force = env.FORCE_COLOR
  if (force) return force !== '0' && force.toLowerCase() !== 'false'
  return stream.isTTY === true && env.TERM !== 'dumb'
}

/** CSI sequences (colours, cursor moves) and OSC sequences (titles, links). */
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u009b[0-?]*[ -/]*[@-~]/g

/** `text` without terminal escape sequences. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '')
}

/** `text` as it should reach `stream`: unchanged when colour is on, stripped of escape codes when off. */
export function forStream(stream: { readonly isTTY?: boolean }, text: string, env: ColourEnv = process.env): string {
  return useColour(stream, env) ? text : stripAnsi(text)
}

/**
 * Whether myc writes colour to a stream, decided in one place for the usage
 * text (citty), command output and the logger (consola). Both libraries make
 * their own choice when they load (citty colours unless NO_COLOR=1, CI or
 * TEST; consola looks at stdout even when writing to stderr), so myc lets
 * them colour and strips the escape codes at the edge when colour is off.
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

/**
 * A stand-in for `stream` that strips escape codes from what is written to
 * it when colour is off for it (what consola gets for stderr). With colour
 * on, the stream itself.
 */
export function colourAwareStream(stream: NodeJS.WriteStream, env: ColourEnv = process.env): NodeJS.WriteStream {
  if (useColour(stream, env)) return stream
  return new Proxy(stream, {
    get(target, prop) {
      if (prop === 'write') {
        return (chunk: unknown, ...rest: unknown[]) =>
          (target.write as (...a: unknown[]) => boolean)(typeof chunk === 'string' ? stripAnsi(chunk) : chunk, ...rest)
      }
      const value = Reflect.get(target, prop, target) as unknown
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
}

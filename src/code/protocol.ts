/**
 * The lines between myc and code mode's runner (docs/code-mode.md): one JSON
 * object per line, myc → runner on the runner's stdin, runner → myc on its
 * stdout. Every line from the runner is untrusted (the code inside can write
 * to the same stdout): myc reads it with {@link readRunnerLine}, and an
 * inner call is decided again by myc whatever the line says.
 */

/** The tools the code sees: per server (config order), its tools as `[name in code, wire name]`. */
export type ToolTable = Array<[server: string, tools: Array<[tool: string, wireName: string]>]>

/** myc → runner. */
export type ToRunner =
  | { type: 'start'; code: string; tools: ToolTable; memoryMb: number; maxOutputBytes: number }
  /** The session's view changed: sent before the answer of the call that changed it. */
  | { type: 'tools'; tools: ToolTable }
  | { type: 'answer'; id: number; ok: true; value: unknown }
  | { type: 'answer'; id: number; ok: false; message: string }

/** How the code ended, as the runner saw it. */
export type RunEnd =
  /** `value`: the returned value as JSON text (absent for undefined and what JSON cannot say). */
  | { ok: true; value?: string }
  /** `error`: the message and the stack lines of the code itself. */
  | { ok: false; error: string }
  /** The code's heap reached its part of the memory limit. */
  | { ok: false; limit: 'memory' }

/**
 * What became of V8's code cache when the runner started (build/launcher.cjs
 * reports it): read and accepted, read and refused, none for this bundle,
 * Node's own compile cache (Node.js 22.1 and later), or none at all (the
 * single executable's embedded cache, or no trusted cache). Only for tests
 * and debugging: the code inside may forge it.
 */
export type CodeCacheUse = 'accepted' | 'rejected' | 'missing' | 'compile-cache' | 'none'

const CODE_CACHE_USES: readonly string[] = ['accepted', 'rejected', 'missing', 'compile-cache', 'none']

/** The global (a `Symbol.for` key) the launcher sets to a {@link CodeCacheUse}. */
export const CODE_CACHE_KEY = 'mycelium.codeCache'

/** runner → myc. */
export type FromRunner =
  | { type: 'call'; id: number; name: string; arguments: Record<string, unknown> }
  | ({ type: 'done'; output: string; truncated: boolean; codeCache?: CodeCacheUse } & RunEnd)

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A line from the runner, checked field by field; undefined for anything else (the code's own writes to stdout). */
export function readRunnerLine(line: string): FromRunner | undefined {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }
  if (!isPlainObject(value)) return undefined
  if (value.type === 'call') {
    const { id, name, arguments: args } = value
    if (!Number.isSafeInteger(id) || typeof name !== 'string' || !isPlainObject(args)) return undefined
    return { type: 'call', id: id as number, name, arguments: args }
  }
  if (value.type !== 'done' || typeof value.output !== 'string' || typeof value.truncated !== 'boolean')
    return undefined
  const codeCache = CODE_CACHE_USES.includes(value.codeCache as string) ? (value.codeCache as CodeCacheUse) : undefined
  const base = {
    type: 'done' as const,
    output: value.output,
    truncated: value.truncated,
    ...(codeCache && { codeCache }),
  }
  if (value.ok === true)
    return typeof value.value === 'string' ? { ...base, ok: true, value: value.value } : { ...base, ok: true }
  if (value.ok === false && value.limit === 'memory') return { ...base, ok: false, limit: 'memory' }
  if (value.ok === false && typeof value.error === 'string') return { ...base, ok: false, error: value.error }
  return undefined
}

/** The environment variable that makes myc's executable start as the runner (src/cli.ts checks it first). */
export const RUNNER_SWITCH = 'MYC_CODE_RUNNER'

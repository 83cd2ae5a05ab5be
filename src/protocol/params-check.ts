import { isObject } from './facts.js'
/**
 * Hand-written checks of the params of every method myc serves, with
 * messages that name the field (`params.name must be a string (got number)`).
 * They run on every request before anything else sees it, so they are plain
 * functions, not a schema library: a tools/call costs a few property reads.
 * Objects are open (unknown keys pass), as the MCP schema's are.
 */

/** A check returns a problem, or undefined when the value fits. */
export type Check = (value: unknown, path: string) => string | undefined

function kind(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}
const got = (value: unknown) => ` (got ${kind(value)})`

const string: Check = (v, p) => (typeof v === 'string' ? undefined : `${p} must be a string${got(v)}`)
const number: Check = (v, p) =>
  typeof v === 'number' && Number.isFinite(v) ? undefined : `${p} must be a number${got(v)}`
/** A JSON-RPC id or progress token: a string or a (safe) integer. */
const idLike: Check = (v, p) =>
  typeof v === 'string' || Number.isSafeInteger(v) ? undefined : `${p} must be a string or an integer${got(v)}`
const anyObject: Check = (v, p) => (isObject(v) ? undefined : `${p} must be an object${got(v)}`)

function optional(check: Check): Check & { optional: true } {
  return Object.assign((v: unknown, p: string) => (v === undefined ? undefined : check(v, p)), {
    optional: true as const,
  })
}

/**
 * An object with these fields (others allowed). A missing required field is
 * named as such; a missing optional one is not checked further (nor is its
 * path made: every request's params pass here).
 */
function object(shape: Readonly<Record<string, Check>>): Check {
  const entries = Object.entries(shape)
  return (v, p) => {
    if (!isObject(v)) return `${p} must be an object${got(v)}`
    for (const [key, check] of entries) {
      const value = Object.hasOwn(v, key) ? v[key] : undefined
      if (value === undefined) {
        if ((check as { optional?: boolean }).optional) continue
        return `${p}.${key} is required`
      }
      const problem = check(value, `${p}.${key}`)
      if (problem) return problem
    }
    return undefined
  }
}

/** An object whose every value passes `check` (prompt arguments: string to string). */
function record(check: Check): Check {
  return (v, p) => {
    if (!isObject(v)) return `${p} must be an object${got(v)}`
    for (const key of Object.keys(v)) {
      const problem = check(v[key], `${p}[${JSON.stringify(key)}]`)
      if (problem) return problem
    }
    return undefined
  }
}

function oneOf(values: readonly string[]): Check {
  const set = new Set(values)
  return (v, p) =>
    typeof v === 'string' && set.has(v)
      ? undefined
      : `${p} must be one of ${values.join(', ')}${typeof v === 'string' ? ` (got "${v.slice(0, 64)}")` : got(v)}`
}

const RELATED_TASK = 'io.modelcontextprotocol/related-task'
/** `_meta` of any request or notification. */
const meta = optional(object({ progressToken: optional(idLike), [RELATED_TASK]: optional(object({ taskId: string })) }))

/** The params of a request: `_meta` plus the method's own fields. */
function params(shape: Readonly<Record<string, Check>> = {}): Check {
  return object({ _meta: meta, ...shape })
}
const paginated = params({ cursor: optional(string) })
const byUri = params({ uri: string })
const byTask = params({ taskId: string })

const completionRef: Check = (v, p) => {
  if (!isObject(v)) return `${p} must be an object${got(v)}`
  if (v.type === 'ref/prompt') return object({ name: string })(v, p)
  if (v.type === 'ref/resource') return object({ uri: string })(v, p)
  return `${p}.type must be "ref/prompt" or "ref/resource"${typeof v.type === 'string' ? ` (got "${v.type.slice(0, 64)}")` : got(v.type)}`
}

const LOGGING_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const

/**
 * The requests myc serves, each with the check of its params. A method that
 * is not here is answered by the SDK's server (-32601 when nothing handles it).
 */
export const REQUEST_PARAMS: ReadonlyMap<string, Check> = new Map<string, Check>([
  [
    'initialize',
    params({ protocolVersion: string, capabilities: anyObject, clientInfo: object({ name: string, version: string }) }),
  ],
  ['ping', params()],
  ['tools/list', paginated],
  [
    'tools/call',
    params({ name: string, arguments: optional(anyObject), task: optional(object({ ttl: optional(number) })) }),
  ],
  ['prompts/list', paginated],
  ['prompts/get', params({ name: string, arguments: optional(record(string)) })],
  ['resources/list', paginated],
  ['resources/templates/list', paginated],
  ['resources/read', byUri],
  ['resources/subscribe', byUri],
  ['resources/unsubscribe', byUri],
  [
    'completion/complete',
    params({
      ref: completionRef,
      argument: object({ name: string, value: string }),
      context: optional(object({ arguments: optional(record(string)) })),
    }),
  ],
  ['logging/setLevel', params({ level: oneOf(LOGGING_LEVELS) })],
  ['tasks/get', byTask],
  ['tasks/result', byTask],
  ['tasks/cancel', byTask],
  ['tasks/list', paginated],
  // Skills extension (io.modelcontextprotocol/skills)
  ['skills/list', paginated],
  ['skills/get', byUri],
  ['resources/directory/read', params({ uri: string, cursor: optional(string) })],
])

/** Notifications a client sends; others are checked only for their envelope. */
const NOTIFICATION_PARAMS: ReadonlyMap<string, Check> = new Map<string, Check>([
  ['notifications/cancelled', params({ requestId: optional(idLike), reason: optional(string) })],
  [
    'notifications/progress',
    params({ progressToken: idLike, progress: number, total: optional(number), message: optional(string) }),
  ],
])

/** Params of any request or notification without a specific check: an object with a valid `_meta`. */
const ANY_PARAMS: Check = params()

/** The problem with a request's params, or undefined. Absent params are checked as `{}`. */
export function requestParamsProblem(method: string, value: unknown): string | undefined {
  const check = REQUEST_PARAMS.get(method) ?? ANY_PARAMS
  return check(value === undefined ? {} : value, 'params')
}

/** The problem with a notification's params, or undefined. */
export function notificationParamsProblem(method: string, value: unknown): string | undefined {
  const check = NOTIFICATION_PARAMS.get(method) ?? ANY_PARAMS
  return check(value === undefined ? {} : value, 'params')
}

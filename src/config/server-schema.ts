import * as v from 'valibot'
import { SECRET_NAME } from './expand-env.js'

/**
 * The schema of one entry of `mcpServers` (docs/configuration.md), in
 * valibot: a stdio or an HTTP server, its restarts, OAuth, scope and the
 * person's secrets; config/schema.ts holds the rest of the config.
 */

export const positiveInt = (min: number, max: number) =>
  v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max))
const stringMap = v.record(v.string(), v.string())

/**
 * `{ "secret": "NAME" }` as an `env` value: the secret NAME of the person a
 * scoped server's instance runs for (docs/team.md), read when it starts.
 */
const PersonSecretSchema = v.strictObject({
  secret: v.pipe(
    v.string(),
    v.regex(SECRET_NAME, 'must be a name of letters, digits, ".", "_" and "-", starting with a letter or digit'),
  ),
})

const RestartSchema = v.strictObject({
  maxRetries: v.optional(positiveInt(0, 1_000), 5),
  initialDelayMs: v.optional(positiveInt(1, 3_600_000), 500),
  maxDelayMs: v.optional(positiveInt(1, 3_600_000), 30_000),
})

const commonServerKeys = {
  startup: v.optional(v.picklist(['eager', 'lazy']), 'eager'),
  timeoutMs: v.optional(positiveInt(1, 86_400_000), 60_000),
  startupTimeoutMs: v.optional(positiveInt(1, 3_600_000), 30_000),
  disabled: v.optional(v.boolean(), false),
  restart: v.optional(RestartSchema, {}),
  /** Ping the child this often (ms); no answer within 5 s restarts it. 0 turns it off. */
  pingIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(86_400_000)), 30_000),
  /** What its tools and prompts are named after on the wire: the server key (default), another word, or false for their own names. */
  prefix: v.optional(
    v.union(
      [
        v.literal(false),
        v.pipe(
          v.string(),
          v.regex(
            /^[A-Za-z0-9][A-Za-z0-9_-]*$/,
            'starts with a letter or digit and contains only letters, digits, "_" and "-"',
          ),
        ),
      ],
      'must be false (the child\'s own names) or a word such as "gh"',
    ),
  ),
  /**
   * Which protocol era myc speaks to the child: `auto` asks with
   * `server/discover` and falls back to `initialize` (2025), `legacy` only
   * initializes, `modern` insists on MCP 2026-07-28. Absent means `legacy`
   * until myc bridges a modern child's input_required to 2025 clients: see
   * README "Children of the 2026-07-28 era".
   */
  era: v.optional(v.picklist(['auto', 'legacy', 'modern'])),
  /**
   * Serve this child's tools and prompts even when their names, descriptions
   * or schemas hold hidden text (tag characters, bidi controls, control
   * characters), which are otherwise withheld: docs/pinning.md. The long
   * name is so that nobody sets it by accident.
   */
  dangerouslyAllowHiddenText: v.optional(v.boolean()),
}

/**
 * Whom a stdio server's processes are for (docs/team.md): absent or
 * `shared`, one process for everyone; `principal`, one per person;
 * `session`, one per MCP session. The other keys shape a scoped server's
 * instances; they are config errors on a shared one (parse.ts).
 */
const scopeKeys = {
  scope: v.optional(v.picklist(['shared', 'principal', 'session'])),
  /** An instance with no request for this long is stopped (default 600000: ten minutes). */
  idleMs: v.optional(positiveInt(100, 7 * 86_400_000)),
  /** Instances at once (default 50); at the cap the least recently used idle one is stopped. */
  maxInstances: v.optional(positiveInt(1, 100_000)),
  /** Keep an instance's HOME and scratch folders when it stops (default false: removed with it). */
  persist: v.optional(v.boolean()),
  /** Run each instance under the sandbox's executor (bubblewrap), seeing its own folder and no one else's. */
  sandbox: v.optional(v.boolean()),
}

const StdioServerSchema = v.strictObject({
  type: v.literal('stdio'),
  command: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  args: v.optional(v.array(v.string()), []),
  env: v.optional(v.record(v.string(), v.union([v.string(), PersonSecretSchema])), {}),
  cwd: v.optional(v.string()),
  ...scopeKeys,
  ...commonServerKeys,
})

/**
 * OAuth 2.1 for an HTTP child (docs/auth.md): its presence (or the child's
 * 401 challenge) turns the flow on. With no client id, myc registers itself
 * (a Client ID Metadata Document at `clientMetadataUrl`, else dynamic
 * registration).
 */
const OAuthSchema = v.strictObject({
  clientId: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  /** Write it as "${ENV_VAR}": the config is no place for a secret. */
  clientSecret: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  clientMetadataUrl: v.optional(
    v.pipe(
      v.string(),
      v.url('must be an https URL with a path, such as https://example.com/myc-client.json'),
      v.check(
        (u) => /^https:\/\/[^/]+\/./.test(u),
        'must be an https URL with a path, such as https://example.com/myc-client.json',
      ),
    ),
  ),
  /** The scopes to ask for, instead of the ones the server's challenge or metadata names. */
  scopes: v.optional(
    v.array(v.pipe(v.string(), v.regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'must be one scope word (no spaces or quotes)'))),
  ),
})

const HttpServerSchema = v.strictObject({
  type: v.picklist(['http', 'sse']),
  url: v.pipe(v.string(), v.url('must be an absolute URL such as https://example.com/mcp')),
  headers: v.optional(stringMap, {}),
  oauth: v.optional(OAuthSchema),
  ...commonServerKeys,
})

export const ServerSchema = v.variant('type', [StdioServerSchema, HttpServerSchema])

/** Keys that fit each server type, for "does not fit" messages. */
export const STDIO_ONLY_KEYS = [
  'command',
  'args',
  'env',
  'cwd',
  'scope',
  'idleMs',
  'maxInstances',
  'persist',
  'sandbox',
] as const
/** The keys of a scoped server's instances (scope principal or session). */
export const SCOPED_ONLY_KEYS = ['idleMs', 'maxInstances', 'persist', 'sandbox'] as const
export const HTTP_ONLY_KEYS = ['url', 'headers', 'oauth'] as const

export type StdioServerConfig = v.InferOutput<typeof StdioServerSchema>
export type HttpServerConfig = v.InferOutput<typeof HttpServerSchema>
export type OAuthConfig = v.InferOutput<typeof OAuthSchema>
export type ServerConfig = StdioServerConfig | HttpServerConfig
/** Whom a server's processes are for (docs/team.md). */
export type ServerScope = 'shared' | 'principal' | 'session'
/** A scoped server's instance with no request for this long is stopped (`idleMs`'s default). */
export const DEFAULT_INSTANCE_IDLE_MS = 10 * 60_000
/** A scoped server's instances at once (`maxInstances`'s default). */
export const DEFAULT_MAX_INSTANCES = 50

/** `shared` unless a stdio server's `scope` says otherwise. */
export function scopeOf(config: ServerConfig): ServerScope {
  return config.type === 'stdio' ? (config.scope ?? 'shared') : 'shared'
}

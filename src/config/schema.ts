import * as v from 'valibot'
import { parseListen } from './listen-address.js'
import { ROLE_NAME, ROLE_NAME_RULE } from './role-name.js'
import { DEFAULT_MEMORY_DIR, DEFAULT_SKILLS_DIRS } from './state-roots.js'
import { positiveInt, ServerSchema, type ServerConfig } from './server-schema.js'

/**
 * The config schema of docs/configuration.md, in valibot. Objects are strict:
 * an unknown key is an error (with a "did you mean", see errors.ts). The
 * output has every default filled in.
 */

/** The official MCP Registry: the default of `registry.url`. */
export const OFFICIAL_REGISTRY_URL = 'https://registry.modelcontextprotocol.io'

const patternList = v.array(v.pipe(v.string(), v.minLength(1, 'must not be empty')))
const nameList = v.array(v.pipe(v.string(), v.minLength(1, 'must not be empty')))

/** A role name: it names a memory file, so it may not leave the folder. */
const roleName = v.pipe(v.string(), v.regex(ROLE_NAME, `must be a role name: ${ROLE_NAME_RULE}`))

/** A cap on what an agent run spends (docs/tokens.md, "Capping the spend"): USD (needs agent.price), input tokens (cache reads and writes included), output tokens. */
const BudgetSchema = v.strictObject({
  maxUsd: v.optional(v.pipe(v.number(), v.gtValue(0, 'must be more than 0'))),
  maxInputTokens: v.optional(positiveInt(1, Number.MAX_SAFE_INTEGER)),
  maxOutputTokens: v.optional(positiveInt(1, Number.MAX_SAFE_INTEGER)),
})

export const RoleDefinitionSchema = v.strictObject({
  description: v.optional(v.string()),
  allowedSkills: v.optional(nameList),
  deny: v.optional(patternList, []),
  inherits: v.optional(roleName),
  /** The agent's budget for this role: each cap it sets wins over agent.budget's. */
  budget: v.optional(BudgetSchema),
  /** Code mode for this role's sessions and agent runs (docs/code-mode.md): wins over session.codeMode and agent.codeMode; a role that sets none takes its parent's. */
  codeMode: v.optional(v.boolean()),
})

export const ConfigSchema = v.strictObject({
  $schema: v.optional(v.string()),
  mcpServers: v.optional(v.record(v.string(), ServerSchema), {}),
  skills: v.optional(
    v.strictObject({
      dirs: v.optional(v.array(v.string()), [...DEFAULT_SKILLS_DIRS]),
      strict: v.optional(v.boolean(), true),
      maxFileBytes: v.optional(positiveInt(1, 1 << 30), 1_048_576),
      maxSkillBytes: v.optional(positiveInt(1, 1 << 30), 8_388_608),
    }),
  ),
  roles: v.optional(
    v.strictObject({
      default: v.optional(roleName),
      definitions: v.optional(v.record(roleName, RoleDefinitionSchema), {}),
    }),
    {},
  ),
  session: v.optional(
    v.strictObject({
      defaultSkills: v.optional(nameList, []),
      escalation: v.optional(v.picklist(['auto', 'ask', 'manual']), 'auto'),
      protectedSkills: v.optional(nameList, []),
      metaTools: v.optional(v.boolean(), true),
      lazyTools: v.optional(v.boolean(), false),
      /** Code mode (docs/code-mode.md): sessions list myc's meta tools and run_code, which runs a script against the tools in the sandbox. */
      codeMode: v.optional(v.boolean(), false),
    }),
    {},
  ),
  /** The limits and mounts of code mode's runs (docs/code-mode.md). */
  codeMode: v.optional(
    v.strictObject({
      /** Wall-clock time a run may take. */
      timeoutMs: v.optional(positiveInt(100, 3_600_000), 30_000),
      /** Memory of a run's whole process, heap and off-heap (and the size of its scratch folder). */
      memoryMb: v.optional(positiveInt(128, 65_536), 256),
      /** Console output and the returned value are cut at this many bytes. */
      maxOutputBytes: v.optional(positiveInt(1_024, 1 << 26), 65_536),
      /** Folders or files the code may read (read-only), relative to the config's folder; none by default, myc's state never. */
      mounts: v.optional(v.array(v.pipe(v.string(), v.minLength(1, 'must not be empty'))), []),
    }),
    {},
  ),
  namespace: v.optional(
    v.strictObject({
      separator: v.optional(v.picklist(['__', '_', '-', '.', ':']), '__'),
      maxLength: v.optional(positiveInt(16, 256), 64),
    }),
    {},
  ),
  sandbox: v.optional(
    v.strictObject({
      executor: v.optional(v.picklist(['auto', 'bubblewrap', 'sandbox-exec', 'docker', 'none']), 'auto'),
      trust: v.optional(v.picklist(['restricted', 'sandboxed', 'unrestricted']), 'sandboxed'),
      timeoutMs: v.optional(positiveInt(1, 86_400_000), 60_000),
      outputLimitBytes: v.optional(positiveInt(1, 1 << 30), 1_048_576),
      network: v.optional(v.strictObject({ allow: v.optional(v.array(v.string()), []) }), {}),
      docker: v.optional(v.strictObject({ image: v.optional(v.string(), 'node:22-bookworm-slim') }), {}),
      /** The folder commands run in (default: the config's folder). */
      workspace: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
      /** More paths that stay read-only inside (besides .git and .envrc): relative to the workspace; a trailing / marks a folder. */
      protect: v.optional(v.array(v.pipe(v.string(), v.minLength(1, 'must not be empty')))),
      /** More paths that are neither readable nor writable inside (secrets such as .env): relative to the config's folder. */
      hide: v.optional(v.array(v.pipe(v.string(), v.minLength(1, 'must not be empty')))),
    }),
    {},
  ),
  memory: v.optional(
    v.strictObject({
      /** One Markdown file per role (`<role>.memory.md`), relative to the config's folder. */
      dir: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty')), DEFAULT_MEMORY_DIR),
      /** The largest entry `save_memory` accepts (bytes of UTF-8). */
      maxEntryBytes: v.optional(positiveInt(1, 1 << 24), 16 * 1024),
      /** The largest a role's memory file may grow (bytes). */
      maxRoleBytes: v.optional(positiveInt(1024, 1 << 30), 2 * 1024 * 1024),
    }),
    {},
  ),
  audit: v.optional(v.strictObject({ file: v.optional(v.string()) }), {}),
  http: v.optional(
    v.strictObject({
      /** Where `myc serve --http` listens, [HOST:]PORT (`--http` overrides it). */
      listen: v.optional(
        v.pipe(
          v.string(),
          v.check((s) => parseListen(s).ok, 'must be [HOST:]PORT, such as 127.0.0.1:8808, 0.0.0.0:8808 or [::1]:8808'),
        ),
        '127.0.0.1:8808',
      ),
      /** The URL path of the MCP endpoint. */
      path: v.optional(
        v.pipe(v.string(), v.regex(/^\/[A-Za-z0-9._~\-/]*$/, 'must be a URL path starting with "/", such as /mcp')),
        '/mcp',
      ),
      /** Bearer tokens, each read from an environment variable at start; a session is the token's role with its skills. */
      tokens: v.optional(
        v.array(
          v.strictObject({
            env: v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')),
            /** The role its sessions get: required in policy mode, meaningless (and not required) in open mode. */
            role: v.optional(roleName),
            skills: v.optional(nameList),
            name: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
          }),
        ),
        [],
      ),
      /** Browser origins (scheme://host[:port]) allowed to call; any other Origin is refused. */
      allowedOrigins: v.optional(
        v.array(
          v.pipe(v.string(), v.regex(/^https?:\/\/[^/\s?#@]+$/i, 'must be an origin such as https://app.example.com')),
        ),
        [],
      ),
      /** Host names the server answers to besides the loopback names and the listen host (a name behind a proxy). */
      allowedHosts: v.optional(
        v.array(
          v.pipe(
            v.string(),
            v.regex(
              /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)$/,
              'must be a host name without port, such as myc.example.com',
            ),
          ),
        ),
        [],
      ),
      /** Tokens from an identity provider (OAuth 2.1 resource server): verified JWTs whose claims give the role and skills. */
      jwt: v.optional(
        v.strictObject({
          issuer: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
          audience: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
          jwksUrl: v.optional(
            v.pipe(v.string(), v.url('must be an absolute URL such as https://id.example.com/.well-known/jwks.json')),
          ),
          publicKey: v.optional(
            v.pipe(
              v.string(),
              v.includes('BEGIN PUBLIC KEY', 'must be a PEM public key (-----BEGIN PUBLIC KEY-----…)'),
            ),
          ),
          roleClaim: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty')), 'role'),
          skillsClaim: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
          algorithms: v.optional(
            v.array(
              v.picklist(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']),
            ),
          ),
          resource: v.optional(v.pipe(v.string(), v.url('must be the absolute URL of this MCP endpoint'))),
        }),
      ),
      /** `GET /metrics` in Prometheus text format (needs http.metricsToken, or is served on http.metricsListen only); false: not served. */
      metrics: v.optional(v.boolean(), true),
      /** The bearer token of `GET /metrics` and of `/readyz`'s details, read from an environment variable at start (never one of http.tokens). */
      metricsToken: v.optional(
        v.strictObject({
          env: v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')),
        }),
      ),
      /** Another address, [HOST:]PORT, that serves only /metrics and /readyz with details (the MCP endpoint's port then has no /metrics). */
      metricsListen: v.optional(
        v.pipe(
          v.string(),
          v.check((s) => parseListen(s).ok, 'must be [HOST:]PORT, such as 127.0.0.1:9464'),
        ),
      ),
      /** Requests per credential (a token, a JWT subject, or the launch's principal): a token bucket; over it, 429 with Retry-After. */
      rateLimit: v.optional(
        v.strictObject({
          requestsPerMinute: positiveInt(1, 1_000_000),
          /** How many requests may come at once; default: requestsPerMinute. */
          burst: v.optional(positiveInt(1, 1_000_000)),
        }),
      ),
      maxSessions: v.optional(positiveInt(1, 1_000_000), 1_000),
      /** Sessions one credential (a token, a JWT subject, the launch's principal) may hold (across replicas with Redis); at the cap its least recently used idle one makes room for a new one (429 only when all are busy). */
      maxSessionsPerCredential: v.optional(positiveInt(1, 1_000_000), 16),
      /** Requests one session may have in flight; one more is refused at once (429). */
      maxInFlightPerSession: v.optional(positiveInt(1, 100_000), 64),
      /** POST requests one credential may have in flight, bodies still arriving included; one more is refused at once (429). */
      maxInFlightPerCredential: v.optional(positiveInt(1, 1_000_000), 128),
      /** How long a request body may take to arrive; later, 408 and the connection is closed. */
      bodyTimeoutMs: v.optional(positiveInt(100, 3_600_000), 30_000),
      /** Connections one client address may hold open (behind a proxy, every client is the proxy's address); one more gets 429 and is closed. */
      maxConnectionsPerAddress: v.optional(positiveInt(1, 1_000_000), 512),
      /** A session with no request for this long is closed (its id then answers 404). */
      sessionIdleMs: v.optional(positiveInt(100, 30 * 86_400_000), 30 * 60_000),
      /** `PUT /secrets/<name>`: a person sets their own secret with their credential (docs/team.md); off unless true. */
      selfServiceSecrets: v.optional(v.boolean()),
      /** Where session state lives: "memory" (this process) or a Redis URL (redis://, rediss://) shared by replicas. */
      sessionStore: v.optional(
        v.union(
          [
            v.literal('memory'),
            v.pipe(
              v.string(),
              v.regex(/^rediss?:\/\/\S+$/, 'must be "memory" or a Redis URL such as redis://127.0.0.1:6379'),
            ),
          ],
          'must be "memory" or a Redis URL such as redis://127.0.0.1:6379',
        ),
        'memory',
      ),
    }),
    {},
  ),
  /** The MCP Registry `myc search` and `myc add` read (docs/registry.md): its base URL, a path prefix kept. */
  registry: v.optional(
    v.strictObject({
      url: v.optional(
        v.pipe(
          v.string(),
          v.regex(
            /^https?:\/\/[^\s/?#]+[^\s?#]*$/i,
            'must be an http(s) base URL such as https://registry.modelcontextprotocol.io',
          ),
        ),
        OFFICIAL_REGISTRY_URL,
      ),
    }),
    {},
  ),
  limits: v.optional(
    v.strictObject({
      /** The largest message a client may send (bytes); a larger one is refused with an error. */
      maxMessageBytes: v.optional(positiveInt(1024, 1 << 30), 4 * 1024 * 1024),
    }),
    {},
  ),
  /** OpenTelemetry tracing and metrics (the standard OTEL_* variables win over these). */
  telemetry: v.optional(
    v.strictObject({
      /** OTLP/HTTP base URL (traces go to <endpoint>/v1/traces, metrics to <endpoint>/v1/metrics), as OTEL_EXPORTER_OTLP_ENDPOINT. */
      endpoint: v.optional(v.pipe(v.string(), v.url('must be a URL such as http://127.0.0.1:4318'))),
      protocol: v.optional(v.picklist(['http/protobuf', 'http/json'])),
      serviceName: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
      headers: v.optional(v.record(v.string(), v.string())),
    }),
  ),
  agent: v.optional(
    v.strictObject({
      /** The model; without it, ANTHROPIC_MODEL, else myc's default (see agent/model.ts). */
      model: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
      maxTurns: v.optional(positiveInt(1, 1_000), 50),
      maxTokens: v.optional(positiveInt(1, 1_000_000), 8_192),
      /** `myc adhoc`: the role it works as. */
      adhocRole: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty')), 'adhoc'),
      /** Code mode for the agent (run, workflow, adhoc, chat; docs/code-mode.md): the model gets run_code; a role's codeMode wins. */
      codeMode: v.optional(v.boolean(), false),
      /** In adhoc, tools at or above this risk ask first (denied without a terminal unless --approve). */
      approvalThreshold: v.optional(v.picklist(['low', 'medium', 'high', 'critical']), 'high'),
      /** Where sessions are recorded (default .mycelium/sessions beside the config). */
      sessionsDir: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
      /** A small model that picks skills from their descriptions when no trigger matched the task. */
      classifier: v.optional(v.strictObject({ model: v.pipe(v.string(), v.minLength(1, 'must not be empty')) })),
      /** USD per million tokens, to report a run's cost (session_end.costUsd). */
      price: v.optional(
        v.strictObject({
          inputPerMTok: v.pipe(v.number(), v.minValue(0)),
          outputPerMTok: v.pipe(v.number(), v.minValue(0)),
          cacheReadPerMTok: v.optional(v.pipe(v.number(), v.minValue(0))),
          cacheWritePerMTok: v.optional(v.pipe(v.number(), v.minValue(0))),
        }),
      ),
      /** Caps on a run's spend (a role's budget wins, cap by cap; --max-budget-usd and --max-tokens-total win over both). */
      budget: v.optional(BudgetSchema),
      /** `mycelium__delegate`: nested agents limited to one skill's tools. */
      workers: v.optional(
        v.strictObject({
          enabled: v.optional(v.boolean(), false),
          /** Workers at once (calls beyond wait for a free one). */
          max: v.optional(positiveInt(1, 64), 2),
          /** Turn limit of one worker. */
          maxTurns: v.optional(positiveInt(1, 1_000), 20),
        }),
        {},
      ),
      /** Risk levels by tool pattern; they win over annotations and names. */
      risk: v.optional(
        v.array(
          v.strictObject({
            pattern: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
            level: v.picklist(['low', 'medium', 'high', 'critical']),
          }),
        ),
        [],
      ),
    }),
    {},
  ),
})

type RawConfigOutput = v.InferOutput<typeof ConfigSchema>
export type BudgetConfig = v.InferOutput<typeof BudgetSchema>

/** The resolved config: defaults filled in, servers in a Map in file order. */
export type MyceliumConfig = Omit<RawConfigOutput, 'mcpServers' | '$schema'> & {
  servers: Map<string, ServerConfig>
}

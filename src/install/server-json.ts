import * as v from 'valibot'

/**
 * The MCP Registry's documents (its OpenAPI file and the server.json schema
 * of modelcontextprotocol/registry): a server's `server.json` with its
 * packages and remotes, the answer for one version, and a page of the list.
 * Read loosely (a registry may add fields) but checked for what `myc add`
 * and `myc search` use, so an answer of another shape is refused with the
 * field that is wrong.
 */

const text = v.string()
const flag = v.optional(v.boolean())

/** One value a person may have to give: an environment variable, a header, an argument, or a variable inside one. */
const InputEntries = {
  description: v.optional(text),
  isRequired: flag,
  isSecret: flag,
  format: v.optional(text),
  value: v.optional(text),
  default: v.optional(text),
  placeholder: v.optional(text),
  choices: v.optional(v.array(text)),
}
const InputSchema = v.looseObject(InputEntries)
const WithVariables = { ...InputEntries, variables: v.optional(v.record(text, InputSchema)) }

const KeyValueInputSchema = v.looseObject({ ...WithVariables, name: v.pipe(text, v.minLength(1)) })
const ArgumentSchema = v.variant('type', [
  v.looseObject({
    ...WithVariables,
    type: v.literal('positional'),
    valueHint: v.optional(text),
    isRepeated: flag,
  }),
  v.looseObject({ ...WithVariables, type: v.literal('named'), name: v.pipe(text, v.minLength(1)), isRepeated: flag }),
])

const RemoteSchema = v.looseObject({
  type: v.picklist(['streamable-http', 'sse']),
  url: v.pipe(text, v.minLength(1)),
  headers: v.optional(v.array(KeyValueInputSchema)),
  variables: v.optional(v.record(text, InputSchema)),
})
const TransportSchema = v.variant('type', [v.looseObject({ type: v.literal('stdio') }), RemoteSchema])

const PackageSchema = v.looseObject({
  registryType: v.pipe(text, v.minLength(1)),
  registryBaseUrl: v.optional(text),
  identifier: v.pipe(text, v.minLength(1)),
  version: v.optional(text),
  runtimeHint: v.optional(text),
  transport: TransportSchema,
  runtimeArguments: v.optional(v.array(ArgumentSchema)),
  packageArguments: v.optional(v.array(ArgumentSchema)),
  environmentVariables: v.optional(v.array(KeyValueInputSchema)),
})

const ServerJsonSchema = v.looseObject({
  name: v.pipe(text, v.minLength(1)),
  title: v.optional(text),
  description: v.optional(text),
  version: v.pipe(text, v.minLength(1)),
  packages: v.optional(v.array(PackageSchema)),
  remotes: v.optional(v.array(RemoteSchema)),
})

const ServerResponseSchema = v.looseObject({ server: ServerJsonSchema })
const ServerListSchema = v.looseObject({
  servers: v.array(ServerResponseSchema),
  metadata: v.optional(v.looseObject({ nextCursor: v.optional(v.nullable(text)) })),
})

export type Input = v.InferOutput<typeof InputSchema>
export type Argument = v.InferOutput<typeof ArgumentSchema>
export type Remote = v.InferOutput<typeof RemoteSchema>
export type Package = v.InferOutput<typeof PackageSchema>
export type ServerJson = v.InferOutput<typeof ServerJsonSchema>
export type ServerList = v.InferOutput<typeof ServerListSchema>

/** Why a document is not of the shape asked for: the first problem, with its path (`servers[2].server.version`). */
function firstProblem(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0]!
  const where = (issue.path ?? [])
    .map((p) => (typeof p.key === 'number' ? `[${p.key}]` : `.${String(p.key)}`))
    .join('')
    .replace(/^\./, '')
  if (issue.input === undefined) return `${where || '(top level)'}: missing`
  const got = issue.input === null ? 'null' : Array.isArray(issue.input) ? 'a list' : typeof issue.input
  return `${where || '(top level)'}: expected ${issue.expected ?? 'another value'}, got ${got}`
}

/** A parsed document, or why it is not one. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string }

function parseWith<T>(schema: v.GenericSchema<unknown, T>, document: unknown): Parsed<T> {
  const result = v.safeParse(schema, document)
  return result.success ? { ok: true, value: result.output } : { ok: false, problem: firstProblem(result.issues) }
}

/** One version's answer (`{ server: … }`), or a bare server.json (a file of a server's repository). */
export function parseServerJson(document: unknown): Parsed<ServerJson> {
  const inner =
    document !== null && typeof document === 'object' && 'server' in document
      ? (document as { server: unknown }).server
      : document
  return parseWith(ServerJsonSchema, inner)
}

/** A page of `GET /v0.1/servers`. */
export function parseServerList(document: unknown): Parsed<ServerList> {
  return parseWith(ServerListSchema, document)
}

/** How a server can run, in words (`npm`, `pypi`, `oci`, `remote`, or the registry type as written): each once, in order. */
export function kindsOf(server: ServerJson): string[] {
  const kinds = (server.packages ?? []).map((p) => p.registryType.toLowerCase())
  if ((server.remotes ?? []).length > 0) kinds.push('remote')
  return [...new Set(kinds)]
}

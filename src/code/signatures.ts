/**
 * A tool's TypeScript signature as code mode's `search_tools` gives it
 * (docs/code-mode.md): `tools.fs.read_file(args: { path: string }): Promise<string>`.
 * Made from the tool's JSON Schemas, short on purpose (a model reads it):
 * no descriptions, `unknown` where a schema says more than a type can
 * (`$ref`, conditionals), and a depth past which everything is `unknown`.
 */

type Schema = Record<string, unknown>

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/
/** How deep nested objects and arrays are spelled out before `unknown`. */
const MAX_DEPTH = 4
/** Past this many members, a union or object ends in `…` (a comment, so the signature stays valid TypeScript). */
const MAX_MEMBERS = 30

/** `a.b` for an identifier, `a["b-c"]` otherwise. */
function member(base: string, key: string): string {
  return IDENTIFIER.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`
}

/**
 * The signature of `tools.<server>.<tool>`: its arguments from the input
 * schema, its value from the output schema (a call returns the structured
 * content), else `unknown` (the text, or structured content the tool did
 * not declare).
 */
export function toolSignature(server: string, tool: string, inputSchema: unknown, outputSchema?: unknown): string {
  const args = typeScript(inputSchema, 0)
  const optional = !hasRequired(inputSchema)
  const value = outputSchema === undefined ? 'unknown' : typeScript(outputSchema, 0)
  return `${member(member('tools', server), tool)}(args${optional ? '?' : ''}: ${args}): Promise<${value}>`
}

function hasRequired(schema: unknown): boolean {
  return isSchema(schema) && Array.isArray(schema.required) && schema.required.length > 0
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A JSON Schema as a TypeScript type. */
export function typeScript(schema: unknown, depth: number): string {
  if (schema === true || schema === undefined) return 'unknown'
  if (schema === false) return 'never'
  if (!isSchema(schema) || depth > MAX_DEPTH) return 'unknown'
  if ('const' in schema) return literal(schema.const)
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal))
  const variants = (
    Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined
  ) as unknown[] | undefined
  if (variants) return union(variants.map((v) => typeScript(v, depth + 1)))
  if (Array.isArray(schema.allOf)) return schema.allOf.map((v) => typeScript(v, depth + 1)).join(' & ') || 'unknown'
  const types = Array.isArray(schema.type) ? (schema.type as unknown[]) : [schema.type]
  if (schema.type === undefined) return schema.properties !== undefined ? objectType(schema, depth) : 'unknown'
  return union(types.map((t) => ofType(t, schema, depth)))
}

function ofType(type: unknown, schema: Schema, depth: number): string {
  switch (type) {
    case 'string':
      return 'string'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'null':
      return 'null'
    case 'array': {
      const items = typeScript(schema.items, depth + 1)
      return /^[A-Za-z]+(\[\])*$/.test(items) ? `${items}[]` : `Array<${items}>`
    }
    case 'object':
      return objectType(schema, depth)
    default:
      return 'unknown'
  }
}

function objectType(schema: Schema, depth: number): string {
  const properties = isSchema(schema.properties) ? Object.entries(schema.properties) : []
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  const members = properties.slice(0, MAX_MEMBERS).map(([key, value]) => {
    const name = IDENTIFIER.test(key) ? key : JSON.stringify(key)
    return `${name}${required.has(key) ? '' : '?'}: ${typeScript(value, depth + 1)}`
  })
  if (properties.length > MAX_MEMBERS) members.push('/* … */')
  const extra = schema.additionalProperties
  if (isSchema(extra)) members.push(`[key: string]: ${typeScript(extra, depth + 1)}`)
  else if (members.length === 0 && extra !== false) return 'Record<string, unknown>'
  return members.length === 0 ? '{}' : `{ ${members.join('; ')} }`
}

function literal(value: unknown): string {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value) ? JSON.stringify(value) : 'unknown'
}

function union(members: string[]): string {
  const unique = [...new Set(members)]
  if (unique.length === 0) return 'never'
  if (unique.includes('unknown')) return 'unknown'
  const shown = unique.slice(0, MAX_MEMBERS)
  return unique.length > MAX_MEMBERS ? `${shown.join(' | ')} /* | … */` : shown.join(' | ')
}

import { toJsonSchema } from '@valibot/to-json-schema'
import { ConfigSchema } from './schema.js'

/**
 * The JSON Schema of mycelium.config.json, generated from the valibot schema
 * (input side: what people write). `build/gen-schema.ts` writes it to
 * `mycelium.schema.json`; a test keeps the two in sync. Server entries
 * also accept Claude's spelling without `type` (inferred from command/url),
 * so `type` is optional here.
 */
export function configJsonSchema(): Record<string, unknown> {
  const schema = toJsonSchema(ConfigSchema, { target: 'draft-07', typeMode: 'input', errorMode: 'ignore' }) as Record<
    string,
    unknown
  >
  type Option = { required?: string[]; properties?: Record<string, unknown> }
  const servers = (
    schema.properties as Record<string, { additionalProperties?: { oneOf?: Option[]; anyOf?: Option[] } }>
  ).mcpServers
  const options = servers?.additionalProperties?.oneOf ?? servers?.additionalProperties?.anyOf ?? []
  if (options.length !== 2) throw new Error('mycelium.schema.json: expected two server shapes (stdio, http/sse)')
  for (const option of options) {
    option.required = (option.required ?? []).filter((key) => key !== 'type')
    const type = option.properties?.type as { enum?: unknown[]; const?: unknown } | undefined
    if (type?.const === 'stdio') option.properties!.type = { const: 'stdio' }
    if (type?.enum) option.properties!.type = { enum: [...type.enum, 'streamable-http'] }
  }
  return { title: 'Mycelium config (mycelium.config.json)', ...schema }
}

import type { StandardSchemaV1 } from '@modelcontextprotocol/client'

/**
 * A result "schema" that accepts any value as it is. Results a child sends
 * are the client's to interpret: parsing them would cost time on the hot path
 * and could drop fields a newer protocol added.
 */
export const passthrough: StandardSchemaV1<unknown, Record<string, unknown>> = {
  '~standard': {
    version: 1,
    vendor: 'mycelium',
    validate: (value) => ({ value: value as Record<string, unknown> }),
  },
}

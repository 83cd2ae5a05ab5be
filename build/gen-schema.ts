// Writes mycelium.schema.json from the valibot config schema: `npx tsx build/gen-schema.ts`.
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { configJsonSchema } from '../src/config/json-schema.js'

const out = fileURLToPath(new URL('../mycelium.schema.json', import.meta.url))
writeFileSync(out, `${JSON.stringify(configJsonSchema(), null, 2)}\n`)
process.stderr.write(`wrote ${out}\n`)

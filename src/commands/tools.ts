import { defineCommand } from 'citty'
import { createLogger } from '../logger.js'
import { clientNameWarnings } from '../registry/wire-names.js'
import { commonArgs, jsonArgs, printJson, printResult } from './_shared.js'
import { withStartedRuntime } from './_runtime.js'

export default defineCommand({
  meta: { name: 'tools', description: 'The tools a client would see: canonical id, wire name, server, description' },
  args: { ...commonArgs, ...jsonArgs },
  async run({ args }) {
    const logger = createLogger({ verbose: args.verbose, quiet: args.json })
    const tools = await withStartedRuntime({ configPath: args.config, logger }, async (runtime) =>
      runtime.catalogue.tools().map((entry) => ({
        id: entry.id,
        wireName: entry.wireName,
        server: entry.server,
        name: entry.name,
        description: entry.def.description ?? '',
        warnings: clientNameWarnings(entry.wireName),
      })),
    )
    if (args.json) {
      printJson({ ok: true, tools })
      return 0
    }
    if (tools.length === 0) {
      printResult('no tools (no server running or none configured; see `myc status`)')
      return 0
    }
    const width = Math.max(...tools.map((t) => t.wireName.length))
    const lines = tools.map((t) => `${t.wireName.padEnd(width)}  ${t.id === t.wireName ? '' : `${t.id}  `}${firstLine(t.description)}`)
    for (const t of tools) for (const w of t.warnings) lines.push(`warning: ${t.wireName}: ${w}`)
    printResult(lines.join('\n'))
    return 0
  },
})

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? ''
  return line.length > 80 ? `${line.slice(0, 77)}...` : line
}

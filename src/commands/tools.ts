import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { terminalText } from '../terminal-text.js'
import { builtinTools, toolsReport } from '../inspect/reports.js'
import { createView } from '../principal/policy-mode.js'
import { PolicyView } from '../principal/policy-view.js'
import { commonArgs, jsonArgs, principalArgs, printJson, printResult, splitList, commandLogger } from './_shared.js'
import { withStartedRuntime } from './_runtime.js'

export default defineCommand({
  meta: {
    name: 'tools',
    description:
      'The tools a role would see: wire name, canonical id (server:tool) and the first line of the description (--json: each apart)',
  },
  args: {
    ...commonArgs,
    ...jsonArgs,
    ...principalArgs,
    all: { type: 'boolean', description: 'Every tool of the catalogue, each marked visible or hidden' },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const logger = commandLogger(io, { verbose: args.verbose, quiet: args.json })
    const result = await withStartedRuntime({ io, args, logger }, async ({ runtime, loaded, mode }) => {
      const view = createView(mode, loaded, {
        role: args.role,
        skills: splitList(args.skills),
        env: io.env,
        catalogue: runtime.catalogue,
        logger,
      })
      if (mode.kind === 'open' || !(view instanceof PolicyView))
        return {
          role: null,
          tools: toolsReport(runtime.catalogue, (e) => view.toolVisible(e), [], args.all === true),
        }
      // The built-ins `myc serve` would offer this principal (exec and run_script included when a skill allows them).
      const filter = mode.state.policy.filter(view.role, new Set(view.activeSkills))
      const builtins = builtinTools(filter, {
        metaTools: loaded.config.session.metaTools,
        naming: loaded.config.namespace,
      })
      return {
        role: view.role,
        tools: toolsReport(runtime.catalogue, (e) => view.toolVisible(e), builtins, args.all === true),
      }
    })
    if (args.json) {
      printJson(io, { ok: true, ...result })
      return 0
    }
    const { tools } = result
    if (tools.length === 0) {
      printResult(io, 'no tools (no server running or none configured; see `myc status`)')
      return 0
    }
    // The columns `myc tools --help` names: wire name, canonical id, the description's first line.
    const width = Math.max(...tools.map((t) => t.wireName.length))
    const idWidth = Math.max(...tools.map((t) => t.id.length))
    const lines = tools.map((t) =>
      `${args.all ? (t.visible ? '+ ' : '- ') : ''}${t.wireName.padEnd(width)}  ${t.id.padEnd(idWidth)}  ${firstLine(terminalText(t.description))}`.trimEnd(),
    )
    for (const t of tools) for (const w of t.warnings) lines.push(`warning: ${t.wireName}: ${w}`)
    printResult(io, lines.join('\n'))
    return 0
  },
})

/** The first line of a description, cut to 80 characters as shown (its control characters already made visible, so that they count). */
function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? ''
  return line.length > 80 ? `${line.slice(0, 77)}...` : line
}

import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import type { LoadedConfig } from '../config/load.js'
import { terminalText } from '../terminal-text.js'
import { builtinTools, toolsReport, type BuiltinTool, type ToolRow } from '../inspect/reports.js'
import { modeLine, shownMode, type ShownMode } from '../inspect/mode-line.js'
import { checkViewRequest, createView, type PolicyMode } from '../principal/policy-mode.js'
import { PolicyView } from '../principal/policy-view.js'
import type { PrincipalView } from '../principal/view.js'
import { visibleTools } from '../runtime/principal-tools.js'
import type { Runtime } from '../runtime/runtime.js'
import {
  commonArgs,
  jsonArgs,
  principalArgs,
  printHeader,
  printJson,
  printResult,
  splitList,
  commandLogger,
} from './_shared.js'
import { withStartedRuntime, type Inspection } from './_runtime.js'

export default defineCommand({
  meta: {
    name: 'tools',
    description:
      'The tools a session of a role is offered (lazy open mode included): wire name, canonical id (server:tool) and the first line of the description (--json: each apart); the mode and role above them',
  },
  args: {
    ...commonArgs,
    ...jsonArgs,
    ...principalArgs,
    all: { type: 'boolean', description: 'Every tool of the catalogue, each marked offered (+) or not (-)' },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const logger = commandLogger(io, { verbose: args.verbose, quiet: args.json })
    const principal = { role: args.role, skills: splitList(args.skills), env: io.env }
    const check = ({ loaded, mode }: Omit<Inspection, 'runtime'>) => void checkViewRequest(mode, loaded, principal)
    const result = await withStartedRuntime({ io, args, logger, check }, async ({ runtime, loaded, mode }) => {
      const view = createView(mode, loaded, { ...principal, catalogue: runtime.catalogue, logger })
      return { ...sessionTools(runtime, loaded, mode, view, args.all === true), file: loaded.file }
    })
    const { file, shown, tools } = result
    if (args.json) {
      printJson(io, { ok: true, ...shown, tools })
      return 0
    }
    const builtins = tools.filter((t) => t.server === 'mycelium' && t.visible).map((t) => t.wireName)
    printHeader(io, modeLine(shown, { file }, { wireNames: builtins }))
    printResult(io, render(tools, args.all === true))
    return 0
  },
})

/**
 * What a session of `view` is offered, as `myc serve` lists it: in policy
 * mode the role's tools and the built-ins it would get; in open mode every
 * tool, or in lazy open mode (session.lazyTools) its two tools only, the
 * others reachable by name (`--all` shows them, marked not offered).
 */
function sessionTools(
  runtime: Runtime,
  loaded: LoadedConfig,
  mode: PolicyMode,
  view: PrincipalView,
  all: boolean,
): { shown: ShownMode; tools: ToolRow[] } {
  if (mode.kind === 'policy' && view instanceof PolicyView) {
    // The built-ins `myc serve` would offer this principal (exec and run_script included when a skill allows them).
    const filter = mode.state.policy.filter(view.role, new Set(view.activeSkills))
    const builtins = builtinTools(filter, {
      metaTools: loaded.config.session.metaTools,
      naming: loaded.config.namespace,
    })
    return {
      shown: shownMode(mode, loaded, view.role),
      tools: toolsReport(runtime.catalogue, (e) => view.toolVisible(e), builtins, all),
    }
  }
  const listsChildren = view.listsChildTools !== false
  const builtins: BuiltinTool[] = visibleTools(runtime, view)
    .filter((t) => t.id.startsWith('mycelium:'))
    .map((t) => ({ name: t.id.slice('mycelium:'.length), wireName: t.wireName, wire: t.def, visible: true }))
  return {
    shown: shownMode(mode, loaded, null),
    tools: toolsReport(runtime.catalogue, (e) => listsChildren && view.toolVisible(e), builtins, all),
  }
}

/** The columns `myc tools --help` names: wire name, canonical id, the description's first line; then warnings. */
function render(tools: readonly ToolRow[], all: boolean): string {
  if (tools.length === 0) return 'no tools (no server running or none configured; see `myc status`)'
  const width = Math.max(...tools.map((t) => t.wireName.length))
  const idWidth = Math.max(...tools.map((t) => t.id.length))
  const lines = tools.map((t) =>
    `${all ? (t.visible ? '+ ' : '- ') : ''}${t.wireName.padEnd(width)}  ${t.id.padEnd(idWidth)}  ${firstLine(terminalText(t.description))}`.trimEnd(),
  )
  for (const t of tools) for (const w of t.warnings) lines.push(`warning: ${t.wireName}: ${w}`)
  return lines.join('\n')
}

/** The first line of a description, cut to 80 characters as shown (its control characters already made visible, so that they count). */
function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? ''
  return line.length > 80 ? `${line.slice(0, 77)}...` : line
}

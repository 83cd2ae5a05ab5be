import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { DEFAULT_CONFIG_FILES } from '../config/load.js'
import { redactUrls } from '../redact.js'
import { ExitCode } from '../errors.js'
import type { Runtime } from '../runtime/runtime.js'
import { defaultMode, modeLine } from '../inspect/mode-line.js'
import { commonArgs, jsonArgs, printHeader, printJson, printResult, commandLogger } from './_shared.js'
import { withStartedRuntime } from './_runtime.js'
import { withholdingText } from '../pinning/gate.js'
import { scopeOf } from '../config/server-schema.js'
import { showHiddenText } from '../pinning/hidden-text.js'

export default defineCommand({
  meta: {
    name: 'status',
    description:
      'Start the children, report each one’s state and its tools, prompts, resources and MCP version, or its error (--json: also its start time), and what is withheld, then exit',
  },
  args: { ...commonArgs, ...jsonArgs },
  async run({ args, data }) {
    const io = commandIO(data)
    const logger = commandLogger(io, { verbose: args.verbose, quiet: args.json })
    const report = await withStartedRuntime(
      { io, args, logger, failuresShown: true, withheldShown: true },
      async ({ runtime, loaded, mode }) => ({
        ...statusReport(runtime),
        shown: defaultMode(mode, loaded, io.env),
      }),
    )
    const ok = report.servers.every((s) => s.state !== 'FAILED')
    // --json keeps its documented fields: the folder looked in is for the text report.
    const { dir: _dir, shown, config, ...rest } = report
    if (args.json) printJson(io, { ok, config, ...shown, ...rest })
    else {
      printHeader(io, modeLine(shown, { file: config ?? undefined }, { asDefault: true }))
      printResult(io, render(report))
    }
    // No config is the embedded default, a state myc runs in (it serves, with no servers): nothing failed, so exit 0.
    return ok ? ExitCode.ok : ExitCode.checkFailed
  },
})

/** Each configured server as it is now, the config it came from, the names left out as conflicts, what is withheld. */
function statusReport(runtime: Runtime) {
  const servers = [...runtime.loaded.config.servers].map(([key, config]) => {
    const child = runtime.supervisor.children.get(key)
    return {
      key,
      type: config.type,
      // Whom its processes are for (docs/team.md): what is shown here is its own process, the local person's.
      scope: scopeOf(config),
      state: child ? child.state : 'DISABLED',
      startup: config.startup,
      tools: child?.lists.tools.length ?? 0,
      prompts: child?.lists.prompts.length ?? 0,
      resources: child?.lists.resources.length ?? 0,
      resourceTemplates: child?.lists.resourceTemplates.length ?? 0,
      startedAt: child?.startedAt?.toISOString() ?? null,
      serverInfo: child?.serverInfo ? { name: child.serverInfo.name, version: child.serverInfo.version } : null,
      era: child?.era ?? null,
      protocolVersion: child?.protocolVersion ?? null,
      // A start error can quote the child's URL: without its secrets.
      error: child?.lastError === undefined ? null : redactUrls(child.lastError),
    }
  })
  // Withheld (docs/pinning.md): changed or new since pinned, of a server not in the lock, or holding hidden text.
  const withheld = runtime.catalogue.withheld().map((w) => ({
    id: w.id,
    server: w.server,
    kind: w.kind,
    name: w.name,
    reason: w.reason,
    ...(w.text ? { text: [...w.text] } : {}),
    message: withholdingText(w),
  }))
  const { file, dir } = runtime.loaded
  return {
    config: file ?? null,
    dir,
    servers,
    conflicts: runtime.catalogue.conflicts,
    pinning: runtime.pinning,
    withheld,
  }
}

/** The text report: the config (or how to start without one), one line per server, the conflicts, what is withheld. */
function render(report: ReturnType<typeof statusReport>): string {
  const lines =
    report.config === null
      ? [
          `config: none in ${report.dir} (no ${DEFAULT_CONFIG_FILES.join(', ')}, no --config, no MYC_CONFIG): no servers`,
          'to start: `myc init` writes a starter mycelium.config.json and skills here (or give --config FILE)',
        ]
      : [`config: ${report.config}`]
  if (report.config !== null && report.servers.length === 0)
    lines.push(`no servers configured: add them under "mcpServers" in ${report.config}`)
  for (const s of report.servers) {
    const counts = `${s.tools} tools, ${s.prompts} prompts, ${s.resources} resources`
    lines.push(
      `${s.state.padEnd(9)} ${s.key.padEnd(20)} ${s.state === 'RUNNING' ? `${counts}${s.protocolVersion ? `, MCP ${s.protocolVersion}` : ''}${s.scope === 'shared' ? '' : `, one per ${s.scope === 'principal' ? 'person' : 'session'}`}` : (s.error ?? '')}`,
    )
  }
  for (const c of report.conflicts)
    lines.push(`conflict: ${c.kind} "${c.name}" from ${c.kept} and ${c.dropped}; ${c.dropped} left out`)
  for (const w of report.withheld)
    lines.push(`withheld: ${w.kind === 'prompt' ? 'prompt ' : ''}${showHiddenText(w.id)}: ${w.message}`)
  return lines.join('\n')
}

import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { redactUrls } from '../redact.js'
import { ExitCode } from '../errors.js'
import { commonArgs, jsonArgs, printJson, printResult, commandLogger } from './_shared.js'
import { withStartedRuntime } from './_runtime.js'
import { withholdingText } from '../pinning/gate.js'
import { scopeOf } from '../config/schema.js'
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
      async ({ runtime }) => {
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
        return {
          config: runtime.loaded.file ?? null,
          servers,
          conflicts: runtime.catalogue.conflicts,
          pinning: runtime.pinning,
          withheld,
        }
      },
    )
    const failed = report.servers.filter((s) => s.state === 'FAILED')
    const ok = failed.length === 0
    if (args.json) {
      printJson(io, { ok, ...report })
    } else {
      const lines = [`config: ${report.config ?? '(none: embedded default)'}`]
      if (report.servers.length === 0) lines.push('no servers configured')
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
      printResult(io, lines.join('\n'))
    }
    return ok ? ExitCode.ok : ExitCode.checkFailed
  },
})

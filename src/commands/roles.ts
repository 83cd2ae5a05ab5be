import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { roleWarnings, rolesReport } from '../inspect/reports.js'
import type { PolicyMode } from '../principal/policy-mode.js'
import { commonArgs, jsonArgs, printJson, printResult, commandLogger } from './_shared.js'
import { requirePolicy, withStartedRuntime } from './_runtime.js'

export default defineCommand({
  meta: { name: 'roles', description: 'Roles, where each comes from, and the skills each may reach' },
  args: { ...commonArgs, ...jsonArgs },
  async run({ args, data }) {
    const io = commandIO(data)
    const logger = commandLogger(io, { verbose: args.verbose, quiet: args.json })
    const check = ({ mode }: { mode: PolicyMode }) => void requirePolicy(mode)
    const { roles, warnings } = await withStartedRuntime({ io, args, logger, check }, async ({ mode }) => {
      const state = requirePolicy(mode)
      return { roles: rolesReport(state.policy), warnings: roleWarnings(state.sources).warnings }
    })
    if (args.json) printJson(io, { ok: true, roles, warnings })
    else
      printResult(
        io,
        [
          ...roles.map(
            (r) =>
              `${r.name}${r.inherits.length ? ` (inherits ${r.inherits.join(' → ')})` : ''}\n  from: ${r.sources.join(', ')}\n  skills: ${r.skills.join(', ') || 'none'}${r.deny.length ? `\n  deny: ${r.deny.join(', ')}` : ''}`,
          ),
          ...warnings.map((w) => `warning: ${w}`),
        ].join('\n'),
      )
    return 0
  },
})

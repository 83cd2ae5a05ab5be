import { defineCommand } from 'citty'
import { rolesReport } from '../inspect/reports.js'
import { createLogger } from '../logger.js'
import { commonArgs, jsonArgs, printJson, printResult } from './_shared.js'
import { requirePolicy, withStartedRuntime } from './_runtime.js'

export default defineCommand({
  meta: { name: 'roles', description: 'Roles, where each comes from, and the skills each may reach' },
  args: { ...commonArgs, ...jsonArgs },
  async run({ args }) {
    const logger = createLogger({ verbose: args.verbose, quiet: args.json })
    const roles = await withStartedRuntime({ configPath: args.config, logger }, async ({ mode }) => rolesReport(requirePolicy(mode).policy))
    if (args.json) printJson({ ok: true, roles })
    else printResult(roles.map((r) => `${r.name}${r.inherits.length ? ` (inherits ${r.inherits.join(' → ')})` : ''}\n  from: ${r.sources.join(', ')}\n  skills: ${r.skills.join(', ') || 'none'}${r.deny.length ? `\n  deny: ${r.deny.join(', ')}` : ''}`).join('\n'))
    return 0
  },
})

import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { MycError } from '../errors.js'
import { policyCheck, roleWarnings } from '../inspect/reports.js'
import type { PolicyMode } from '../principal/policy-mode.js'
import { commonArgs, jsonArgs, printJson, printResult, commandLogger } from './_shared.js'
import { requirePolicy, withStartedRuntime } from './_runtime.js'

const check = defineCommand({
  meta: { name: 'check', description: 'What a role can reach; exits 3 if a rule is violated' },
  args: {
    ...commonArgs,
    ...jsonArgs,
    role: {
      type: 'string',
      description: 'The role to check (`myc roles` lists them)',
      required: true,
      valueHint: 'role',
    },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const logger = commandLogger(io, { verbose: args.verbose, quiet: true })
    // The role is checked before any child starts.
    const check = ({ mode }: { mode: PolicyMode }) => {
      const { roles } = requirePolicy(mode)
      if (!roles.has(args.role))
        throw new MycError('usage', `unknown role "${args.role}"; roles: ${[...roles.keys()].join(', ')}`)
    }
    const report = await withStartedRuntime({ io, args, logger, check }, async ({ runtime, mode }) => {
      const state = requirePolicy(mode)
      return policyCheck(state.policy, runtime.catalogue, args.role, roleWarnings(state.sources))
    })
    const ok = report.violations.length === 0
    if (args.json) printJson(io, { ok, ...report })
    else
      printResult(
        io,
        `role ${report.role}\nservers: ${report.servers.join(', ') || 'none'}\nskills: ${report.skills.join(', ') || 'none'}\ntools: ${report.tools.length}\nmemory: ${report.memory}${report.memoryWrites ? ` (reads ${report.memoryReads === 'all' ? 'every role' : report.memoryReads.join(', ')}; writes ${report.memoryWrites})` : ''}${report.violations.map((v) => `\nviolation: ${v}`).join('')}${report.warnings.map((w) => `\nwarning: ${w}`).join('')}`,
      )
    return ok ? 0 : 3
  },
})

export default defineCommand({
  meta: { name: 'policy', description: 'Policy checks' },
  subCommands: { check },
})

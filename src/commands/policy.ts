import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { MycError } from '../errors.js'
import { policyCheck, roleWarnings } from '../inspect/reports.js'
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
    const report = await withStartedRuntime({ io, args, logger }, async ({ runtime, mode }) => {
      const state = requirePolicy(mode)
      const policy = state.policy
      if (!policy.roles.has(args.role))
        throw new MycError('usage', `unknown role "${args.role}"; roles: ${[...policy.roles.keys()].join(', ')}`)
      return policyCheck(policy, runtime.catalogue, args.role, roleWarnings(state.sources))
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

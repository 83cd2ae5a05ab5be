import { defineCommand } from 'citty'
import { MycError } from '../errors.js'
import { explainTool } from '../policy/explain.js'
import { initialSkills } from '../policy/escalation.js'
import { createLogger } from '../logger.js'
import { commonArgs, jsonArgs, principalArgs, printJson, printResult, splitList } from './_shared.js'
import { requirePolicy, withStartedRuntime } from './_runtime.js'

export default defineCommand({
  meta: { name: 'explain', description: 'Why a tool is visible or hidden for a role, rule by rule' },
  args: { ...commonArgs, ...jsonArgs, ...principalArgs, tool: { type: 'positional', description: 'server:tool or its wire name', required: true } },
  async run({ args }) {
    const logger = createLogger({ verbose: args.verbose, quiet: true })
    const explanation = await withStartedRuntime({ configPath: args.config, logger }, async ({ runtime, loaded, mode }) => {
      const policy = requirePolicy(mode).policy
      const role = args.role ?? process.env.MYCELIUM_ROLE ?? loaded.config.roles.default
      if (!role) throw new MycError('USAGE', 'explain needs --role R')
      const entry = runtime.catalogue.toolById(args.tool) ?? runtime.catalogue.toolByWire(args.tool)
      const colon = args.tool.indexOf(':')
      const [server, tool] = entry ? [entry.server, entry.name] : colon > 0 ? [args.tool.slice(0, colon), args.tool.slice(colon + 1)] : [undefined, undefined]
      if (server === undefined || tool === undefined) throw new MycError('USAGE', `"${args.tool}" is not in the catalogue; write it as server:tool`)
      const active = initialSkills(policy, role, loaded.config.session.defaultSkills, splitList(args.skills) ?? [])
      return explainTool(policy, { server, tool, role, active, inCatalogue: entry !== undefined })
    })
    if (args.json) printJson({ ok: true, ...explanation })
    else printResult(`${explanation.tool} is ${explanation.visible ? 'VISIBLE' : 'HIDDEN'} for role ${explanation.role}\n${explanation.steps.map((s) => `  [${s.verdict}] ${s.rule}: ${s.detail}`).join('\n')}`)
    return 0
  },
})

import { defineCommand } from 'citty'
import { MycError } from '../errors.js'
import { previewSkill } from '../inspect/reports.js'
import { initialSkills } from '../policy/escalation.js'
import { createLogger } from '../logger.js'
import { commonArgs, jsonArgs, principalArgs, printJson, printResult, splitList } from './_shared.js'
import { requirePolicy, withStartedRuntime } from './_runtime.js'

const skill = defineCommand({
  meta: { name: 'skill', description: 'The tool-list diff activating a skill would cause' },
  args: { ...commonArgs, ...jsonArgs, ...principalArgs, id: { type: 'positional', description: 'Skill name', required: true } },
  async run({ args }) {
    const logger = createLogger({ verbose: args.verbose, quiet: true })
    const preview = await withStartedRuntime({ configPath: args.config, logger }, async ({ runtime, loaded, mode }) => {
      const policy = requirePolicy(mode).policy
      const role = args.role ?? process.env.MYCELIUM_ROLE ?? loaded.config.roles.default
      if (!role) throw new MycError('USAGE', 'preview needs --role R')
      const active = initialSkills(policy, role, loaded.config.session.defaultSkills, splitList(args.skills) ?? [])
      const result = previewSkill(policy, runtime.catalogue, role, active, args.id)
      if (!result.ok) throw new MycError('USAGE', result.error)
      return result
    })
    if (args.json) printJson(preview)
    else printResult(`activating ${preview.skill} for role ${preview.role} adds ${preview.added.length} tools (~${preview.addedTokens} tokens of schema):\n${preview.added.map((t) => `  + ${t.wireName}`).join('\n')}`)
    return 0
  },
})

export default defineCommand({
  meta: { name: 'preview', description: 'Preview a change' },
  subCommands: { skill },
})

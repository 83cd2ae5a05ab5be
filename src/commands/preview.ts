import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { MycError } from '../errors.js'
import { previewSkill } from '../inspect/reports.js'
import { TOKEN_COUNTER } from '../principal/token-count.js'
import { commonArgs, jsonArgs, principalArgs, printJson, printResult, commandLogger } from './_shared.js'
import { principalFor, requirePolicy, withStartedRuntime, type Inspection } from './_runtime.js'

const skill = defineCommand({
  meta: { name: 'skill', description: 'The tool-list diff activating a skill would cause' },
  args: {
    ...commonArgs,
    ...jsonArgs,
    ...principalArgs,
    id: { type: 'positional', description: 'Skill name (`myc skills` lists them)', required: true },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const logger = commandLogger(io, { verbose: args.verbose, quiet: true })
    const check = ({ loaded, mode }: Omit<Inspection, 'runtime'>) =>
      void principalFor(args, loaded, requirePolicy(mode), io.env)
    const preview = await withStartedRuntime({ io, args, logger, check }, async ({ runtime, loaded, mode }) => {
      const state = requirePolicy(mode)
      const { role, active } = principalFor(args, loaded, state, io.env)
      const result = previewSkill(state.policy, runtime.catalogue, role, active, args.id, loaded.config.namespace)
      if (!result.ok) throw new MycError('usage', result.error)
      return result
    })
    // addedTokens is counted by the one counter of myc's reports (token-count.ts; `myc tokens` uses it too).
    if (args.json) printJson(io, { ...preview, counter: TOKEN_COUNTER })
    else if (preview.alreadyActive)
      printResult(io, `${preview.skill} is already active for role ${preview.role}: activating it adds no tools`)
    else
      printResult(
        io,
        `activating ${preview.skill} for role ${preview.role} adds ${preview.added.length} tools (~${preview.addedTokens} tokens of schema, ${TOKEN_COUNTER}):\n${preview.added.map((t) => `  + ${t.wireName}`).join('\n')}`,
      )
    return 0
  },
})

export default defineCommand({
  meta: { name: 'preview', description: 'Preview a change' },
  subCommands: { skill },
})

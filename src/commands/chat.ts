import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { version } from '../version.js'
import { commonArgs, principalArgs, splitList, commandLogger } from './_shared.js'
import { budgetArgs, budgetFlags, repeated } from './_agent.js'

export default defineCommand({
  meta: {
    name: 'chat',
    description:
      'Talk with the agent: a prompt on a terminal (slash commands: /help), or one turn per line of piped stdin',
  },
  args: {
    ...commonArgs,
    ...principalArgs,
    model: {
      type: 'string',
      description: 'Model (else agent.model, else ANTHROPIC_MODEL, else the default)',
      valueHint: 'model',
    },
    resume: { type: 'string', description: 'Continue a recorded session (id or saved name)', valueHint: 'id' },
    approve: {
      type: 'string',
      description: 'Allow without asking: a risk level (that and below) or a tool pattern; repeatable (as adhoc)',
      valueHint: 'level|pattern',
    },
    ...budgetArgs,
  },
  async run({ args, rawArgs, data }) {
    const io = commandIO(data)
    const { runChat } = await import('../agent/chat.js')
    return runChat({
      configPath: args.config,
      role: args.role,
      skills: splitList(args.skills),
      model: args.model,
      resume: args.resume,
      approve: repeated(rawArgs, '--approve'),
      budget: budgetFlags(args),
      logger: commandLogger(io, { verbose: args.verbose, quiet: !args.verbose }),
      env: io.env,
      version,
      input: io.stdin,
      output: io.stdout,
      errors: io.stderr,
    })
  },
})

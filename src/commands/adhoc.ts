import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { agentArgs, repeated, runAgentCommand } from './_agent.js'

export default defineCommand({
  meta: {
    name: 'adhoc',
    description:
      'Run one task as the adhoc role (agent.adhocRole); risky tools ask first, and are denied without a terminal unless --approve allows them',
  },
  args: {
    ...agentArgs,
    approve: {
      type: 'string',
      description: 'Allow without asking: a risk level (that and below) or a tool pattern; repeatable',
      valueHint: 'level|pattern',
    },
    context: {
      type: 'string',
      description: 'A failure context a workflow wrote (.mycelium/context/…), for the model to start from',
      valueHint: 'file',
    },
  },
  run: ({ args, rawArgs, data }) =>
    runAgentCommand(commandIO(data), 'adhoc', args, { approve: repeated(rawArgs, '--approve'), context: args.context }),
})

import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { agentArgs, runAgentCommand } from './_agent.js'

export default defineCommand({
  meta: {
    name: 'workflow',
    description:
      "Run one task with the skills' scripts only; a failed script writes a context file and --on-failure decides (exit 3 unless handed off)",
  },
  args: {
    ...agentArgs,
    'on-failure': {
      type: 'string',
      description: 'prompt (ask on a terminal, else print the adhoc command), auto (hand off to adhoc at once) or exit',
      valueHint: 'prompt|auto|exit',
    },
  },
  run: ({ args, data }) => runAgentCommand(commandIO(data), 'workflow', args, { onFailure: args['on-failure'] }),
})

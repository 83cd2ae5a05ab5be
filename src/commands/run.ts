import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { MycError } from '../errors.js'
import { agentArgs, repeated, runAgentCommand } from './_agent.js'

export default defineCommand({
  meta: {
    name: 'run',
    description:
      'Run one task with the agent, headless; --json prints the event stream (JSON Lines). Exits 3 when the task fails',
  },
  args: {
    ...agentArgs,
    mode: {
      type: 'string',
      description: 'run (default), workflow or adhoc: the same as `myc workflow` / `myc adhoc`',
      valueHint: 'run|workflow|adhoc',
    },
    'on-failure': {
      type: 'string',
      description: 'With --mode workflow: prompt, auto or exit',
      valueHint: 'prompt|auto|exit',
    },
    approve: {
      type: 'string',
      description: 'With --mode adhoc: allow without asking (a risk level or a tool pattern); repeatable',
      valueHint: 'level|pattern',
    },
    context: {
      type: 'string',
      description: 'With --mode adhoc: a failure context file to start from',
      valueHint: 'file',
    },
  },
  run: ({ args, rawArgs, data }) => {
    const mode = args.mode ?? 'run'
    if (mode !== 'run' && mode !== 'workflow' && mode !== 'adhoc')
      throw new MycError('usage', `--mode takes run, workflow or adhoc, not "${mode}"`)
    return runAgentCommand(commandIO(data), mode, args, {
      approve: repeated(rawArgs, '--approve'),
      onFailure: args['on-failure'],
      context: args.context,
    })
  },
})

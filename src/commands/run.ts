import { defineCommand } from 'citty'
import { agentArgs, runAgentCommand } from './_agent.js'

export default defineCommand({
  meta: { name: 'run', description: 'Run one task with the agent, headless; --json prints the event stream (JSON Lines). Exits 3 when the task fails' },
  args: agentArgs,
  run: ({ args }) => runAgentCommand('run', args),
})

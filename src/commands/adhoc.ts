import { defineCommand } from 'citty'
import { agentArgs, repeated, runAgentCommand } from './_agent.js'

export default defineCommand({
  meta: { name: 'adhoc', description: 'Run one task as the adhoc role (agent.adhocRole); risky tools ask first, and are denied without a terminal unless --approve allows them' },
  args: {
    ...agentArgs,
    approve: { type: 'string', description: 'Allow without asking: a risk level (that and below) or a tool pattern; repeatable', valueHint: 'level|pattern' },
  },
  run: ({ args, rawArgs }) => runAgentCommand('adhoc', args, { approve: repeated(rawArgs, '--approve') }),
})

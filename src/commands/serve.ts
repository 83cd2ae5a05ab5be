import { defineCommand } from 'citty'
import { createLogger } from '../logger.js'
import { openRuntime } from '../runtime/open-runtime.js'
import { serveStdio } from '../server/serve-stdio.js'
import { createView } from '../session/policy-mode.js'
import { version } from '../version.js'
import { commonArgs, principalArgs, splitList } from './_shared.js'

export default defineCommand({
  meta: { name: 'serve', description: 'Run the aggregator as an MCP server on stdio' },
  args: { ...commonArgs, ...principalArgs },
  async run({ args }) {
    const logger = createLogger({ verbose: args.verbose })
    const { runtime, loaded, mode } = await openRuntime({ configPath: args.config, logger, version })
    const view = createView(mode, loaded, { role: args.role, skills: splitList(args.skills), env: process.env, catalogue: runtime.catalogue, logger })
    if (mode.kind === 'policy') logger.info(`policy mode: role ${(view as { role?: string }).role}`)
    return serveStdio({ runtime, view, logger })
  },
})

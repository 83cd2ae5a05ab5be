import { defineCommand } from 'citty'
import { createLogger } from '../logger.js'
import { openRuntime } from '../runtime/open-runtime.js'
import { serveStdio } from '../server/serve-stdio.js'
import { openView } from '../server/view.js'
import { version } from '../version.js'
import { commonArgs } from './_shared.js'

export default defineCommand({
  meta: { name: 'serve', description: 'Run the aggregator as an MCP server on stdio' },
  args: { ...commonArgs },
  async run({ args }) {
    const logger = createLogger({ verbose: args.verbose })
    const { runtime } = await openRuntime({ configPath: args.config, logger, version })
    return serveStdio({ runtime, view: openView(), logger })
  },
})

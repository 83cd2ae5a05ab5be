import { defineCommand } from 'citty'
import { createLogger } from '../logger.js'
import { openRuntime } from '../runtime/open-runtime.js'
import { CLIENT_INITIALIZE_WAIT_MS } from '../runtime/runtime.js'
import { serveStdio } from '../server/serve-stdio.js'
import { createView } from '../principal/policy-mode.js'
import { version } from '../version.js'
import { commonArgs, principalArgs, splitList } from './_shared.js'

export default defineCommand({
  meta: { name: 'serve', description: 'Run the aggregator as an MCP server on stdio' },
  args: { ...commonArgs, ...principalArgs },
  async run({ args }) {
    const logger = createLogger({ verbose: args.verbose })
    const { runtime, loaded, mode } = await openRuntime({ configPath: args.config, logger, version, waitForClientMs: CLIENT_INITIALIZE_WAIT_MS })
    const runner = mode.kind === 'policy' ? await (await import('../principal/builtin-exec.js')).createSandboxRunner(loaded) : undefined
    const view = createView(mode, loaded, { role: args.role, skills: splitList(args.skills), env: process.env, catalogue: runtime.catalogue, logger, ...(runner ? { runner } : {}) })
    if (mode.kind === 'policy') logger.info(`policy mode: role ${(view as { role?: string }).role}`)
    const stopWatchingSkills = mode.kind === 'policy' ? (await import('../principal/skill-watcher.js')).watchSkills(() => runtime.loaded, mode.state, logger) : undefined
    const liveConfig = (await import('../runtime/live-config.js')).watchConfig({ runtime, mode, logger, env: process.env })
    try {
      return await serveStdio({ runtime, view, logger })
    } finally {
      stopWatchingSkills?.()
      liveConfig.stop()
    }
  },
})

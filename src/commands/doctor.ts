import { defineCommand } from 'citty'
import { createLogger } from '../logger.js'
import { runDoctor } from '../inspect/doctor.js'
import { commonArgs, jsonArgs, printJson, printResult } from './_shared.js'

export default defineCommand({
  meta: {
    name: 'doctor',
    description: 'Check Node, the config, the children and the sandbox executors, with fixes; exits 3 on problems',
  },
  args: { ...commonArgs, ...jsonArgs },
  async run({ args }) {
    const checks = await runDoctor({
      configPath: args.config,
      logger: createLogger({ verbose: args.verbose, quiet: true }),
    })
    const ok = checks.every((c) => c.status !== 'fail')
    if (args.json) printJson({ ok, checks })
    else
      printResult(
        checks
          .map(
            (c) =>
              `${c.status === 'ok' ? '✓' : c.status === 'warn' ? '!' : '✗'} ${c.name}: ${c.detail}${c.fix ? `\n    fix: ${c.fix}` : ''}`,
          )
          .join('\n'),
      )
    return ok ? 0 : 3
  },
})

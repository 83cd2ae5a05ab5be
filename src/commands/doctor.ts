import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { runDoctor } from '../inspect/doctor.js'
import { HIDDEN_TEXT_NAMES, showHiddenText } from '../pinning/hidden-text.js'
import { commonArgs, jsonArgs, printJson, printResult, commandLogger } from './_shared.js'

export default defineCommand({
  meta: {
    name: 'doctor',
    description:
      'Check Node, the config, the children, pinned definitions and the sandbox executors, with fixes; exits 3 on problems',
  },
  args: { ...commonArgs, ...jsonArgs },
  async run({ args, data }) {
    const io = commandIO(data)
    const { checks, hidden } = await runDoctor({
      configPath: args.config,
      cwd: io.cwd,
      env: io.env,
      logger: commandLogger(io, { verbose: args.verbose, quiet: true }),
      json: args.json === true,
    })
    const ok = checks.every((c) => c.status !== 'fail')
    if (args.json) printJson(io, { ok, checks, hidden })
    else {
      // Under the pinning check: each item hidden text withholds, and the kinds of text.
      const hiddenLines = hidden.map(
        (h) =>
          `\n    withheld ${h.kind} ${showHiddenText(h.id)}: ${h.text.map((k) => HIDDEN_TEXT_NAMES[k]).join(', ')}`,
      )
      printResult(
        io,
        checks
          .map(
            (c) =>
              `${c.status === 'ok' ? '✓' : c.status === 'warn' ? '!' : '✗'} ${c.name}: ${c.detail}${c.name === 'pinning' ? hiddenLines.join('') : ''}${c.fix ? `\n    fix: ${c.fix}` : ''}`,
          )
          .join('\n'),
      )
    }
    return ok ? 0 : 3
  },
})

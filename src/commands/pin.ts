import { defineCommand } from 'citty'
import type { Logger } from '../logger.js'
import { commandIO, type CommandIO } from '../command-io.js'
import { ExitCode, MycError, usageError } from '../errors.js'
import { hiddenJson, pinReportJson, pinReportText } from '../inspect/pin-report.js'
import { surveyPins, writeSurvey, type PinSurvey } from '../inspect/pins.js'
import { useColour } from '../terminal-colour.js'
import { commonArgs, jsonArgs, printJson, commandLogger } from './_shared.js'

export default defineCommand({
  meta: {
    name: 'pin',
    description:
      'Pin the tools and prompts the children offer now in mycelium.lock.json beside the config. Examples: `myc pin` (shows each change as a word diff and asks), `myc pin --yes` (accepts all; needed off a terminal), `myc pin --check --json` (the CI step: writes nothing, exits 0 when every running child matches, 1 when not)',
  },
  args: {
    ...commonArgs,
    ...jsonArgs,
    check: {
      type: 'boolean',
      description: 'Compare with the lock and write nothing: exit 0 when it matches, 1 when not',
    },
    yes: { type: 'boolean', description: 'Accept every change without asking (needed off a terminal)' },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    if (args.check && args.yes) throw usageError('--check never writes the lock; leave out --yes (or --check)')
    const logger = commandLogger(io, { verbose: args.verbose, quiet: args.json })
    const survey = await surveyPins({ configPath: args.config, logger, cwd: io.cwd, env: io.env })
    if (args.check) return report(io, survey, args.json === true)
    return pin(io, survey, { json: args.json === true, yes: args.yes === true, logger })
  },
})

/** `--check`: the report, and 0 only when every running server matches the lock and every configured one ran. */
function report(io: CommandIO, survey: PinSurvey, json: boolean): number {
  const document = pinReportJson(survey)
  if (json) printJson(io, document)
  else io.stdout.write(pinReportText(survey, useColour(io.stdout, io.env)))
  return document.ok ? ExitCode.ok : ExitCode.differs
}

/**
 * Writes the lock: at once when there is none (nothing is approved yet, so
 * nothing is overruled) or with --yes; on a terminal after the person has
 * seen each change and said yes; otherwise not at all (exit 2, with the fix).
 */
async function pin(
  io: CommandIO,
  survey: PinSurvey,
  options: { json: boolean; yes: boolean; logger: Logger },
): Promise<number> {
  const { changes } = survey.comparison
  const needsAsking = survey.lock !== undefined && changes.length > 0 && !options.yes
  if (needsAsking) {
    if (!(io.stdin.isTTY && io.stderr.isTTY) || options.json)
      throw new MycError(
        'usage',
        `${survey.lockFile} differs from what the servers offer (${changes.length} ${changes.length === 1 ? 'change' : 'changes'}); nothing was written`,
        {
          fix: 'review them with `myc pin --check`, then run `myc pin --yes` to accept them, or `myc pin` on a terminal',
        },
      )
    io.stdout.write(pinReportText(survey, useColour(io.stdout, io.env)))
    const { askYesNo } = await import('../agent/terminal-approval.js')
    if (
      !(await askYesNo(
        `Write ${changes.length === 1 ? 'this change' : `these ${changes.length} changes`} to ${survey.lockFile}?`,
      ))
    ) {
      io.stderr.write('nothing was written\n')
      return ExitCode.differs
    }
  }
  const written = survey.lock === undefined || changes.length > 0
  const hidden = written ? await writeSurvey(survey) : survey.comparison.hidden
  if (options.json) printJson(io, { ...pinReportJson(survey, { written }), ok: true, hidden: hidden.map(hiddenJson) })
  else {
    if (!needsAsking) io.stdout.write(pinReportText(survey, useColour(io.stdout, io.env)))
    io.stdout.write(written ? `wrote ${survey.lockFile}\n` : `${survey.lockFile} is up to date\n`)
  }
  for (const u of survey.unchecked)
    options.logger.warn(
      `server ${u.server} did not start, so its pins were left as they were: run myc pin again once it starts`,
    )
  return ExitCode.ok
}

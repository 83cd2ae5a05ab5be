import { defineCommand } from 'citty'
import { MycError } from '../errors.js'
import { createLogger } from '../logger.js'
import { version } from '../version.js'
import { commonArgs, principalArgs, splitList } from './_shared.js'

/** Reads the task from stdin (`myc run -`, or no task with a pipe on stdin). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export default defineCommand({
  meta: { name: 'run', description: 'Run one task with the agent, headless; --json prints the event stream (JSON Lines). Exits 3 when the task fails' },
  args: {
    ...commonArgs,
    ...principalArgs,
    task: { type: 'positional', required: false, description: 'The task (or - to read it from stdin)', valueHint: 'task' },
    model: { type: 'string', description: 'Model (else agent.model, else ANTHROPIC_MODEL, else the default)', valueHint: 'model' },
    'max-turns': { type: 'string', description: 'Most requests to the model (default: agent.maxTurns, 50)', valueHint: 'n' },
    json: { type: 'boolean', description: 'Print the event stream as JSON Lines on stdout' },
    'include-partial': { type: 'boolean', description: 'With --json: also text_delta events as text streams in' },
    'json-schema': { type: 'boolean', description: 'Print the JSON Schema of the events and exit' },
  },
  async run({ args }) {
    const { runHeadless } = await import('../agent/headless.js')
    if (args['json-schema']) {
      const { agentEventsJsonSchema } = await import('../agent/events.js')
      process.stdout.write(`${JSON.stringify(await agentEventsJsonSchema(), null, 2)}\n`)
      return 0
    }
    let maxTurns: number | undefined
    if (args['max-turns'] !== undefined) {
      maxTurns = Number(args['max-turns'])
      if (!Number.isInteger(maxTurns) || maxTurns < 1) throw new MycError('USAGE', `--max-turns takes a whole number of at least 1, not "${args['max-turns']}"`)
    }
    let task = typeof args.task === 'string' ? args.task : undefined
    if (task === '-' || (task === undefined && process.stdin.isTTY !== true)) task = await readStdin()
    if (task === undefined || task.trim() === '') throw new MycError('USAGE', 'myc run needs a task: `myc run "what to do"`, or the task on stdin with `myc run -`')
    return runHeadless({
      task,
      configPath: args.config,
      role: args.role,
      skills: splitList(args.skills),
      model: args.model,
      maxTurns,
      json: args.json === true,
      includePartial: args['include-partial'] === true,
      logger: createLogger({ verbose: args.verbose, quiet: !args.verbose }),
      env: process.env,
      version,
    })
  },
})

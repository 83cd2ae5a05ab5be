import type { ArgDef } from 'citty'
import type { CommandIO } from '../command-io.js'
import { MycError } from '../errors.js'
import { version } from '../version.js'
import { commonArgs, principalArgs, splitList, commandLogger } from './_shared.js'

/** The caps on an agent run's spend: run, workflow, adhoc and chat (docs/tokens.md, "Capping the spend"). */
export const budgetArgs = {
  'max-budget-usd': {
    type: 'string',
    description:
      "Stop before a request that could take the spend past N USD (needs agent.price); wins over agent.budget and the role's budget",
    valueHint: 'n',
  },
  'max-tokens-total': {
    type: 'string',
    description: 'Stop before a request that could take the tokens (input and output) past N',
    valueHint: 'n',
  },
} as const satisfies Record<string, ArgDef>

/** `--max-budget-usd` and `--max-tokens-total`, checked: a positive number, a whole number of at least 1. */
export function budgetFlags(args: { 'max-budget-usd'?: unknown; 'max-tokens-total'?: unknown }): {
  maxUsd?: number
  maxTotalTokens?: number
} {
  const out: { maxUsd?: number; maxTotalTokens?: number } = {}
  if (args['max-budget-usd'] !== undefined) {
    const n = Number(args['max-budget-usd'])
    if (String(args['max-budget-usd']).trim() === '' || !Number.isFinite(n) || n <= 0)
      throw new MycError(
        'usage',
        `--max-budget-usd takes an amount of USD above 0, such as 0.50, not "${String(args['max-budget-usd'])}"`,
      )
    out.maxUsd = n
  }
  if (args['max-tokens-total'] !== undefined) {
    const n = Number(args['max-tokens-total'])
    if (!Number.isSafeInteger(n) || n < 1)
      throw new MycError(
        'usage',
        `--max-tokens-total takes a whole number of at least 1, not "${String(args['max-tokens-total'])}"`,
      )
    out.maxTotalTokens = n
  }
  return out
}

/** The flags `myc run` and `myc adhoc` share. */
export const agentArgs = {
  ...commonArgs,
  ...principalArgs,
  task: {
    type: 'positional',
    required: false,
    description: 'The task (or - to read it from stdin)',
    valueHint: 'task',
  },
  model: {
    type: 'string',
    description: 'Model (else agent.model, else ANTHROPIC_MODEL, else the default)',
    valueHint: 'model',
  },
  'max-turns': {
    type: 'string',
    description: 'Most requests to the model (default: agent.maxTurns, 50)',
    valueHint: 'n',
  },
  json: { type: 'boolean', description: 'Print the event stream as JSON Lines on stdout' },
  'include-partial': { type: 'boolean', description: 'With --json: also text_delta events as text streams in' },
  'json-schema': { type: 'boolean', description: 'Print the JSON Schema of the events and exit' },
  resume: {
    type: 'string',
    description: 'Continue a recorded session (id or saved name): its conversation and skills',
    valueHint: 'id',
  },
  ...budgetArgs,
} as const satisfies Record<string, ArgDef>

/** Every value of a repeatable flag (`--approve high --approve fs:write_*`), up to `--`. */
export function repeated(rawArgs: readonly string[], flag: string): string[] {
  const out: string[] = []
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!
    if (arg === '--') break
    if (arg === flag && i + 1 < rawArgs.length) out.push(rawArgs[++i]!)
    else if (arg.startsWith(`${flag}=`)) out.push(arg.slice(flag.length + 1))
  }
  return out
}

async function readStdin(io: CommandIO): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of io.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

type AgentArgValues = { [K in keyof typeof agentArgs]?: unknown }

/** Parses the shared flags, reads the task, and runs the agent headless in `mode`. Resolves with the exit code. */
export async function runAgentCommand(
  io: CommandIO,
  mode: 'run' | 'adhoc' | 'workflow',
  args: AgentArgValues,
  extra: { approve?: string[]; onFailure?: string | undefined; context?: string | undefined } = {},
): Promise<number> {
  if (extra.onFailure !== undefined && !['prompt', 'auto', 'exit'].includes(extra.onFailure))
    throw new MycError('usage', `--on-failure takes prompt, auto or exit, not "${extra.onFailure}"`)
  if (args['json-schema']) {
    const { agentEventsJsonSchema } = await import('../agent/events.js')
    io.stdout.write(`${JSON.stringify(await agentEventsJsonSchema(), null, 2)}\n`)
    return 0
  }
  let maxTurns: number | undefined
  if (args['max-turns'] !== undefined) {
    maxTurns = Number(args['max-turns'])
    if (!Number.isInteger(maxTurns) || maxTurns < 1)
      throw new MycError('usage', `--max-turns takes a whole number of at least 1, not "${String(args['max-turns'])}"`)
  }
  const budget = budgetFlags(args)
  let task = typeof args.task === 'string' ? args.task : undefined
  if (task === '-' || (task === undefined && io.stdin.isTTY !== true)) task = await readStdin(io)
  if (task === undefined || task.trim() === '')
    throw new MycError(
      'usage',
      `myc ${mode} needs a task: \`myc ${mode} "what to do"\`, or the task on stdin with \`myc ${mode} -\``,
    )
  const { runHeadless } = await import('../agent/headless.js')
  return runHeadless({
    mode,
    task,
    configPath: args.config as string | undefined,
    role: args.role as string | undefined,
    skills: splitList(args.skills as string | undefined),
    model: args.model as string | undefined,
    maxTurns,
    json: args.json === true,
    includePartial: args['include-partial'] === true,
    approve: extra.approve ?? [],
    budget,
    ...(typeof args.resume === 'string' ? { resume: args.resume } : {}),
    ...(extra.onFailure ? { onFailure: extra.onFailure as 'prompt' | 'auto' | 'exit' } : {}),
    ...(extra.context ? { contextFile: extra.context } : {}),
    logger: commandLogger(io, { verbose: args.verbose === true, quiet: args.verbose !== true }),
    env: io.env,
    version,
    stdout: io.stdout,
    stderr: io.stderr,
    signals: io.signals,
  })
}

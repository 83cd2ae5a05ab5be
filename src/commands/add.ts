import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { usageError } from '../errors.js'
import { homeFolder } from '../config/state-roots.js'
import { CLIENTS } from '../install/client-configs.js'
import { PACKAGE_KINDS } from '../install/runtimes.js'
import { repeated } from './_agent.js'
import { commonArgs, jsonArgs, printJson, printResult, commandLogger } from './_shared.js'

const SECRET_MODES = ['sealed', 'export'] as const

export default defineCommand({
  meta: {
    name: 'add',
    description:
      'Add a server from the MCP Registry (NAME[@VERSION]) or a server.json: pinned, started once to list its tools, then written to the config',
  },
  args: {
    ...commonArgs,
    ...jsonArgs,
    server: {
      type: 'positional',
      required: false,
      description: 'NAMESPACE/NAME[@VERSION] in the registry (myc search finds it), or the path of a server.json',
      valueHint: 'name[@version]',
    },
    key: { type: 'string', description: "The server's key in the config (default: from its name)", valueHint: 'key' },
    env: {
      type: 'string',
      description: 'An environment variable: NAME=VALUE, or NAME for your environment’s value; repeatable',
      valueHint: 'name=value',
    },
    header: {
      type: 'string',
      description: 'A header of a remote server: NAME=VALUE; repeatable',
      valueHint: 'name=value',
    },
    arg: {
      type: 'string',
      description:
        'An argument the server leaves open (its name without dashes, or its valueHint): NAME=VALUE; repeatable',
      valueHint: 'name=value',
    },
    package: {
      type: 'string',
      description: 'How it runs, instead of the first that works here (remote, then packages as listed)',
      valueHint: 'npm|pypi|oci|remote',
    },
    secrets: {
      type: 'string',
      description: 'Secret values: sealed on this machine (default), or export (you export the variables named)',
      valueHint: 'sealed|export',
    },
    yes: { type: 'boolean', description: 'Take the default of every value left open instead of asking' },
    'dry-run': { type: 'boolean', description: 'Print the entry as JSON; start and write nothing' },
    'from-client': {
      type: 'string',
      description:
        'Instead of one server: import the servers of an installed client (claude-desktop, claude-code, cursor, vscode)',
      valueHint: 'client',
    },
  },
  async run({ args, rawArgs, data }) {
    const io = commandIO(data)
    const forced = oneOf('--package', args.package, PACKAGE_KINDS)
    const secrets = oneOf('--secrets', args.secrets, SECRET_MODES) ?? 'sealed'
    const words = {
      env: repeated(rawArgs, '--env'),
      header: repeated(rawArgs, '--header'),
      arg: repeated(rawArgs, '--arg'),
    }
    const logger = commandLogger(io, { verbose: args.verbose, quiet: args.json })
    const common = {
      secrets,
      dryRun: args['dry-run'] === true,
      configPath: args.config,
      cwd: io.cwd,
      env: io.env,
      logger,
    }
    const [{ hostForThisProcess }, report] = await Promise.all([
      import('../runtime/host.js'),
      import('../install/add-report.js'),
    ])
    if (args['from-client'] !== undefined) {
      const client = oneOf('--from-client', args['from-client'], CLIENTS)!
      const alone = [args.server, args.key, args.package, ...Object.values(words).flat()].filter((w) => w !== undefined)
      if (alone.length > 0 || args.yes)
        throw usageError(
          '--from-client imports servers as the client has them: give no server, --key, --env, --header, --arg, --package or --yes with it',
        )
      const { importFromClient } = await import('../install/from-client.js')
      const place = { platform: process.platform, home: homeFolder(io.env), env: io.env, cwd: io.cwd }
      const result = await importFromClient({ ...common, client, place, host: hostForThisProcess(io.env) })
      if (args.json) printJson(io, { ok: true, ...result })
      else printResult(io, report.importReport(result))
      return 0
    }
    if (args.server === undefined)
      throw usageError('myc add needs a server (NAMESPACE/NAME[@VERSION] or a server.json), or --from-client CLIENT')
    const [{ parseGiven }, { addServer }, { askOnTerminal }] = await Promise.all([
      import('../install/answers.js'),
      import('../install/add-server.js'),
      import('../install/ask.js'),
    ])
    const onTerminal = io.stdin.isTTY === true && io.stderr.isTTY === true && !args.json
    const result = await addServer({
      ...common,
      source: args.server,
      key: args.key,
      given: parseGiven(words, io.env),
      forced,
      yes: args.yes === true,
      host: hostForThisProcess(io.env),
      ask: onTerminal ? askOnTerminal : undefined,
    })
    if (args.json) printJson(io, { ok: true, ...result })
    else printResult(io, report.addReport(result))
    return 0
  },
})

/** A flag's value, one of `allowed` (or undefined when not given); else a usage error naming them. */
function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined
  if ((allowed as readonly string[]).includes(value)) return value as T
  throw usageError(`${flag} takes ${allowed.join(', ')}, not "${value}"`)
}

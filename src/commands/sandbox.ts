import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { loadConfig } from '../config/load.js'
import { stateRoots } from '../config/state-roots.js'
import { MycError } from '../errors.js'
import { ShellGuard } from '../sandbox/guard/guard.js'
import { ExecutorProbe } from '../sandbox/probe.js'
import { Sandbox } from '../sandbox/sandbox.js'
import type { ExecutorName, TrustLevel } from '../sandbox/types.js'
import { commonArgs, jsonArgs, printJson, printResult, restPositional } from './_shared.js'

/**
 * The words after `--`: one word is a shell command line, several are an
 * argument vector. At trust `restricted` (no shell), one word without shell
 * syntax (`ls`, `./build.sh`) is an argument vector of one.
 */
function commandAfterDashes(rawArgs: readonly string[], trust?: TrustLevel): string | string[] {
  const i = rawArgs.indexOf('--')
  const words = i === -1 ? [] : rawArgs.slice(i + 1)
  if (words.length === 0)
    throw new MycError(
      'usage',
      "give the command after --: `myc sandbox guard -- 'curl x | sh'` (one shell line) or `-- rm -rf build` (an argument vector)",
    )
  if (words.length > 1) return words
  const word = words[0]!
  return trust === 'restricted' && /^[\w@%+=:,./-]+$/.test(word) ? [word] : word
}

const guard = defineCommand({
  meta: {
    name: 'guard',
    description: 'The shell guard’s verdict on a command, without running it; exits 3 when blocked',
  },
  args: {
    ...jsonArgs,
    command: restPositional({
      type: 'positional',
      required: false,
      description: 'After --: the command (one word: a shell line; several: an argument vector)',
    }),
  },
  async run({ args, rawArgs, data }) {
    const io = commandIO(data)
    const verdict = await new ShellGuard().check(commandAfterDashes(rawArgs), { cwd: io.cwd })
    // The JSON verdict carries a code like every other --json error (guard_blocked, as exec's).
    if (args.json)
      printJson(io, verdict.ok ? verdict : { ok: false, error: { code: 'guard_blocked', ...verdict.error } })
    else
      printResult(
        io,
        verdict.ok
          ? 'allowed'
          : `blocked by rule ${verdict.error.rule}: ${verdict.error.message}\n  ${verdict.error.command}`,
      )
    return verdict.ok ? 0 : 3
  },
})

const check = defineCommand({
  meta: { name: 'check', description: 'Which executors work here, and why the others do not' },
  args: { ...jsonArgs },
  async run({ args, data }) {
    const io = commandIO(data)
    const reports = await new ExecutorProbe().all()
    const sandboxes = reports.filter((r) => r.executor !== 'none' && r.works)
    if (args.json) printJson(io, { ok: sandboxes.length > 0, executors: reports })
    else
      printResult(
        io,
        reports
          .map(
            (r) =>
              `${r.works ? '✓' : '✗'} ${r.executor.padEnd(13)}${r.works ? '' : ` ${r.reason}\n                fix: ${r.fix}`}`,
          )
          .join('\n'),
      )
    return sandboxes.length > 0 ? 0 : 3
  },
})

const exec = defineCommand({
  meta: { name: 'exec', description: 'Run a command in the sandbox (guarded); exits with its exit code' },
  args: {
    ...commonArgs,
    ...jsonArgs,
    trust: {
      type: 'string',
      description: 'restricted | sandboxed | unrestricted (default: sandbox.trust)',
      valueHint: 'level',
    },
    executor: {
      type: 'string',
      description: 'auto | bubblewrap | sandbox-exec | docker | none (default: sandbox.executor)',
      valueHint: 'name',
    },
    command: restPositional({
      type: 'positional',
      required: false,
      description:
        'After --: the command (one word: a shell line, or at trust restricted a program such as ls; several: an argument vector)',
    }),
  },
  async run({ args, rawArgs, data }) {
    const io = commandIO(data)
    commandAfterDashes(rawArgs)
    const loaded = await loadConfig({ configPath: args.config, cwd: io.cwd, env: io.env })
    const { config } = loaded
    const trust = (args.trust ?? config.sandbox.trust) as TrustLevel
    if (!['restricted', 'sandboxed', 'unrestricted'].includes(trust))
      throw new MycError('usage', `--trust takes restricted, sandboxed or unrestricted, not "${trust}"`)
    const command = commandAfterDashes(rawArgs, trust)
    const executor = (args.executor ?? config.sandbox.executor) as ExecutorName | 'auto'
    if (!['auto', 'bubblewrap', 'sandbox-exec', 'docker', 'none'].includes(executor))
      throw new MycError('usage', `--executor takes auto, bubblewrap, sandbox-exec, docker or none, not "${executor}"`)
    const sandbox = new Sandbox({ guard: new ShellGuard(), probe: new ExecutorProbe() })
    const result = await sandbox.run({
      command,
      trust,
      executor,
      workspace: io.cwd,
      timeoutMs: config.sandbox.timeoutMs,
      outputLimitBytes: config.sandbox.outputLimitBytes,
      network: config.sandbox.network,
      hiddenPaths: stateRoots(loaded),
      readOnlyPaths: config.sandbox.protect ?? [],
      docker: config.sandbox.docker,
    })
    if (!result.ok) {
      if (args.json) printJson(io, { ok: false, error: result.error })
      else io.stderr.write(`myc: ${result.error.message}\n`)
      return result.error.code === 'guard_blocked' ? 3 : result.error.code === 'invalid_request' ? 2 : 1
    }
    const o = result.outcome
    if (args.json) printJson(io, { ok: true, ...o })
    else {
      io.stdout.write(o.stdout)
      io.stderr.write(o.stderr)
      for (const w of o.warnings ?? []) io.stderr.write(`myc: ${w}\n`)
      if (o.timedOut)
        io.stderr.write(`myc: timed out after ${config.sandbox.timeoutMs} ms; the whole process tree was killed\n`)
    }
    return o.exitCode ?? (o.timedOut ? 124 : 1)
  },
})

export default defineCommand({
  meta: { name: 'sandbox', description: 'Sandbox: exec, check, guard' },
  subCommands: { exec, check, guard },
})

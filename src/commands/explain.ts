import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { MycError } from '../errors.js'
import { builtinByWireName, SERVED_BUILTINS } from '../inspect/reports.js'
import { explainTool } from '../policy/explain.js'
import { BUILTIN_SERVER, RUN_CODE_TOOL } from '../policy/policy.js'
import { codeModeDefault, codeModeOf } from '../principal/policy-mode.js'
import { toWireName } from '../registry/wire-names.js'
import { commonArgs, jsonArgs, principalArgs, printJson, printResult, commandLogger } from './_shared.js'
import { principalFor, requirePolicy, withStartedRuntime, type Inspection } from './_runtime.js'

export default defineCommand({
  meta: { name: 'explain', description: 'Why a tool is visible or hidden for a role, rule by rule' },
  args: {
    ...commonArgs,
    ...jsonArgs,
    ...principalArgs,
    tool: {
      type: 'positional',
      description: 'server:tool or its wire name (`myc tools --all` lists them)',
      required: true,
    },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const logger = commandLogger(io, { verbose: args.verbose, quiet: true })
    const check = ({ loaded, mode }: Omit<Inspection, 'runtime'>) =>
      void principalFor(args, loaded, requirePolicy(mode), io.env)
    const explanation = await withStartedRuntime({ io, args, logger, check }, async ({ runtime, loaded, mode }) => {
      const state = requirePolicy(mode)
      const { role, active } = principalFor(args, loaded, state, io.env)
      const entry = runtime.catalogue.toolById(args.tool) ?? runtime.catalogue.toolByWire(args.tool)
      const naming = loaded.config.namespace
      const builtin = entry
        ? undefined
        : (builtinByWireName(args.tool, naming) ??
          (toWireName(BUILTIN_SERVER, RUN_CODE_TOOL, naming) === args.tool ? RUN_CODE_TOOL : undefined))
      const colon = args.tool.indexOf(':')
      const [server, tool] = entry
        ? [entry.server, entry.name]
        : builtin
          ? [BUILTIN_SERVER, builtin]
          : colon > 0
            ? [args.tool.slice(0, colon), args.tool.slice(colon + 1)]
            : [undefined, undefined]
      if (server === undefined || tool === undefined)
        throw new MycError('usage', `"${args.tool}" is not in the catalogue; write it as server:tool`)
      // As `myc serve` decides: the meta tools follow session.metaTools, and only the built-ins it runs exist.
      return explainTool(state.policy, {
        server,
        tool,
        role,
        active,
        inCatalogue: entry !== undefined,
        metaTools: loaded.config.session.metaTools,
        available: SERVED_BUILTINS,
        codeMode: {
          sessions: codeModeOf(state, role, codeModeDefault(loaded, 'session')),
          agent: codeModeOf(state, role, codeModeDefault(loaded, 'agent')),
        },
      })
    })
    if (args.json) printJson(io, { ok: true, ...explanation })
    else
      printResult(
        io,
        `${explanation.tool} is ${explanation.visible ? 'VISIBLE' : 'HIDDEN'} for role ${explanation.role}\n${explanation.steps.map((s) => `  [${s.verdict}] ${s.rule}: ${s.detail}`).join('\n')}`,
      )
    return 0
  },
})

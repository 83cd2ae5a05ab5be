import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { MycError } from '../errors.js'
import {
  childSkillsReport,
  lintSkills,
  roleDefinitionFile,
  roleWarningProblems,
  roleWarnings,
  skillsReport,
} from '../inspect/reports.js'
import { commonArgs, jsonArgs, printJson, printResult, commandLogger } from './_shared.js'
import { requirePolicy, withStartedRuntime } from './_runtime.js'
import type { PolicyMode } from '../principal/policy-mode.js'

/** Skills exist in policy mode only: said before any child starts. */
const needsPolicy = ({ mode }: { mode: PolicyMode }) => void requirePolicy(mode)

const list = defineCommand({
  meta: { name: 'list', description: 'Skills, their tools and whether they are enabled' },
  args: { ...commonArgs, ...jsonArgs },
  async run({ args, data }) {
    const io = commandIO(data)
    const logger = commandLogger(io, { verbose: args.verbose, quiet: args.json })
    const skills = await withStartedRuntime({ io, args, logger, check: needsPolicy }, async ({ runtime, mode }) => [
      ...skillsReport(
        requirePolicy(mode).policy,
        new Set(mode.kind === 'policy' ? mode.state.sources.skillIndex.keys() : []),
      ),
      ...childSkillsReport(runtime.catalogue),
    ])
    if (args.json) printJson(io, { ok: true, skills })
    else
      printResult(
        io,
        skills
          .map(
            (s) =>
              `${s.enabled ? '✓' : '✗'} ${s.name.padEnd(20)} ${s.description}\n    ${s.uri ?? '(not served over MCP)'}  from ${s.origin}${'disabledReasons' in s && !s.enabled ? `\n    disabled: ${s.disabledReasons.join('; ')}` : ''}`,
          )
          .join('\n') || 'no skills',
      )
    return 0
  },
})

const show = defineCommand({
  meta: { name: 'show', description: 'One skill in full, by name or skill:// URI' },
  args: {
    ...commonArgs,
    ...jsonArgs,
    id: { type: 'positional', description: 'Skill name or URI (`myc skills` lists them)', required: true },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const logger = commandLogger(io, { verbose: args.verbose, quiet: args.json })
    const found = await withStartedRuntime({ io, args, logger, check: needsPolicy }, async ({ runtime, mode }) => {
      const policy = requirePolicy(mode).policy
      const child = childSkillsReport(runtime.catalogue).find((c) => c.uri === args.id)
      if (child)
        return {
          ...child,
          file: child.uri,
          allowedRoles: [] as string[],
          allowedTools: [] as string[],
          disabledReasons: [] as string[],
          instructions: '(served by the child; read it with resources/read)',
        }
      const name = args.id.startsWith('skill://mycelium/')
        ? decodeURIComponent(args.id.slice('skill://mycelium/'.length).split('/')[0] ?? '')
        : args.id
      const skill = policy.skills.get(name)
      if (!skill)
        throw new MycError(
          'usage',
          `no skill "${args.id}" (skills: ${[...policy.skills.keys()].sort().join(', ')}; children's skills by URI, see \`myc skills list\`)`,
        )
      return {
        ...skillsReport(policy, new Set(mode.kind === 'policy' ? mode.state.sources.skillIndex.keys() : [])).find(
          (s) => s.name === name,
        )!,
        instructions: skill.instructions,
      }
    })
    if (args.json) printJson(io, { ok: true, skill: found })
    else
      printResult(
        io,
        `${found.name}: ${found.description}\nfile: ${found.file}\nroles: ${found.allowedRoles.join(', ')}\ntools: ${found.allowedTools.join(', ')}\n${found.enabled ? 'enabled' : `disabled: ${found.disabledReasons.join('; ')}`}\n\n${found.instructions}`,
      )
    return 0
  },
})

const lint = defineCommand({
  meta: { name: 'lint', description: 'Check every skill; exits 3 on problems' },
  args: { ...commonArgs, ...jsonArgs },
  async run({ args, data }) {
    const io = commandIO(data)
    const logger = commandLogger(io, { verbose: args.verbose, quiet: true })
    const problems = await withStartedRuntime({ io, args, logger, check: needsPolicy }, async ({ loaded, mode }) => {
      const state = requirePolicy(mode)
      const roleProblems = roleWarningProblems(roleWarnings(state.sources), (role) => roleDefinitionFile(loaded, role))
      return lintSkills(state.policy, state.sources.problems, state.sources.unserved, roleProblems)
    })
    const errors = problems.filter((p) => p.severity === 'error')
    if (args.json) printJson(io, { ok: errors.length === 0, problems })
    else
      printResult(
        io,
        problems.length
          ? problems.map((p) => `${p.severity}: ${p.file}${p.skill ? ` (${p.skill})` : ''}: ${p.message}`).join('\n')
          : 'no problems',
      )
    return errors.length > 0 ? 3 : 0
  },
})

export default defineCommand({
  meta: { name: 'skills', description: 'Skills: list, show ID, lint' },
  args: { ...commonArgs, ...jsonArgs },
  subCommands: { list, show, lint },
  default: 'list',
})

import path from 'node:path'
import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { loadConfig } from '../config/load.js'
import { addSkill, listTemplates } from '../inspect/scaffold.js'
import { openModeEnds } from '../inspect/open-mode-ends.js'
import { isPolicyMode } from '../principal/policy-mode.js'
import { terminalText } from '../terminal-text.js'
import { commonArgs, jsonArgs, printJson, printResult, commandLogger } from './_shared.js'

const add = defineCommand({
  meta: { name: 'add', description: 'Create skills/NAME, from a template or blank' },
  args: {
    ...commonArgs,
    ...jsonArgs,
    name: {
      type: 'positional',
      description: 'Skill name: lowercase letters, digits and single hyphens',
      required: true,
    },
    template: { type: 'string', description: 'Template to start from (see `myc skill templates`)', valueHint: 'name' },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const loaded = await loadConfig({ configPath: args.config, cwd: io.cwd, env: io.env })
    const skillsDir = path.resolve(loaded.dir, loaded.config.skills?.dirs[0] ?? 'skills')
    const wasOpen = !isPolicyMode(loaded)
    const files = await addSkill(skillsDir, args.name, args.template)
    // The first skill of a project ends open mode: never silently (which role sees what, and the way back).
    const logger = commandLogger(io, { verbose: args.verbose })
    if (wasOpen) io.stderr.write(`myc: ${terminalText(await openModeEnds(loaded, skillsDir, logger, io.env))}\n`)
    if (args.json) printJson(io, { ok: true, files, mode: 'policy', modeChanged: wasOpen })
    else printResult(io, `created ${files.join(', ')}`)
    return 0
  },
})

const templates = defineCommand({
  meta: { name: 'templates', description: 'The bundled skill templates' },
  args: { ...jsonArgs },
  async run({ args, data }) {
    const io = commandIO(data)
    const list = await listTemplates()
    if (args.json) printJson(io, { ok: true, templates: list })
    else printResult(io, list.map((t) => `${t.name.padEnd(16)} ${t.description}`).join('\n'))
    return 0
  },
})

export default defineCommand({
  meta: { name: 'skill', description: 'Scaffold skills: add NAME, templates' },
  subCommands: { add, templates },
})

import path from 'node:path'
import { defineCommand } from 'citty'
import { initProject } from '../inspect/scaffold.js'
import { commonArgs, jsonArgs, printJson, printResult } from './_shared.js'

export default defineCommand({
  meta: { name: 'init', description: 'Write a starter mycelium.config.json and skills from the bundled templates' },
  args: {
    ...commonArgs,
    ...jsonArgs,
    dir: { type: 'positional', description: 'Folder (default: .)', required: false },
    minimal: { type: 'boolean', description: 'Only the common and reader skills' },
  },
  async run({ args }) {
    const dir = path.resolve(args.dir ?? '.')
    const files = await initProject(dir, { minimal: args.minimal === true })
    if (args.json) printJson({ ok: true, dir, files })
    else
      printResult(
        `wrote ${files.length} files in ${dir}:\n${files.map((f) => `  ${path.relative(dir, f)}`).join('\n')}\nnext: myc status --config ${path.join(dir, 'mycelium.config.json')}`,
      )
    return 0
  },
})

import path from 'node:path'
import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { initProject } from '../inspect/scaffold.js'
import { pinNewProject } from '../inspect/pins.js'
import { commonArgs, jsonArgs, printJson, printResult, commandLogger } from './_shared.js'

export default defineCommand({
  meta: {
    name: 'init',
    description:
      'Write a starter mycelium.config.json and skills from the bundled templates, and pin its servers’ tools in mycelium.lock.json',
  },
  args: {
    ...commonArgs,
    ...jsonArgs,
    dir: { type: 'positional', description: 'Folder (default: .)', required: false },
    minimal: { type: 'boolean', description: 'Only the common and reader skills' },
    pin: {
      type: 'boolean',
      default: true,
      description: 'Start each server once and pin its tools and prompts in mycelium.lock.json',
      negativeDescription: 'Write no lock: pinning stays off until `myc pin`',
    },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const dir = path.resolve(io.cwd, args.dir ?? '.')
    const files = await initProject(dir, { minimal: args.minimal === true })
    const config = path.join(dir, 'mycelium.config.json')
    // The servers' tools and prompts pinned as they are now (docs/pinning.md): each server is started once.
    const pinned = args.pin
      ? await pinNewProject(config, commandLogger(io, { verbose: args.verbose, quiet: true }), io.env)
      : { lockFile: undefined, unchecked: [] }
    if (pinned.lockFile) files.push(pinned.lockFile)
    const notPinned = pinned.unchecked.map((u) => u.server)
    if (args.json) printJson(io, { ok: true, dir, files, lock: pinned.lockFile ?? null, notPinned })
    else
      printResult(
        io,
        [
          `wrote ${files.length} files in ${dir}:`,
          ...files.map((f) => `  ${path.relative(dir, f)}`),
          ...pinned.unchecked.map(
            (u) =>
              `server ${u.server} did not start (${u.error ?? u.state.toLowerCase()}), so it is not pinned: its tools are withheld until \`myc pin --config ${config}\` runs once it starts`,
          ),
          `next: myc status --config ${config}`,
        ].join('\n'),
      )
    return 0
  },
})

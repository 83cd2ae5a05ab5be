import { defineCommand } from 'citty'
import { commandIO } from '../command-io.js'
import { usageError } from '../errors.js'
import { commonArgs, jsonArgs, printJson, printResult, restPositional } from './_shared.js'

/** The most servers one search shows. */
const MAX_LIMIT = 1000

export default defineCommand({
  meta: {
    name: 'search',
    description:
      'Servers in the MCP Registry (registry.url) whose names match WORDS: name, latest version, how each runs, description',
  },
  args: {
    ...commonArgs,
    ...jsonArgs,
    words: restPositional({
      type: 'positional',
      required: false,
      description: 'Words to look for in server names (none: every server)',
      valueHint: 'words',
    }),
    limit: { type: 'string', description: 'At most N servers (default 20)', valueHint: 'n' },
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const limit = args.limit === undefined ? 20 : Number(args.limit)
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
      throw usageError(`--limit takes a whole number from 1 to ${MAX_LIMIT}, not "${args.limit}"`)
    const words = args._.map(String).join(' ').trim()
    const [{ configTarget }, { searchRegistry, searchTable }] = await Promise.all([
      import('../install/config-target.js'),
      import('../install/search.js'),
    ])
    const { config } = await configTarget({ configPath: args.config, cwd: io.cwd, env: io.env })
    const rows = await searchRegistry({ words, limit, registryUrl: config.registry.url })
    if (args.json) printJson(io, { ok: true, servers: rows })
    else if (rows.length === 0)
      printResult(
        io,
        `no server in ${config.registry.url} has a name matching "${words}" (myc search with fewer words?)`,
      )
    else printResult(io, `${searchTable(rows)}\n\nadd one with: myc add NAME`)
    return 0
  },
})

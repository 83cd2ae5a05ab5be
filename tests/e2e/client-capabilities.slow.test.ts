import { execFileSync } from 'node:child_process'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { describe, expect, it } from 'vitest'
import { bundle, connectToMyc, npmServer, writeConfig } from '../helpers/e2e.js'

/**
 * Children see the client as it is: server-everything registers
 * get-roots-list, trigger-sampling-request, trigger-elicitation-request and
 * trigger-url-elicitation only for a client that declared those
 * capabilities. Through myc a client must get exactly the tools it gets
 * from server-everything directly, whatever it declared.
 */
const capabilitySets: Array<[string, Record<string, unknown>]> = [
  ['nothing', {}],
  ['roots and sampling', { roots: { listChanged: true }, sampling: {} }],
  ['form elicitation only', { elicitation: { form: {} } }],
  ['everything', { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } }],
]

const server = { command: process.execPath, args: [npmServer('server-everything'), 'stdio'] }

/** The tool names a client sees once server-everything has added its conditional tools. */
async function settledTools(client: Client, prefix = ''): Promise<string[]> {
  let previous = ''
  for (let i = 0; i < 20; i++) {
    const names = (await client.listTools()).tools.map((t) => t.name.slice(prefix.length)).sort()
    const now = names.join(',')
    if (now === previous) return names
    previous = now
    await new Promise((r) => setTimeout(r, 150))
  }
  throw new Error('the tool list never settled')
}

describe('capabilities offered to children (build/myc.cjs, server-everything)', () => {
  it.each(capabilitySets)(
    'a client declaring %s sees the same tools through myc as directly',
    async (_name, capabilities) => {
      const withRoots = (c: Client) => {
        if (capabilities.roots) c.setRequestHandler('roots/list', () => ({ roots: [] }))
      }
      const direct = new Client({ name: 'direct', version: '1' }, { capabilities })
      withRoots(direct)
      await direct.connect(new StdioClientTransport({ command: server.command, args: server.args }))
      const { client } = await connectToMyc(
        ['serve', '--config', writeConfig({ mcpServers: { everything: server } })],
        { capabilities, setup: withRoots },
      )
      try {
        const theirs = await settledTools(direct)
        const ours = await settledTools(client, 'everything__')
        expect(ours).toEqual(theirs)
        // The list really depends on the capabilities (so the comparison can fail).
        const conditional = [
          'get-roots-list',
          'trigger-sampling-request',
          'trigger-elicitation-request',
          'trigger-url-elicitation',
        ]
        expect(ours.filter((t) => conditional.includes(t)).length).toBe(
          [
            capabilities.roots,
            capabilities.sampling,
            capabilities.elicitation,
            (capabilities.elicitation as { url?: unknown } | undefined)?.url,
          ].filter(Boolean).length,
        )
      } finally {
        await client.close()
        await direct.close()
      }
    },
    30_000,
  )

  it('commands without a client (myc tools) offer the children no client capabilities', () => {
    const out = execFileSync(
      process.execPath,
      [bundle, 'tools', '--json', '--config', writeConfig({ mcpServers: { everything: server } })],
      { encoding: 'utf8' },
    )
    const names = (JSON.parse(out) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)
    expect(names).toContain('echo')
    for (const conditional of [
      'get-roots-list',
      'trigger-sampling-request',
      'trigger-elicitation-request',
      'trigger-url-elicitation',
    ])
      expect(names).not.toContain(conditional)
  }, 30_000)
})

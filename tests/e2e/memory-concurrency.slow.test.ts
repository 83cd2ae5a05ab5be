import type { Client } from '@modelcontextprotocol/client'
import { describe, expect, it } from 'vitest'
import { connectToMyc } from '../helpers/e2e.js'
import { cli, project } from '../helpers/memory-project.js'

type CallResult = { isError?: boolean }
const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<CallResult>

/** The stress half of the memory tests (npm run test:slow): two processes writing one role's file at once. */
describe('two myc processes saving to one role at once', () => {
  it('500 saves each lose no entry', async () => {
    const p = project()
    const clients = await Promise.all(
      [0, 1].map(
        async () => (await connectToMyc(['serve', '--config', p.config, '--role', 'dev', '--skills', 'notes'])).client,
      ),
    )
    try {
      await Promise.all(
        clients.map(async (client, c) => {
          for (let batch = 0; batch < 10; batch++) {
            const results = await Promise.all(
              Array.from({ length: 50 }, (_, i) =>
                call(client, 'mycelium__save_memory', { content: `process ${c} save ${batch * 50 + i}` }),
              ),
            )
            for (const r of results) expect(r.isError).toBeFalsy()
          }
        }),
      )
    } finally {
      await Promise.all(clients.map((c) => c.close()))
    }
    const list = JSON.parse(cli(p.config, 'memory', 'show', 'dev', '--json').stdout).entries as Array<{
      content: string
    }>
    const contents = new Set(list.map((e) => e.content))
    expect(contents.size).toBe(1000)
    for (let c = 0; c < 2; c++) for (let i = 0; i < 500; i++) expect(contents.has(`process ${c} save ${i}`)).toBe(true)
  }, 180_000)
})

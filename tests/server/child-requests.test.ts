import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { connectClient, fixtureEntry, startRuntime } from '../helpers/runtime.js'

function text(result: { content: unknown }): string {
  return (result.content as Array<{ text: string }>)[0]!.text
}

describe('requests from a child to the client', () => {
  let runtime: Runtime
  beforeAll(async () => {
    // The first client offered both: a later client without them is refused by myc itself.
    runtime = await startRuntime({ mcpServers: { asker: fixtureEntry('elicit') } }, undefined, {
      clientCapabilities: { elicitation: { form: {} }, sampling: {} },
    })
  })
  afterAll(async () => {
    await runtime?.close()
  })

  it('forwards elicitation to a client that supports it, showing the server key', async () => {
    const asked: string[] = []
    const { client } = await connectClient(runtime, {
      capabilities: { elicitation: { form: {} } },
      setup: (c) =>
        c.setRequestHandler('elicitation/create', (request) => {
          asked.push((request.params as { message: string }).message)
          return { action: 'accept', content: { colour: 'green' } }
        }),
    })
    const result = await client.callTool({ name: 'asker__ask', arguments: {} })
    expect(JSON.parse(text(result))).toEqual({ action: 'accept', content: { colour: 'green' } })
    expect(asked).toEqual(['[asker] Favourite colour?'])
    await client.close()
  })

  it('refuses elicitation cleanly when the client cannot answer it', async () => {
    const { client } = await connectClient(runtime)
    const result = await client.callTool({ name: 'asker__ask', arguments: {} })
    expect(text(result)).toMatch(/refused: .*does not support elicitation \(asked by server "asker"\)/)
    await client.close()
  })

  it('forwards sampling to a client that supports it and refuses it otherwise', async () => {
    const { client } = await connectClient(runtime, {
      capabilities: { sampling: {} },
      setup: (c) =>
        c.setRequestHandler('sampling/createMessage', () => ({
          role: 'assistant',
          content: { type: 'text', text: 'hi!' },
          model: 'fake',
          stopReason: 'endTurn',
        })),
    })
    expect(JSON.parse(text(await client.callTool({ name: 'asker__sample', arguments: {} })))).toEqual({
      type: 'text',
      text: 'hi!',
    })
    await client.close()
    const { client: plain } = await connectClient(runtime)
    expect(text(await plain.callTool({ name: 'asker__sample', arguments: {} }))).toMatch(
      /refused: .*does not support sampling/,
    )
    await plain.close()
  })
})

describe('children are offered only what the client declared', () => {
  it('a child of a runtime whose client declared nothing cannot ask for elicitation or sampling at all', async () => {
    const runtime = await startRuntime({ mcpServers: { asker: fixtureEntry('elicit') } }, undefined, {
      clientCapabilities: {},
    })
    try {
      const { client } = await connectClient(runtime, { capabilities: {} })
      // The child's own SDK refuses before asking: myc never offered the capability.
      const asked = text(await client.callTool({ name: 'asker__ask', arguments: {} }))
      const sampled = text(await client.callTool({ name: 'asker__sample', arguments: {} }))
      expect(asked).toMatch(/refused: .*(elicitation|capabilit|Method not found)/i)
      expect(sampled).toMatch(/refused: .*(sampling|capabilit|Method not found)/i)
      // Not myc's own refusal of a capability it had offered ("… asked by server …").
      expect(asked).not.toMatch(/asked by server/)
      expect(sampled).not.toMatch(/asked by server/)
      await client.close()
    } finally {
      await runtime.close()
    }
  })
})

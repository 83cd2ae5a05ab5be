import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadAnthropicSdk } from '../../src/agent/anthropic-sdk.js'
import { runAgent, type OfferedTool } from '../../src/agent/engine.js'
import { viewToolbox } from '../../src/agent/toolbox.js'
import { lazyOpenView } from '../../src/principal/lazy-view.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { fixtureEntry, startRuntime } from '../helpers/runtime.js'

/**
 * The agent over lazy open mode (session.lazyTools): its toolbox offers
 * search_tools and call_tool, and a call_tool is approved as the tool it
 * calls (its id, annotations and arguments), never as call_tool itself.
 * A real runtime with the echo fixture, a fake Messages API.
 */
describe('the agent in lazy open mode', () => {
  let runtime: Runtime
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { echo: fixtureEntry('echo') }, session: { lazyTools: true } })
    await fake.start()
  }, 30_000)
  afterAll(async () => {
    await runtime?.close()
    await fake.close()
  })

  const toolbox = () =>
    viewToolbox(
      runtime,
      lazyOpenView(() => runtime.catalogue.tools(), runtime.loaded.config.namespace),
    )

  it('resolves a call_tool to the tool it calls; anything else, or a tool that does not exist, to nothing', () => {
    const box = toolbox()
    expect(box.list().map((t) => t.wireName)).toEqual(['mycelium__search_tools', 'mycelium__call_tool'])
    const inner = box.resolve!('mycelium__call_tool', { name: 'echo__echo', arguments: { message: 'hi' } })
    expect(inner).toMatchObject({
      tool: { wireName: 'echo__echo', id: 'echo:echo', def: { name: 'echo__echo' } },
      input: { message: 'hi' },
    })
    expect(box.resolve!('mycelium__search_tools', { query: 'x' })).toBeUndefined()
    expect(box.resolve!('mycelium__call_tool', { name: 'nope__never' })).toBeUndefined()
    expect(box.resolve!('mycelium__call_tool', {})).toBeUndefined()
  })

  it('approvals see the called tool and its arguments; a denied one never runs', async () => {
    fake.setScript([
      { content: [{ type: 'tool_use', name: 'mycelium__call_tool', input: { name: 'echo__fail', arguments: {} } }] },
      {
        content: [
          {
            type: 'tool_use',
            name: 'mycelium__call_tool',
            input: { name: 'echo__echo', arguments: { message: 'through' } },
          },
        ],
      },
      { content: [{ type: 'text', text: 'done' }] },
    ])
    const sdk = await loadAnthropicSdk()
    const asked: Array<{ id: string; input: Record<string, unknown> }> = []
    const events: Array<{ type: string; [k: string]: unknown }> = []
    const outcome = await runAgent('try', {
      client: new sdk.Anthropic({ apiKey: 'test', baseURL: fake.url }),
      sdk,
      model: 'claude-test',
      maxTokens: 1024,
      maxTurns: 5,
      system: 'test',
      toolbox: toolbox(),
      emit: (e) => events.push(e as { type: string }),
      approve: async (_callId, tool: OfferedTool, input) => {
        asked.push({ id: tool.id, input })
        return tool.id === 'echo:fail' ? { allow: false, reason: 'not this one' } : { allow: true }
      },
    })
    expect(outcome.reason).toBe('done')
    expect(asked).toEqual([
      { id: 'echo:fail', input: {} },
      { id: 'echo:echo', input: { message: 'through' } },
    ])
    const results = events.filter((e) => e.type === 'tool_result')
    expect(JSON.stringify(results[0])).toContain('not this one')
    expect(JSON.stringify(results[1])).toContain('through')
  })
})

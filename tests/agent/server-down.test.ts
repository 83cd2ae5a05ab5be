import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadAnthropicSdk } from '../../src/agent/anthropic-sdk.js'
import { runAgent } from '../../src/agent/engine.js'
import { ToolDoor, viewSource, type ToolSource } from '../../src/agent/tool-call.js'
import { openView } from '../../src/principal/view.js'
import { Cancellation } from '../../src/protocol/cancellation.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { FakeAnthropic, toolResults, type FakeReply } from '../helpers/fake-anthropic.js'
import { fixtureEntry, startRuntime, waitFor } from '../helpers/runtime.js'

/**
 * The agent over a server that crashes: a call to its other tool while it is
 * down is a tool error saying it is restarting (never a denial), and a
 * headless run whose call failed that way, with no later call making it
 * good, ends `unavailable`. A real runtime and children, a fake Messages API.
 */
describe('the agent and a server that is down', () => {
  let runtime: Runtime
  const fake = new FakeAnthropic()
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-agent-down-'))
  const gate = path.join(dir, 'gate')

  beforeAll(async () => {
    writeFileSync(gate, '')
    runtime = await startRuntime({
      mcpServers: {
        // Restarts at once, but its start waits for the gate file.
        gated: fixtureEntry('gated-start', {
          env: { START_GATE: gate },
          restart: { maxRetries: 5, initialDelayMs: 1, maxDelayMs: 1 },
        }),
      },
    })
    await fake.start()
  }, 30_000)
  afterAll(async () => {
    await runtime?.close()
    await fake.close()
    rmSync(dir, { recursive: true, force: true })
  })

  async function run(script: FakeReply[], headless: boolean, source: ToolSource = viewSource(runtime, openView())) {
    fake.setScript(script)
    const sdk = await loadAnthropicSdk()
    return runAgent('try', {
      client: new sdk.Anthropic({ apiKey: 'test', baseURL: fake.url, maxRetries: 0 }),
      sdk,
      model: 'claude-test',
      maxTokens: 1024,
      maxTurns: 5,
      system: 'test',
      tools: new ToolDoor([source]),
      emit: () => {},
      headless,
    })
  }
  const up = () => waitFor(() => runtime.supervisor.children.get('gated')!.state === 'RUNNING', 10_000, 'gated up')
  // The crash, then the other tool in the same turn (the server is down by then: its start waits for the gate).
  const crashThenEcho: FakeReply = {
    content: [
      { type: 'tool_use', id: 'toolu_crash', name: 'gated__crash', input: {} },
      { type: 'tool_use', id: 'toolu_echo', name: 'gated__echo', input: { message: 'hi' } },
    ],
  }

  it('ends a headless run unavailable, not ok, with no permission denial', async () => {
    rmSync(gate, { force: true })
    const outcome = await run([crashThenEcho, { content: [{ type: 'text', text: 'done' }] }], true)
    const results = toolResults(fake.requests.at(-1)!)
    expect(JSON.stringify(results.get('toolu_echo'))).toMatch(/Server \\"gated\\" is (restarting|starting)/)
    expect(results.get('toolu_echo')!.is_error).toBe(true)
    expect(JSON.stringify(results.get('toolu_echo'))).not.toContain('Unknown tool')
    expect(outcome.reason).toBe('unavailable')
    expect(outcome.permissionDenials).toEqual([])
    expect(outcome.error).toMatchObject({ code: 'server_unavailable' })
    expect(outcome.error!.message).toMatch(/gated:crash, gated:echo failed because their server \("gated"\)/)
    writeFileSync(gate, '')
    await up()
  })

  it('ends it done when a later call of the tool worked', async () => {
    rmSync(gate, { force: true })
    // Down before the run (another client's call took it down).
    await new ToolDoor([viewSource(runtime, openView())]).call({
      wireName: 'gated__crash',
      args: {},
      callId: 'before',
      cancellation: new Cancellation(),
    })
    await waitFor(() => runtime.supervisor.children.get('gated')!.state !== 'RUNNING', 5_000, 'gated down')
    const base = viewSource(runtime, openView())
    let calls = 0
    // Before the second call, the server is let up and waited for (the fake's script cannot wait).
    const source: ToolSource = {
      list: () => base.list(),
      reach: (wireName, args) => base.reach(wireName, args),
      ungated: async (call, target, meta, inner) => {
        if (calls++ === 1) {
          writeFileSync(gate, '')
          await up()
        }
        return base.ungated(call, target, meta, inner)
      },
    }
    const echo = (id: string): FakeReply => ({
      content: [{ type: 'tool_use', id, name: 'gated__echo', input: { message: id } }],
    })
    const outcome = await run(
      [echo('first'), echo('second'), { content: [{ type: 'text', text: 'done' }] }],
      true,
      source,
    )
    expect(JSON.stringify(fake.requests.at(-2)!.body.messages.at(-1))).toMatch(/Server \\"gated\\" is/)
    expect(toolResults(fake.requests.at(-1)!).get('second')).toEqual({ content: [{ type: 'text', text: 'second' }] })
    expect(outcome.reason).toBe('done')
    expect(outcome.error).toBeUndefined()
  })

  it('leaves a chat (not headless) done', async () => {
    await up()
    rmSync(gate, { force: true })
    const outcome = await run([crashThenEcho, { content: [{ type: 'text', text: 'done' }] }], false)
    expect(outcome.reason).toBe('done')
    writeFileSync(gate, '')
    await up()
  })
})

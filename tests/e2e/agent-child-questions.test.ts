import { spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AgentEvent } from '../../src/agent/events.js'
import { runAgentCli } from '../helpers/agent.js'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { FakeAnthropic, type FakeReply, type RecordedRequest } from '../helpers/fake-anthropic.js'
import { repoRoot } from '../helpers/fixtures.js'
import { fixtureEntry, waitFor } from '../helpers/runtime.js'
import { requireTool } from '../helpers/tools.js'
import { Terminal } from '../helpers/terminal.js'

/**
 * The agent as the client its children ask (src/agent/child-questions.ts):
 * `myc run` against the fake Messages API, with a 2025 child that asks with
 * real requests mid-call (elicit.mjs) and the both-era conformance fixture
 * spoken to in 2026-07-28 (it asks through input_required, which the bridge
 * turns into the same requests). Sampling is answered by the agent's model
 * (a non-streaming Messages request the fake records), roots by the
 * working directory; elicitation, with no person at a terminal, is not
 * offered, so the children say so instead of waiting.
 */

const conformance = path.join(repoRoot, 'tests/fixtures/servers/conformance.mjs')
const config = writeConfig({
  mcpServers: {
    asker: fixtureEntry('elicit'),
    conf: { command: process.execPath, args: [conformance], era: 'modern' },
  },
  agent: { maxTokens: 512 },
})

/** The agent's turns: each calls one tool, the last one answers. */
const TURNS: Array<{ name: string; input: Record<string, unknown> }> = [
  { name: 'asker__sample', input: {} },
  { name: 'conf__test_sampling', input: { prompt: 'Capital of France?' } },
  { name: 'conf__test_input_required_result_list_roots', input: {} },
  { name: 'asker__ask', input: {} },
  { name: 'conf__test_elicitation', input: { message: 'Who are you?' } },
]

describe('myc run (build/myc.cjs): the agent answers what its children ask during a tool call', () => {
  const fake = new FakeAnthropic()
  const sampling: RecordedRequest[] = []
  beforeAll(async () => {
    await fake.start()
    let turn = 0
    fake.setScript((request): FakeReply => {
      // The children's sampling: a plain (non-streaming) request without tools.
      if (request.body.stream !== true) {
        sampling.push(request)
        return {
          content: [{ type: 'text', text: 'Paris, said the model' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 100, output_tokens: 7 },
        }
      }
      const next = TURNS[turn++]
      return next
        ? { content: [{ type: 'tool_use', name: next.name, input: next.input }], stop_reason: 'tool_use' }
        : { content: [{ type: 'text', text: 'Done.' }] }
    })
  })
  afterAll(async () => {
    await fake.close()
  })

  it('samples with its own model, lists its working directory as the root, and says elicitation is not available headless', async () => {
    const r = await runAgentCli(['run', 'use the tools', '--json', '--config', config], { fake })
    expect(r.code, r.stderr).toBe(0)
    const results = r.events.filter((e): e is Extract<AgentEvent, { type: 'tool_result' }> => e.type === 'tool_result')
    const text = (tool: string) => JSON.stringify(results.find((e) => e.tool === tool)?.content)
    const ok = (tool: string) => results.find((e) => e.tool === tool)?.ok

    // A 2025 child's sampling/createMessage, and a 2026 child's input_required asking the same: both answered by the model.
    expect(text('asker:sample')).toContain('Paris, said the model')
    expect(text('conf:test_sampling')).toContain('LLM response: Paris, said the model')
    expect(sampling).toHaveLength(2)
    expect(JSON.stringify(sampling[0]!.body.messages)).toContain('Say hi')
    expect(JSON.stringify(sampling[1]!.body.messages)).toContain('Capital of France?')
    for (const s of sampling) {
      expect(s.body.tools).toBeUndefined()
      expect(s.body.max_tokens).toBeLessThanOrEqual(512)
    }
    // The run's usage counts the sampling too: six agent turns (10 in, 5 out each, the fake's default) and two answers (100 in, 7 out).
    const end = r.events.at(-1) as Extract<AgentEvent, { type: 'session_end' }>
    expect(end.usage).toMatchObject({ inputTokens: 6 * 10 + 2 * 100, outputTokens: 6 * 5 + 2 * 7 })
    // roots/list: the working directory of the run.
    expect(text('conf:test_input_required_result_list_roots')).toContain(pathToFileURL(process.cwd()).href)
    // Elicitation is not offered without a person: the 2025 child is refused, the 2026 child says the capability is missing.
    expect(ok('asker:ask')).toBe(false)
    expect(text('asker:ask')).toMatch(/refused/)
    expect(ok('conf:test_elicitation')).toBe(false)
    expect(text('conf:test_elicitation')).toMatch(/elicitation/)
  }, 60_000)
})

const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)

describe('myc chat on a terminal (build/myc.cjs, tmux): the person answers a child’s elicitation and allows its sampling', () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it.runIf(hasTmux)(
    'asks the form on the prompt, and asks before the model answers a child',
    async () => {
      requireBundle()
      const term = new Terminal('questions')
      const { tmux } = term
      const screen = () => tmux('capture-pane', '-p', '-t', 'chat')
      const tools = ['asker__ask', 'asker__sample']
      let turn = 0
      fake.setScript((request): FakeReply => {
        if (request.body.stream !== true) return { content: [{ type: 'text', text: 'hello from the model' }] }
        const last = JSON.stringify(request.body.messages.at(-1))
        if (last.includes('tool_result'))
          return {
            content: [
              {
                type: 'text',
                text: `result: ${last.includes('teal') ? 'got teal' : last.includes('hello from the model') ? 'got the sample' : 'got nothing'}`,
              },
            ],
          }
        return { content: [{ type: 'tool_use', name: tools[turn++]!, input: {} }] }
      })
      try {
        const home = mkdtempSync(path.join(tmpdir(), 'myc-home-'))
        term.open(
          'chat',
          `HOME=${home} ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} ${process.execPath} ${bundle} chat --config ${config}; echo EXIT=$?; sleep 60`,
        )
        await waitFor(() => screen().includes('myc>'), 20_000, 'the prompt')
        tmux('send-keys', '-t', 'chat', 'ask me', 'Enter')
        await waitFor(
          () => screen().includes('Answer it? [y]es / [n]o (decline) / [c]ancel'),
          20_000,
          'the elicitation question',
        )
        expect(screen()).toContain('[asker] asks: Favourite colour?')
        tmux('send-keys', '-t', 'chat', 'y', 'Enter')
        await waitFor(() => screen().includes('colour (string; optional):'), 20_000, 'the form field')
        tmux('send-keys', '-t', 'chat', 'teal', 'Enter')
        await waitFor(() => screen().includes('result: got teal'), 20_000, 'the answer reaching the child and back')
        tmux('send-keys', '-t', 'chat', 'sample something', 'Enter')
        await waitFor(
          () =>
            screen().includes('Server "asker" asks the model to answer it (sampling, up to 10 tokens). Allow? [y/n]'),
          20_000,
          'the sampling question',
        )
        tmux('send-keys', '-t', 'chat', 'y', 'Enter')
        await waitFor(() => screen().includes('result: got the sample'), 20_000, 'the sampled answer')
        tmux('send-keys', '-t', 'chat', 'C-d')
        await waitFor(() => screen().includes('EXIT=0'), 20_000, 'the chat to exit 0')
      } finally {
        term.close()
      }
    },
    90_000,
  )
})

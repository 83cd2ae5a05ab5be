import { spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAgentCli } from '../helpers/agent.js'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { fixtureEntry, waitFor } from '../helpers/runtime.js'
import { requireTool } from '../helpers/tools.js'
import { Terminal } from '../helpers/terminal.js'

/**
 * A budget in `myc chat` (src/agent/budget.ts): the turn that could pass the
 * cap is not sent, the person is told in one line (the spend and the cap),
 * and `/budget N` raises it for the rest of the chat.
 */

const price = { inputPerMTok: 3, outputPerMTok: 15 }

describe('myc chat with a budget (build/myc.cjs)', () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it('piped: the budget stops the turn with one line, /budget N raises it, and the next turn runs', async () => {
    const config = writeConfig({ mcpServers: { echo: fixtureEntry('echo') }, agent: { price } })
    fake.setScript((req) => ({ content: [{ type: 'text', text: `reply to ${req.body.messages.length} messages` }] }))
    const before = fake.requests.length
    const r = await runAgentCli(['chat', '--config', config, '--max-budget-usd', '0.0001'], {
      fake,
      input: 'hello\n/budget\n/budget 1\nagain\n',
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(
      /myc: budget reached: spent \$0 of the \$0\.0001 cap, and the next request could cost up to \$[\d.]+ \(\/budget N raises it for this chat\)\n/,
    )
    expect(r.stderr).toContain('spent 0 tokens, $0; budget $0.0001 (/budget N sets one in USD')
    expect(r.stderr).toContain('spent 0 tokens, $0; budget $1 for the rest of this chat')
    // Only the turn after /budget reached the model; the stopped turn is in the conversation, closed.
    expect(fake.requests.length - before).toBe(1)
    expect(fake.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: '(stopped: the budget was reached)' },
      { role: 'user', content: 'again' },
    ])
    expect(r.stdout).toBe('reply to 3 messages\n')
  }, 30_000)

  const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)
  it.runIf(hasTmux)(
    'on a terminal: the status line shows the cap, the budget stops the turn and says so, /budget N raises it and the next turn runs',
    async () => {
      requireBundle()
      const term = new Terminal('chat-budget')
      const { tmux } = term
      const screen = () => tmux('capture-pane', '-p', '-t', 'chat')
      const status = () =>
        screen()
          .split('\n')
          .map((l) => l.trimEnd())
          .filter((l) => l.startsWith('open mode · '))
          .at(-1) ?? ''
      const config = writeConfig({ mcpServers: { echo: fixtureEntry('echo') }, agent: { price } })
      const home = mkdtempSync(path.join(tmpdir(), 'myc-home-'))
      fake.setScript((req) => ({ content: [{ type: 'text', text: `Reply to ${req.body.messages.length} messages.` }] }))
      const before = fake.requests.length
      try {
        term.open(
          'chat',
          `HOME=${home} NO_COLOR=1 ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} ${process.execPath} ${bundle} chat --config ${config} --max-budget-usd 0.0001; echo EXIT=$?; sleep 60`,
          { cols: 220 },
        )
        await waitFor(() => screen().includes('myc>'), 20_000, 'the prompt')
        expect(status()).toMatch(/^open mode · \S+ · 0 in \/ 0 out · \$0 · budget \$0\.0001$/)
        tmux('send-keys', '-t', 'chat', 'hello there', 'Enter')
        await waitFor(() => screen().includes('myc: budget reached'), 20_000, 'the budget line')
        expect(screen()).toMatch(
          /myc: budget reached: spent \$0 of the \$0\.0001 cap, and the next request could cost up to \$[\d.]+ \(\/budget N raises it for this chat\)/,
        )
        expect(fake.requests.length).toBe(before)
        tmux('send-keys', '-t', 'chat', '/budget 0.5', 'Enter')
        await waitFor(() => screen().includes('budget $0.5 for the rest of this chat'), 20_000, 'the /budget answer')
        await waitFor(() => status().endsWith('budget $0.5'), 20_000, 'the status line after /budget')
        tmux('send-keys', '-t', 'chat', 'and now', 'Enter')
        await waitFor(() => screen().includes('Reply to 3 messages.'), 20_000, 'the reply')
        expect(fake.requests.length).toBe(before + 1)
        // One request of 10 in / 5 out at the configured price, and the cap.
        await waitFor(
          () => status().startsWith('open mode · ') && status().includes('10 in / 5 out'),
          20_000,
          'the status line after the reply',
        )
        expect(status()).toMatch(/^open mode · \S+ · 10 in \/ 5 out · \$0\.0001 · budget \$0\.5$/)
        tmux('send-keys', '-t', 'chat', '/quit', 'Enter')
        await waitFor(() => screen().includes('EXIT='), 20_000, 'the end')
        expect(screen()).toContain('EXIT=0')
      } finally {
        term.close()
      }
    },
    60_000,
  )
})

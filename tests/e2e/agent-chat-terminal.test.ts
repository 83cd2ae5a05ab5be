import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle } from '../helpers/e2e.js'
import { FakeAnthropic, type FakeReply } from '../helpers/fake-anthropic.js'
import { fixtureEntry } from '../helpers/runtime.js'
import { requireTool } from '../helpers/tools.js'
import { Terminal } from '../helpers/terminal.js'
import { waitFor } from '../helpers/wait-for.js'

const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)

/**
 * `myc chat` on a real terminal (tmux): /quit naming the session by the
 * name /save gave it.
 */
describe.runIf(hasTmux)('myc chat on a terminal (build/myc.cjs, tmux)', () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it('resumes by name', async () => {
    requireBundle()
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-chat-tty-'))
    const config = path.join(dir, 'mycelium.config.json')
    writeFileSync(config, JSON.stringify({ mcpServers: { echo: fixtureEntry('echo') } }))
    fake.setScript((): FakeReply => ({ content: [{ type: 'text', text: 'plain reply' }] }))
    const term = new Terminal('chat-tty')
    const { tmux } = term
    const screen = () => tmux('capture-pane', '-p', '-t', 'chat')
    const send = (...keys: string[]) => tmux('send-keys', '-t', 'chat', ...keys)
    try {
      term.open(
        'chat',
        `env -u NO_COLOR -u FORCE_COLOR HOME=${dir} ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} ${process.execPath} ${bundle} chat --config ${config}; echo EXIT=$?; sleep 60`,
        { cwd: dir },
      )
      await waitFor(() => screen().includes('myc>'), 20_000, 'the prompt')

      // /save NAME, then /quit: resume it by that name.
      send('/save demo1', 'Enter')
      await waitFor(() => screen().includes('saved as "demo1"'), 20_000, '/save')
      send('/quit', 'Enter')
      await waitFor(() => screen().includes('EXIT='), 20_000, 'the end')
      expect(screen()).toMatch(/session \S+ is recorded: myc chat --resume demo1\n/)
      expect(screen()).toContain('EXIT=0')
    } finally {
      term.close()
    }
  }, 90_000)
})

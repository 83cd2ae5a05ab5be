import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
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

/** The model's Markdown: emphasis, code, a list, a link. */
const MARKDOWN = 'Use **skills** and `myc init`:\n\n- first\n- second\n\nSee [the docs](https://example.com/docs).'

/**
 * `myc chat` on a real terminal (tmux): replies shown as Markdown reads,
 * Ctrl-C at an approval question recorded as cancelled (not as a "no"),
 * Ctrl-L clearing the screen down to the status line and the prompt, and
 * /quit naming the session by the name /save gave it.
 */
describe.runIf(hasTmux)('myc chat on a terminal (build/myc.cjs, tmux)', () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it('renders Markdown, records Ctrl-C at a question as cancelled, clears with Ctrl-L, and resumes by name', async () => {
    requireBundle()
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-chat-tty-'))
    const config = path.join(dir, 'mycelium.config.json')
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { echo: fixtureEntry('echo') },
        agent: { risk: [{ pattern: 'echo:add', level: 'high' }] },
      }),
    )
    fake.setScript((req): FakeReply => {
      const last = JSON.stringify(req.body.messages.at(-1))
      if (last.includes('add please'))
        return { content: [{ type: 'tool_use', name: 'echo__add', input: { a: 1, b: 2 } }] }
      return { content: [{ type: 'text', text: last.includes('format') ? MARKDOWN : 'plain reply' }] }
    })
    const term = new Terminal('chat-tty')
    const { tmux } = term
    const screen = () => tmux('capture-pane', '-p', '-t', 'chat')
    const coloured = () => tmux('capture-pane', '-p', '-e', '-t', 'chat')
    const send = (...keys: string[]) => tmux('send-keys', '-t', 'chat', ...keys)
    try {
      term.open(
        'chat',
        `env -u NO_COLOR -u FORCE_COLOR HOME=${dir} ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} ${process.execPath} ${bundle} chat --config ${config}; echo EXIT=$?; sleep 60`,
        { cwd: dir },
      )
      await waitFor(() => screen().includes('myc>'), 20_000, 'the prompt')

      // Markdown: no markup left, a bullet per item, the link's address after its text, bold in bold.
      send('format it', 'Enter')
      await waitFor(() => screen().includes('See the docs (https://example.com/docs).'), 20_000, 'the Markdown reply')
      const shown = screen()
      expect(shown).toContain('Use skills and myc init:')
      expect(shown).toMatch(/^• first$/m)
      expect(shown).toMatch(/^• second$/m)
      expect(shown, shown).not.toMatch(/\*\*|`/)
      // tmux writes the attributes back its own way: bold on before the word, off after it.
      expect(coloured()).toMatch(/\u001b\[1mskills\u001b\[0m/)

      // Ctrl-C at the approval question: the call does not run, and it is cancelled, not answered "no".
      send('add please', 'Enter')
      await waitFor(() => screen().includes('Allow echo:add (high risk)'), 20_000, 'the approval question')
      send('C-c')
      await waitFor(() => screen().includes('(interrupted)'), 20_000, 'the turn to end')
      expect(screen()).toContain('✗ echo:add refused: cancelled: the user pressed Ctrl-C at the question')
      expect(screen()).not.toContain('answered no')

      // Ctrl-L: the screen cleared, the status line and the prompt at its top.
      send('C-l')
      await waitFor(() => !screen().includes('See the docs'), 20_000, 'the screen to clear')
      const cleared = screen().split('\n').filter(Boolean)
      expect(cleared).toEqual([expect.stringMatching(/^open mode · \S+ · \d+ in \/ \d+ out$/), 'myc>'])

      // /save NAME, then /quit: resume it by that name.
      send('/save demo1', 'Enter')
      await waitFor(() => screen().includes('saved as "demo1"'), 20_000, '/save')
      send('/quit', 'Enter')
      await waitFor(() => screen().includes('EXIT='), 20_000, 'the end')
      expect(screen()).toMatch(/session \S+ is recorded: myc chat --resume demo1\n/)
      expect(screen()).toContain('EXIT=0')
      // The session file has the refusal as cancelled.
      const sessions = path.join(dir, '.mycelium', 'sessions')
      const file = readFileSync(
        path.join(sessions, spawnSync('ls', [sessions], { encoding: 'utf8' }).stdout.trim()),
        'utf8',
      )
      expect(file).toContain('not approved: cancelled: the user pressed Ctrl-C at the question')
    } finally {
      term.close()
    }
  }, 90_000)
})

import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAgentCli } from '../helpers/agent.js'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { renderMarkdown, unsafeHtml } from '../helpers/markdown.js'
import { fixtureEntry, waitFor } from '../helpers/runtime.js'
import { Terminal } from '../helpers/terminal.js'

/**
 * Text from outside myc never reaches the terminal as control characters:
 * the model's replies, tool names, descriptions and results, children's
 * errors, session and memory files are shown with their escapes visible,
 * in every command, and `--json` keeps the exact text, escaped.
 */

const ESC = '\u001b'
const BEL = '\u0007'
/** OSC 52 (write "rm -rf ~" to the clipboard), OSC 0 (window title), SGR 8 (conceal), a lone CR, a bidi override: what tests/fixtures/servers/hostile-text.mjs sends too. */
const HOSTILE = `${ESC}]52;c;cm0gLXJmIH4K${BEL}${ESC}]0;pwned-title${BEL}${ESC}[8mconcealed${ESC}[0m\rover\u202Eevil`
/** How it shows. */
const SHOWN = '\\x1b]52;c;cm0gLXJmIH4K\\x07\\x1b]0;pwned-title\\x07\\x1b[8mconcealed\\x1b[0m\\x0dover\\u202eevil'
/** Any character a terminal acts on but newline and tab. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

/** Its definitions hold escapes, which myc withholds (docs/pinning.md) unless the server's entry allows them: these tests are about showing them. */
const hostileServer = (extra: Record<string, unknown> = {}) =>
  fixtureEntry('hostile-text', { dangerouslyAllowHiddenText: true, ...extra })

describe('myc run, text mode: the reply, tool calls and errors shown, never obeyed', () => {
  const fake = new FakeAnthropic()
  const config = writeConfig({ mcpServers: { hostile: hostileServer() } })
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it('a reply holding OSC 52, OSC 0 and ESC[8m is printed with its escapes visible; the tool call line too', async () => {
    fake.setScript((_req, i) =>
      i === 0
        ? { content: [{ type: 'tool_use', name: 'hostile__say', input: { text: `arg ${HOSTILE}` } }] }
        : { content: [{ type: 'text', text: `Reply: ${HOSTILE}` }] },
    )
    const r = await runAgentCli(['run', 'say it', '--config', config], { fake })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).not.toMatch(CONTROLS)
    expect(r.stderr).not.toMatch(CONTROLS)
    expect(r.stdout).toBe(`Reply: ${SHOWN}\n`)
    // The call's input is JSON, escaped as JSON is, and nothing raw.
    expect(r.stderr).toContain('→ hostile:say {"text":"arg \\u001b]52;c;cm0gLXJmIH4K\\u0007\\u001b]0;pwned-title')
    expect(r.stderr).toContain('\\u202eevil"}')
  }, 30_000)

  it('streamed in pieces (--include-partial is for --json; chat streams): split escapes stay visible', async () => {
    fake.setScript([{ content: [{ type: 'text', text: `a${HOSTILE}b` }] }])
    const r = await runAgentCli(['run', 'say it', '--config', config], { fake })
    expect(r.stdout).toBe(`a${SHOWN}b\n`)
  }, 30_000)

  it('--json keeps the exact text, every control JSON-escaped', async () => {
    fake.setScript((_req, i) =>
      i === 0
        ? { content: [{ type: 'tool_use', name: 'hostile__say', input: {} }] }
        : { content: [{ type: 'text', text: `Reply: ${HOSTILE}` }] },
    )
    const r = await runAgentCli(['run', 'say it', '--json', '--config', config], { fake })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).not.toMatch(CONTROLS)
    const text = r.events.find((e) => e.type === 'text') as { text: string }
    expect(text.text).toBe(`Reply: ${HOSTILE}`)
    const result = r.events.find((e) => e.type === 'tool_result') as { content: Array<{ text: string }> }
    expect(result.content[0]!.text).toBe(`result ${HOSTILE}`)
  }, 30_000)

  it('myc sessions show prints the recorded session with its escapes visible; --json has them exactly', async () => {
    fake.setScript([{ content: [{ type: 'text', text: `Recorded: ${HOSTILE}` }] }])
    const run = await runAgentCli(['run', 'record it', '--json', '--config', config], { fake })
    const id = run.events[0]!.sessionId
    const shown = await runAgentCli(['sessions', 'show', id, '--config', config])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).not.toMatch(CONTROLS)
    expect(shown.stdout).toContain(`assistant: Recorded: ${SHOWN}`)
    const json = await runAgentCli(['sessions', 'show', id, '--json', '--config', config])
    expect(json.stdout).not.toMatch(CONTROLS)
    expect(JSON.stringify(JSON.parse(json.stdout))).toContain(JSON.stringify(`Recorded: ${HOSTILE}`))
  }, 30_000)
})

describe('inspection commands: a child’s names, descriptions and errors shown, never obeyed', () => {
  const config = writeConfig({
    mcpServers: { hostile: hostileServer(), refuses: hostileServer({ env: { HOSTILE_FAIL: '1' } }) },
  })

  it('myc tools: a tool description with escapes', async () => {
    const r = await runAgentCli(['tools', '--config', config])
    expect(r.stdout).not.toMatch(CONTROLS)
    expect(r.stderr).not.toMatch(CONTROLS)
    expect(r.stdout).toContain(`hostile__say  hostile:say  ${`Says things ${SHOWN}`.slice(0, 77)}...`)
    const json = await runAgentCli(['tools', '--json', '--config', config])
    expect(json.stdout).not.toMatch(CONTROLS)
    expect(
      (JSON.parse(json.stdout) as { tools: Array<{ id: string; description: string }> }).tools.find(
        (t) => t.id === 'hostile:say',
      )!.description,
    ).toBe(`Says things ${HOSTILE}`)
  }, 30_000)

  it('myc status, myc doctor: a server error with escapes', async () => {
    const status = await runAgentCli(['status', '--config', config])
    expect(status.code).toBe(3)
    expect(status.stdout).not.toMatch(CONTROLS)
    expect(status.stderr).not.toMatch(CONTROLS)
    expect(status.stdout).toMatch(
      new RegExp(`^FAILED +refuses +.*refused ${SHOWN.replace(/[\\[\]().*+?^$|]/g, '\\$&')}$`, 'm'),
    )
    // With --verbose the log lines say it too (the state changes, the restarts): shown as well, SGR codes dropped (logs are plain or myc's colour).
    const verbose = await runAgentCli(['status', '--verbose', '--config', config])
    expect(verbose.stderr).toContain(
      'refused \\x1b]52;c;cm0gLXJmIH4K\\x07\\x1b]0;pwned-title\\x07concealed\\x0dover\\u202eevil',
    )
    expect(verbose.stderr).not.toMatch(CONTROLS)
    const json = await runAgentCli(['status', '--json', '--config', config])
    expect(json.stdout).not.toMatch(CONTROLS)
    expect(
      (JSON.parse(json.stdout) as { servers: Array<{ key: string; error: string }> }).servers.find(
        (s) => s.key === 'refuses',
      )!.error,
    ).toContain(`refused ${HOSTILE}`)
    const doctor = await runAgentCli(['doctor', '--config', config])
    expect(doctor.stdout).not.toMatch(CONTROLS)
    expect(doctor.stdout).toContain(`✗ server refuses: `)
    expect(doctor.stdout).toContain(`refused ${SHOWN}`)
  }, 60_000)

  it('myc memory show / search / list: memory written by hand (or by a model) with escapes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-memory-escapes-'))
    const memoryConfig = path.join(dir, 'mycelium.config.json')
    writeFileSync(memoryConfig, JSON.stringify({ mcpServers: {} }))
    mkdirSync(path.join(dir, '.mycelium', 'memory'), { recursive: true })
    writeFileSync(
      path.join(dir, '.mycelium', 'memory', 'dev.memory.md'),
      `# Memory of role dev\n\n## Facts\n\n### [mem_a1]\nDeploy ${HOSTILE}\n<!-- meta: {"type":"fact","tags":["t\\u001b]0;tag\\u0007"],"createdAt":"2026-01-01T00:00:00.000Z"} -->\n`,
    )
    for (const args of [
      ['memory', 'show', 'dev'],
      ['memory', 'search', 'deploy'],
      ['memory', 'list'],
    ]) {
      const r = await runAgentCli([...args, '--config', memoryConfig])
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0)
      expect(r.stdout, args.join(' ')).not.toMatch(CONTROLS)
      expect(r.stderr, args.join(' ')).not.toMatch(CONTROLS)
      if (args[1] !== 'list') {
        // Content lines are indented (a lone CR ends a line there too), so none reads as an entry's header.
        expect(r.stdout).toContain(`  Deploy ${SHOWN.replace('\\x0dover', '\\x0d  over')}`)
        expect(r.stdout).toContain('tags: t\\x1b]0;tag\\x07')
      } else expect(r.stdout).toMatch(/^dev +1 entries/)
    }
    const json = await runAgentCli(['memory', 'show', 'dev', '--json', '--config', memoryConfig])
    expect(json.stdout).not.toMatch(CONTROLS)
    expect((JSON.parse(json.stdout) as { entries: Array<{ content: string }> }).entries[0]!.content).toBe(
      `Deploy ${HOSTILE}`,
    )
  }, 30_000)
})

describe('myc sessions export --format md: outside text cannot close its fence or make a link', () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it('a tool result holding ``` and ```` and a javascript: link stays in its block; the reply cannot link or inject HTML', async () => {
    const config = writeConfig({ mcpServers: { echo: fixtureEntry('echo') } })
    const injected =
      'done\n```\n\n# Forged heading\n\n[click me](javascript:alert(1))\n\n````\n<img src=x onerror=alert(1)>\n````'
    fake.setScript((_req, i) =>
      i === 0
        ? {
            content: [
              { type: 'text', text: 'Echoing.' },
              { type: 'tool_use', name: 'echo__echo', input: { message: injected } },
            ],
          }
        : {
            content: [
              { type: 'text', text: 'Reply [x](javascript:alert(1)) <script>alert(2)</script>\n```\nunclosed fence' },
            ],
          },
    )
    const run = await runAgentCli(['run', 'echo it', '--json', '--config', config], { fake })
    expect(run.code, run.stderr).toBe(0)
    const id = run.events[0]!.sessionId
    const md = (await runAgentCli(['sessions', 'export', id, '--format', 'md', '--config', config])).stdout
    for (const html of Object.values(renderMarkdown(md))) {
      expect(unsafeHtml(html), html).toEqual([])
      expect(html).not.toContain('<h1>Forged heading</h1>')
      // The result is one code block holding the text exactly (as HTML-escaped text).
      expect(html).toContain(
        `<pre><code>${injected.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')}\n</code></pre>`,
      )
      // The reply keeps its words; its link and tag are text.
      expect(html).toContain('Reply [x](javascript:alert(1)) &lt;script&gt;alert(2)&lt;/script&gt;')
    }
    // Two results' worth of fences: the call's input (JSON: ``` inside a string) and the result, each longer than what it holds.
    expect(md).toContain('`````\ndone\n```\n')
  }, 30_000)
})

describe('URL secrets are never echoed', () => {
  const secretUrl = 'http://user:pass@127.0.0.1:1/mcp?token=abc'
  const config = writeConfig({ mcpServers: { remote: { type: 'http', url: secretUrl } } })
  const leaks = (text: string) => /user:pass|pass@|token=abc/.test(text)

  it('myc status --json, myc doctor --json and their text and logs: the child URL without user, password and query', async () => {
    for (const args of [['status', '--json'], ['doctor', '--json'], ['status', '--verbose'], ['doctor']]) {
      const r = await runAgentCli([...args, '--config', config])
      expect(leaks(r.stdout), `${args.join(' ')} stdout: ${r.stdout}`).toBe(false)
      expect(leaks(r.stderr), `${args.join(' ')} stderr: ${r.stderr}`).toBe(false)
    }
    const status = JSON.parse((await runAgentCli(['status', '--json', '--config', config])).stdout) as {
      servers: Array<{ error: string }>
    }
    expect(status.servers[0]!.error).toContain('http://***:***@127.0.0.1:1/mcp?token=***')
    const doctor = JSON.parse((await runAgentCli(['doctor', '--json', '--config', config])).stdout) as {
      checks: Array<{ name: string; detail: string }>
    }
    expect(doctor.checks.find((c) => c.name === 'server remote')!.detail).toContain(
      'http://***:***@127.0.0.1:1/mcp?token=***',
    )
  }, 60_000)

  it('the agent’s api_unreachable event (and its text) with ANTHROPIC_BASE_URL holding credentials and a key', async () => {
    const open = writeConfig({ mcpServers: {} })
    const env = { ANTHROPIC_BASE_URL: 'http://u:p@127.0.0.1:1/?key=s' }
    const [json, text] = await Promise.all([
      runAgentCli(['run', 'hi', '--json', '--config', open], { env }),
      runAgentCli(['run', 'hi', '--config', open], { env }),
    ])
    const error = json.events.find((e) => e.type === 'error') as { code: string; message: string }
    expect(error.code).toBe('api_unreachable')
    expect(error.message).toContain('http://***:***@127.0.0.1:1/?key=***')
    expect(json.stdout).not.toMatch(/u:p@|key=s\b/)
    expect(text.stderr).toContain('cannot reach the Anthropic API at http://***:***@127.0.0.1:1/?key=***')
    expect(`${text.stdout}${text.stderr}`).not.toMatch(/u:p@|key=s\b/)
  }, 60_000)
})

const hasTmux = spawnSync('tmux', ['-V']).status === 0

describe('myc chat in a real terminal (tmux)', () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it.runIf(hasTmux)(
    'a streamed reply with OSC 52, OSC 0 and ESC[8m sets no clipboard, no title and hides nothing; myc’s own colour stays',
    async () => {
      requireBundle()
      const dir = mkdtempSync(path.join(tmpdir(), 'myc-chat-escapes-'))
      const config = path.join(dir, 'mycelium.config.json')
      writeFileSync(config, JSON.stringify({ mcpServers: { hostile: hostileServer() } }))
      mkdirSync(path.join(dir, 'home'))
      fake.setScript((req) => {
        const last = req.body.messages.at(-1)!
        if (typeof last.content === 'string')
          return { content: [{ type: 'tool_use', name: 'hostile__say', input: {} }] }
        return { content: [{ type: 'text', text: `Reply: ${HOSTILE} END` }] }
      })
      const term = new Terminal('chat-escapes')
      const { tmux } = term
      const screen = (escapes = false) =>
        tmux('capture-pane', '-p', '-J', ...(escapes ? ['-e'] : []), '-S', '-', '-t', 'chat')
      try {
        term.open(
          'chat',
          `sleep 0.5; env -u ANTHROPIC_AUTH_TOKEN -u ANTHROPIC_MODEL -u NO_COLOR HOME='${path.join(dir, 'home')}' ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} '${process.execPath}' '${bundle}' chat --config '${config}'; sleep 60`,
          { cols: 250, cwd: dir },
        )
        // As a terminal that obeys: OSC 52 from the program would set a tmux buffer (the clipboard).
        tmux('set', '-g', 'set-clipboard', 'on')
        await waitFor(
          () =>
            screen()
              .split('\n')
              .some((l) => l.startsWith('myc>')),
          20_000,
          'the prompt',
        )
        const title = tmux('display', '-p', '-t', 'chat', '#{pane_title}').trim()
        tmux('send-keys', '-t', 'chat', 'say the thing', 'Enter')
        await waitFor(() => screen().includes('END'), 20_000, 'the reply')
        await waitFor(() => screen().trimEnd().split('\n').at(-1)!.startsWith('myc>'), 10_000, 'the prompt again')
        const text = screen()
        // Obeyed: none.
        expect(tmux('display', '-p', '-t', 'chat', '#{pane_title}').trim()).toBe(title)
        expect(tmux('list-buffers')).toBe('')
        // Shown as text: every escape of the reply.
        expect(text).toContain(`Reply: ${SHOWN} END`)
        const withAttributes = screen(true)
        expect(withAttributes).not.toContain(`${ESC}[8m`)
        // myc's own colour is still there: the status line is dim.
        expect(withAttributes).toMatch(/\u001b\[2m[^\n]*0 in \/ 0 out/)
      } finally {
        term.close()
      }
      expect(readdirSync(path.join(dir, '.mycelium', 'sessions')).length).toBeGreaterThan(0)
    },
    60_000,
  )
})

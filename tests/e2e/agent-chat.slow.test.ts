import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAgentCli } from '../helpers/agent.js'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { FakeAnthropic, toolResults } from '../helpers/fake-anthropic.js'
import { repoRoot } from '../helpers/fixtures.js'
import { hasBwrap } from '../helpers/code-mode.js'
import { fixtureEntry } from '../helpers/runtime.js'
import { quietWindow, waitFor } from '../helpers/wait-for.js'
import { requireTool } from '../helpers/tools.js'
import { Terminal } from '../helpers/terminal.js'

const policyConfig = path.join(repoRoot, 'tests/fixtures/policy/basic/mycelium.config.json')

describe('myc chat (build/myc.cjs)', () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it('with piped stdin: each line is one turn of one conversation, no prompt, slash commands answered', async () => {
    fake.setScript((req, i) =>
      i === 0
        ? { content: [{ type: 'tool_use', name: 'echo__echo', input: { message: 'first' } }] }
        : { content: [{ type: 'text', text: `reply ${i} to ${req.body.messages.length} messages` }] },
    )
    const before = fake.requests.length
    const r = await runAgentCli(['chat', '--config', policyConfig, '--role', 'developer'], {
      fake,
      input: 'hello\n/skills\n/nope\nand again\n',
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe('reply 1 to 3 messages\nreply 2 to 5 messages\n')
    // The second turn carried the first one: the conversation goes on.
    expect(fake.requests[before + 2]!.body.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ])
    expect([...toolResults(fake.requests[before + 1]!).values()][0]).toMatchObject({
      content: [{ type: 'text', text: 'first' }],
    })
    expect(r.stderr).toMatch(/\* common/)
    expect(r.stderr).toMatch(/Unknown command \/nope\. Did you mean \/help\?|Unknown command \/nope\./)
    expect(r.stderr).not.toMatch(/myc> /)
    // No status line without a terminal.
    expect(r.stderr).not.toMatch(/ in \/ \d+ out/)
  }, 30_000)

  it('piped: a refused call is printed with its reason; --approve LEVEL|PATTERN (repeatable) allows as adhoc’s does', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-chat-approve-'))
    const config = path.join(dir, 'mycelium.config.json')
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          echo: { command: process.execPath, args: [path.join(repoRoot, 'tests/fixtures/servers/echo.mjs')] },
        },
        agent: {
          risk: [
            { pattern: 'echo:add', level: 'high' },
            { pattern: 'echo:fail', level: 'critical' },
          ],
        },
      }),
    )
    fake.setScript((req) =>
      req.body.messages.length === 1
        ? {
            content: [
              { type: 'tool_use', name: 'echo__add', input: { a: 1, b: 2 } },
              { type: 'tool_use', name: 'echo__fail', input: {} },
            ],
            stop_reason: 'tool_use',
          }
        : { content: [{ type: 'text', text: 'done' }] },
    )
    const results = () => [...toolResults(fake.requests.at(-1)!).values()].map((r) => JSON.stringify(r))
    const refused = await runAgentCli(['chat', '--config', config], { fake, input: 'add them\n' })
    expect(refused.code, refused.stderr).toBe(0)
    expect(refused.stderr).toContain(
      '✗ echo:add refused: high risk needs approval and there is no terminal to ask (pass --approve high or --approve echo:add)',
    )
    expect(refused.stderr).toContain('✗ echo:fail refused: critical risk needs approval')
    expect(results()[0]).toMatch(/not approved/)
    const byPattern = await runAgentCli(['chat', '--config', config, '--approve', 'echo:add'], {
      fake,
      input: 'add them\n',
    })
    expect(byPattern.code, byPattern.stderr).toBe(0)
    expect(results()[0]).toContain('"text":"3"')
    expect(byPattern.stderr).not.toMatch(/echo:add refused/)
    expect(byPattern.stderr).toMatch(/echo:fail refused/)
    const both = await runAgentCli(['chat', '--config', config, '--approve', 'high', '--approve=echo:fail'], {
      fake,
      input: 'add them\n',
    })
    expect(both.stderr).not.toMatch(/refused/)
    const bad = await runAgentCli(['chat', '--config', config, '--approve', 'echo:'], { fake, input: 'x\n' })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--approve takes a risk level/)
  }, 30_000)

  it.runIf(hasBwrap)(
    'piped, in code mode (agent.codeMode): run_code is offered, and its risky inner call refused as a direct one',
    async () => {
      const config = writeConfig({
        mcpServers: { echo: fixtureEntry('echo') },
        agent: { codeMode: true, risk: [{ pattern: 'echo:add', level: 'high' }] },
      })
      const code = "await tools.echo.echo({ message: 'low' }); return await tools.echo.add({ a: 1, b: 2 })"
      fake.setScript((req) =>
        req.body.messages.length === 1
          ? { content: [{ type: 'tool_use', name: 'mycelium__run_code', input: { code } }], stop_reason: 'tool_use' }
          : { content: [{ type: 'text', text: 'done' }] },
      )
      const refused = await runAgentCli(['chat', '--config', config], { fake, input: 'add them\n' })
      expect(refused.code, refused.stderr).toBe(0)
      expect(fake.requests.at(-1)!.body.tools!.map((t) => t.name)).toEqual([
        'mycelium__search_tools',
        'mycelium__run_code',
      ])
      // The code's calls are indented under the run_code call; the refused one says why.
      const lines = refused.stderr.split('\n')
      expect(lines.filter((l) => /^ {2}[→✓] echo:echo /.test(l))).toHaveLength(2)
      expect(lines).toContain(
        '✗ echo:add refused: high risk needs approval and there is no terminal to ask (pass --approve high or --approve echo:add)',
      )
      expect(JSON.stringify([...toolResults(fake.requests.at(-1)!).values()])).toContain('not approved')
      const approved = await runAgentCli(['chat', '--config', config, '--approve', 'echo:add'], {
        fake,
        input: 'add\n',
      })
      expect(approved.stderr).not.toMatch(/refused/)
      expect([...toolResults(fake.requests.at(-1)!).values()][0]).toMatchObject({ content: [{ text: '"3"' }] })
    },
    30_000,
  )

  it('piped, lazy open mode: a tool never listed is refused by its own name exactly as through call_tool', async () => {
    const config = writeConfig({
      mcpServers: { echo: fixtureEntry('echo') },
      session: { lazyTools: true },
      agent: { risk: [{ pattern: 'echo:add', level: 'high' }] },
    })
    fake.setScript((req) =>
      req.body.messages.length === 1
        ? {
            content: [
              { type: 'tool_use', name: 'echo__add', input: { a: 1, b: 2 } },
              {
                type: 'tool_use',
                name: 'mycelium__call_tool',
                input: { name: 'echo__add', arguments: { a: 1, b: 2 } },
              },
            ],
          }
        : { content: [{ type: 'text', text: 'done' }] },
    )
    const before = fake.requests.length
    const r = await runAgentCli(['chat', '--config', config], { fake, input: 'add them\n' })
    expect(r.code, r.stderr).toBe(0)
    expect((fake.requests[before]!.body.tools ?? []).map((t) => t.name)).not.toContain('echo__add')
    const refusals = r.stderr.split('\n').filter((l) => l.includes('refused'))
    expect(refusals).toEqual([
      '✗ echo:add refused: high risk needs approval and there is no terminal to ask (pass --approve high or --approve echo:add)',
      '✗ echo:add refused: high risk needs approval and there is no terminal to ask (pass --approve high or --approve echo:add)',
    ])
    const [byName, throughCallTool] = [...toolResults(fake.requests.at(-1)!).values()]
    expect(byName).toEqual(throughCallTool)
    expect(JSON.stringify(byName)).toMatch(/not approved/)
  }, 30_000)

  it('activates the skills a turn names by trigger before that turn (escalation auto)', async () => {
    fake.setScript(() => ({ content: [{ type: 'text', text: 'ok' }] }))
    const before = fake.requests.length
    const r = await runAgentCli(['chat', '--config', policyConfig, '--role', 'developer'], {
      fake,
      input: 'hello\nnow write something\n',
    })
    expect(r.code, r.stderr).toBe(0)
    expect((fake.requests[before]!.body.tools ?? []).map((t) => t.name)).not.toContain('grow__grow')
    expect((fake.requests[before + 1]!.body.tools ?? []).map((t) => t.name)).toContain('grow__grow')
    expect(r.stderr).toMatch(/\+ skill writer/)
  }, 30_000)

  const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)
  /** The last status line on the screen (`ROLE · MODEL · …`), trimmed. */
  const lastStatus = (screen: string, role: string) =>
    screen
      .split('\n')
      .map((l) => l.trimEnd())
      .filter((l) => l.startsWith(`${role} · `))
      .at(-1)
  it.runIf(hasTmux)(
    'on a terminal: streams replies, escalates with /add, cancels a reply with Ctrl-C, and /quit exits 0',
    async () => {
      requireBundle()
      const term = new Terminal('chat')
      const { tmux } = term
      const screen = () => tmux('capture-pane', '-p', '-t', 'chat')
      fake.setScript((req) => {
        const last = JSON.stringify(req.body.messages.at(-1))
        if (last.includes('slow please'))
          return { content: [{ type: 'text', text: 'this never arrives' }], delayMs: 20_000 }
        return {
          content: [{ type: 'text', text: `Hello from the fake, I see ${(req.body.tools ?? []).length} tools.` }],
        }
      })
      try {
        const home = mkdtempSync(path.join(tmpdir(), 'myc-home-'))
        term.open(
          'chat',
          `HOME=${home} NO_COLOR= FORCE_COLOR= ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} ${process.execPath} ${bundle} --config ${policyConfig} --role developer; echo EXIT=$?; sleep 60`,
        )
        await waitFor(() => screen().includes('myc>'), 20_000, 'the prompt')
        expect(screen()).toMatch(/myc chat \S+ · \/help lists the commands\./)
        // The status line: role, model, active skills, tokens so far; dim.
        expect(lastStatus(screen(), 'developer')).toMatch(/^developer · \S+ · skills: common · 0 in \/ 0 out$/)
        expect(tmux('capture-pane', '-p', '-e', '-t', 'chat')).toMatch(/\u001b\[2mdeveloper · /)
        tmux('send-keys', '-t', 'chat', 'hi there', 'Enter')
        await waitFor(() => screen().includes('Hello from the fake, I see 6 tools.'), 20_000, 'the first reply')
        await waitFor(
          () => (lastStatus(screen(), 'developer') ?? '').endsWith(' 10 in / 5 out'),
          20_000,
          'the status line after the reply',
        )
        expect(lastStatus(screen(), 'developer')).toMatch(/^developer · \S+ · skills: common · 10 in \/ 5 out$/)
        tmux('send-keys', '-t', 'chat', '/add writer', 'Enter')
        await waitFor(() => screen().includes('Skill writer is active'), 20_000, '/add')
        await waitFor(
          () => /skills: common, writer · /.test(lastStatus(screen(), 'developer') ?? ''),
          20_000,
          'the status line after /add',
        )
        tmux('send-keys', '-t', 'chat', 'hi again', 'Enter')
        await waitFor(
          () => /Hello from the fake, I see (9|1\d) tools\./.test(screen()),
          20_000,
          'the reply with more tools',
        )
        tmux('send-keys', '-t', 'chat', 'slow please', 'Enter')
        await waitFor(
          () => fake.requests.some((r) => JSON.stringify(r.body.messages.at(-1)).includes('slow please')),
          20_000,
          'the slow request to reach the model',
        )
        tmux('send-keys', '-t', 'chat', 'C-c')
        await waitFor(() => screen().includes('(interrupted)'), 20_000, 'the cancelled reply')
        tmux('send-keys', '-t', 'chat', '/model claude-other-1', 'Enter')
        await waitFor(
          () =>
            (lastStatus(screen(), 'developer') ?? '').startsWith(
              'developer · claude-other-1 · skills: common, writer · ',
            ),
          20_000,
          'the status line after /model',
        )
        tmux('send-keys', '-t', 'chat', '/quit', 'Enter')
        await waitFor(() => screen().includes('EXIT='), 20_000, 'the end')
        expect(screen()).toContain('EXIT=0')
        // What was typed is kept for the next chat.
        expect(readFileSync(path.join(home, '.mycelium', 'history'), 'utf8')).toMatch(
          /hi there\n\/add writer\nhi again\nslow please\n\/model claude-other-1\n\/quit\n$/,
        )
      } finally {
        term.close()
      }
    },
    90_000,
  )

  it.runIf(hasTmux)(
    "asks inline before a risky call, in the chat's own prompt; Ctrl-D leaves with exit 0",
    async () => {
      requireBundle()
      const term = new Terminal('chat-approve')
      const { tmux } = term
      const screen = () => tmux('capture-pane', '-p', '-t', 'chat')
      const dir = mkdtempSync(path.join(tmpdir(), 'myc-chat-approve-'))
      const config = path.join(dir, 'mycelium.config.json')
      writeFileSync(
        config,
        JSON.stringify({
          mcpServers: {
            echo: { command: process.execPath, args: [path.join(repoRoot, 'tests/fixtures/servers/echo.mjs')] },
          },
          agent: { risk: [{ pattern: 'echo:add', level: 'high' }], price: { inputPerMTok: 3, outputPerMTok: 15 } },
        }),
      )
      fake.setScript(
        (_req, i) =>
          [
            { content: [{ type: 'tool_use' as const, name: 'echo__add', input: { a: 2, b: 2 } }] },
            { content: [{ type: 'text' as const, text: 'The sum came back.' }] },
          ][i % 2]!,
      )
      try {
        term.open(
          'chat',
          `HOME=${dir} ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} ${process.execPath} ${bundle} chat --config ${config}; echo EXIT=$?; sleep 60`,
        )
        await waitFor(() => screen().includes('myc>'), 20_000, 'the prompt')
        tmux('send-keys', '-t', 'chat', 'add two and two', 'Enter')
        await waitFor(() => screen().includes('Allow echo:add (high risk)'), 20_000, 'the approval question')
        tmux('send-keys', '-t', 'chat', 'y', 'Enter')
        await waitFor(() => screen().includes('The sum came back.'), 20_000, 'the reply')
        expect(screen()).toMatch(/✓ echo:add/)
        // Open mode: no skills; two requests of 10 in / 5 out at the configured price.
        await waitFor(
          () => / out · \$/.test(lastStatus(screen(), 'open mode') ?? ''),
          20_000,
          'the status line after the reply',
        )
        expect(lastStatus(screen(), 'open mode')).toMatch(/^open mode · \S+ · 20 in \/ 10 out · \$0\.0002$/)
        tmux('send-keys', '-t', 'chat', 'C-d')
        await waitFor(() => screen().includes('EXIT='), 20_000, 'the end')
        expect(screen()).toContain('EXIT=0')
      } finally {
        term.close()
      }
    },
    60_000,
  )

  it.runIf(hasTmux)(
    'myc with no config on a terminal: a one-line hint to run myc init, and no .mycelium/ written where it started',
    async () => {
      requireBundle()
      const term = new Terminal('chat-noconfig')
      const { tmux } = term
      const screen = () => tmux('capture-pane', '-p', '-t', 'chat')
      const dir = mkdtempSync(path.join(tmpdir(), 'myc-chat-noconfig-'))
      const home = mkdtempSync(path.join(tmpdir(), 'myc-home-'))
      fake.setScript((req) => ({ content: [{ type: 'text', text: `seen ${req.body.messages.length} messages` }] }))
      try {
        term.open(
          'chat',
          `unset MYC_CONFIG; HOME=${home} NO_COLOR=1 ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} ${process.execPath} ${bundle}; echo EXIT=$?; sleep 60`,
          { cwd: dir },
        )
        await waitFor(() => screen().includes('myc>'), 20_000, 'the prompt')
        const hints = screen()
          .split('\n')
          .filter((l) => l.includes('myc init'))
        expect(hints).toEqual([
          'myc: no config file here: no tools, and this chat is not recorded; run `myc init` to set up a project (or give --config)',
        ])
        tmux('send-keys', '-t', 'chat', 'hello there', 'Enter')
        await waitFor(() => screen().includes('seen 1 messages'), 20_000, 'the reply')
        tmux('send-keys', '-t', 'chat', '/save', 'Enter')
        await waitFor(() => screen().includes('sessions are not recorded'), 20_000, 'the /save answer')
        tmux('send-keys', '-t', 'chat', '/quit', 'Enter')
        await waitFor(() => screen().includes('EXIT='), 20_000, 'the end')
        expect(screen()).toContain('EXIT=0')
        expect(screen()).not.toMatch(/is recorded: myc chat --resume/)
        expect(readdirSync(dir)).toEqual([])
      } finally {
        term.close()
      }
    },
    60_000,
  )

  it.runIf(hasTmux)(
    'Ctrl-C twice at an empty prompt saves the session and exits 0; typing in between starts the count again',
    async () => {
      requireBundle()
      const term = new Terminal('chat-ctrlc')
      const { tmux } = term
      const screen = () => tmux('capture-pane', '-p', '-t', 'chat')
      const hints = () => screen().split('(press Ctrl-C again to exit').length - 1
      const dir = mkdtempSync(path.join(tmpdir(), 'myc-chat-ctrlc-'))
      const config = path.join(dir, 'mycelium.config.json')
      writeFileSync(
        config,
        JSON.stringify({
          mcpServers: {
            echo: { command: process.execPath, args: [path.join(repoRoot, 'tests/fixtures/servers/echo.mjs')] },
          },
        }),
      )
      fake.setScript((req) => ({ content: [{ type: 'text', text: `seen ${req.body.messages.length} messages` }] }))
      try {
        term.open(
          'chat',
          `HOME=${dir} NO_COLOR=1 ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} ${process.execPath} ${bundle} chat --config ${config}; echo EXIT=$?; sleep 60`,
        )
        await waitFor(() => screen().includes('myc>'), 20_000, 'the prompt')
        // NO_COLOR: the status line is there, without the dim attribute.
        expect(lastStatus(screen(), 'open mode')).toMatch(/^open mode · \S+ · 0 in \/ 0 out$/)
        expect(tmux('capture-pane', '-p', '-e', '-t', 'chat')).not.toMatch(/\u001b\[2m/)
        tmux('send-keys', '-t', 'chat', 'hello there', 'Enter')
        await waitFor(() => screen().includes('seen 1 messages'), 20_000, 'the reply')
        tmux('send-keys', '-t', 'chat', 'C-c')
        await waitFor(() => hints() === 1, 20_000, 'the hint')
        // Typed, then cleared with Ctrl-C: the next Ctrl-C at the empty prompt is a first one again.
        tmux('send-keys', '-t', 'chat', 'abc')
        await waitFor(() => screen().includes('myc> abc'), 20_000, 'the typing')
        tmux('send-keys', '-t', 'chat', 'C-c')
        await waitFor(() => screen().trimEnd().split('\n').at(-1) === 'myc>', 20_000, 'the line cleared')
        tmux('send-keys', '-t', 'chat', 'C-c')
        await waitFor(() => hints() === 2, 20_000, 'the hint again')
        // A second Ctrl-C that is a first one again must not end the chat.
        await quietWindow(500)
        expect(screen()).not.toContain('EXIT=')
        tmux('send-keys', '-t', 'chat', 'C-c')
        await waitFor(() => screen().includes('EXIT='), 20_000, 'the end')
        expect(screen()).toContain('EXIT=0')
        const id = /session (\S+) is recorded: myc chat --resume \1/.exec(screen())?.[1]
        expect(id).toBeDefined()
        // Saved: listed, and a new chat resumes it with its conversation.
        const listed = JSON.parse((await runAgentCli(['sessions', 'list', '--json', '--config', config])).stdout) as {
          sessions: Array<{ id: string; mode: string; turns: number }>
        }
        expect(listed.sessions).toContainEqual(expect.objectContaining({ id, mode: 'chat', turns: 1 }))
        const again = await runAgentCli(['chat', '--config', config, '--resume', id!], { fake, input: 'and again\n' })
        expect(again.code, again.stderr).toBe(0)
        expect(again.stdout).toBe('seen 3 messages\n')
      } finally {
        term.close()
      }
    },
    60_000,
  )
})

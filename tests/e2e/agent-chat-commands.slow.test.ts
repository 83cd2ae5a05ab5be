import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle } from '../helpers/e2e.js'
import { FakeAnthropic, toolResults, type RecordedRequest } from '../helpers/fake-anthropic.js'
import { fixtureEntry, waitFor } from '../helpers/runtime.js'
import { requireTool } from '../helpers/tools.js'
import { Terminal } from '../helpers/terminal.js'

/**
 * Every slash command of `myc chat`, typed into a real terminal (tmux) and
 * answered by the fake Messages API: what each one prints, and what it
 * changes (the skills and tools offered, the model asked, the conversation
 * sent, the session files, the exported files, the memory saved).
 */

/** A project: role dev reaches base (default, protected; echo:echo), adder (echo:add) and notes (grants memory). */
function project(): { dir: string; config: string; home: string; sessions: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-chat-commands-'))
  const skill = (name: string, front: string) => {
    mkdirSync(path.join(dir, 'skills', name), { recursive: true })
    writeFileSync(
      path.join(dir, 'skills', name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: ${name} skill\nallowedRoles: [dev]\n${front}\n---\nInstructions of ${name}.\n`,
    )
  }
  skill('base', 'allowedTools: ["echo:echo"]')
  skill('adder', 'allowedTools: ["echo:add"]')
  skill('notes', 'grants: { memory: isolated }')
  const config = path.join(dir, 'mycelium.config.json')
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { echo: fixtureEntry('echo') },
      skills: { dirs: ['skills'] },
      roles: { default: 'dev' },
      session: { defaultSkills: ['base'], protectedSkills: ['base'] },
    }),
  )
  const home = path.join(dir, 'home')
  mkdirSync(home)
  return { dir, config, home, sessions: path.join(dir, '.mycelium', 'sessions') }
}

/** A request's plain user turns (tool results left out), in order. */
const userTurns = (req: RecordedRequest) =>
  req.body.messages.flatMap((m) => (m.role === 'user' && typeof m.content === 'string' ? [m.content] : []))

const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)

describe('myc chat slash commands in a terminal (build/myc.cjs, tmux)', () => {
  // Answers from the request alone: a summary for /compress (the only request that does not stream), a memory save
  // for "remember", and otherwise a reply naming the turn and how many messages were sent with it.
  const fake = new FakeAnthropic((req) => {
    if (req.body.stream !== true)
      return { content: [{ type: 'text', text: 'SUMMARY-7Q: the user asked to remember the deploy day.' }] }
    const last = req.body.messages.at(-1)!
    if (typeof last.content !== 'string') return { content: [{ type: 'text', text: 'Saved it.' }] }
    if (last.content.includes('remember'))
      return {
        content: [
          {
            type: 'tool_use',
            name: 'mycelium__save_memory',
            input: { content: 'Deploys happen on Tuesdays', type: 'fact', tags: ['ops'] },
          },
        ],
      }
    return {
      content: [{ type: 'text', text: `answer to "${last.content}" after ${req.body.messages.length} messages` }],
    }
  })
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it.runIf(hasTmux)(
    'each command /help lists, tab completion and did-you-mean',
    async () => {
      requireBundle()
      const p = project()
      const out = mkdtempSync(path.join(tmpdir(), 'myc-chat-commands-out-'))
      const term = new Terminal('chat-commands')
      const { tmux } = term
      /** Every line the pane has shown (scrollback included), wrapped lines joined, trailing blanks cut. */
      const lines = () =>
        tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'chat')
          .split('\n')
          .map((l) => l.trimEnd())
      const last = () => lines().filter(Boolean).at(-1) ?? ''
      const exercised = new Set<string>()

      /**
       * Sends `keys` (Enter appended) and waits for the chat to come back to its prompt; resolves with the lines
       * printed in between. `echo` is the line as the prompt shows it once typed (it differs after a completion).
       */
      const enter = async (keys: string[], echo: string, label: string, ms = 10_000): Promise<string[]> => {
        const echoed = `myc> ${echo}`
        // Earlier answers to the same line; the last line is the prompt, maybe with this line already typed (completed).
        const before = lines()
          .filter(Boolean)
          .slice(0, -1)
          .filter((l) => l === echoed).length
        tmux('send-keys', '-t', 'chat', ...keys, 'Enter')
        let section: string[] = []
        await waitFor(
          () => {
            const all = lines()
            const at = all.flatMap((l, i) => (l === echoed ? [i] : []))[before]
            if (at === undefined) return false
            const end = all.findIndex((l, i) => i > at && l.startsWith('myc>'))
            if (end === -1) return false
            section = all.slice(at + 1, end).filter(Boolean)
            return true
          },
          ms,
          label,
        )
        // A command counts as exercised when the chat knew it.
        if (echo.startsWith('/') && !section[0]?.startsWith('Unknown command')) exercised.add(echo.split(' ')[0]!)
        return section
      }
      const type = (line: string, label: string, ms?: number) => enter([line], line, label, ms)
      /**
       * Types `text`, then Tab as a key of its own (readline takes a Tab that arrives in one read with other
       * characters for pasted text, and inserts it), and waits for the prompt to show `completed`.
       */
      const complete = async (text: string, completed: string) => {
        tmux('send-keys', '-t', 'chat', '-l', text)
        await waitFor(() => last() === `myc> ${text}`.trimEnd(), 10_000, `"${text}" typed`)
        tmux('send-keys', '-t', 'chat', 'Tab')
        await waitFor(() => last() === `myc> ${completed}`, 10_000, `"${text}" completed to "${completed}"`)
      }
      /** The status line (`dev · MODEL · skills: … · N in / M out`) last printed in `section`. */
      const status = (section: string[]) => section.filter((l) => l.startsWith('dev · ')).at(-1)
      const requestsBefore = () => fake.requests.length

      try {
        term.open(
          'chat',
          `env -u ANTHROPIC_AUTH_TOKEN -u ANTHROPIC_MODEL HOME='${p.home}' NO_COLOR=1 ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} '${process.execPath}' '${bundle}' chat --config '${p.config}' --model claude-first-1; echo EXIT=$?; sleep 60`,
          { cols: 250, cwd: p.dir },
        )
        await waitFor(() => last() === 'myc>', 20_000, 'the first prompt')
        expect(lines().filter(Boolean)).toEqual([
          expect.stringMatching(/^myc chat \S+ · \/help lists the commands\.$/),
          'dev · claude-first-1 · skills: base · 0 in / 0 out',
          'myc>',
        ])

        // A typo: the nearest command is suggested, nothing else happens.
        expect(await type('/hlep', 'did-you-mean')).toEqual([
          'Unknown command /hlep. Did you mean /help? /help lists the commands.',
        ])

        // /help: one line per command; the list is kept to check at the end that each one was typed here.
        const help = await type('/help', '/help')
        const listed = help.map((l) => l.split(' ')[0]!)
        expect(listed).toEqual(
          expect.arrayContaining([
            '/help',
            '/skills',
            '/add',
            '/remove',
            '/tools',
            '/model',
            '/status',
            '/roles',
            '/memory',
            '/clear',
            '/save',
            '/sessions',
            '/resume',
            '/fork',
            '/compress',
            '/export',
            '/quit',
          ]),
        )
        expect(help.find((l) => l.startsWith('/fork'))).toMatch(/^\/fork\s+\/fork \[ID\] \[--at N\]: /)

        // Tab completes a command: "/sk" becomes "/skills", which lists the role's skills, the active one starred.
        await complete('/sk', '/skills')
        expect(await enter([], '/skills', '/skills')).toEqual(['  adder', '* base', '  notes'])

        expect(await type('/roles', '/roles')).toEqual([
          'role dev: fixed at launch (--role, MYCELIUM_ROLE or roles.default); start myc chat again to change it.',
        ])
        // No skill grants memory yet: /memory says so.
        expect(await type('/memory', '/memory without a grant')).toEqual([
          'No active skill grants memory to role dev. /skills lists the skills; one with grants.memory adds it.',
        ])
        expect(await type('/tools', '/tools')).toEqual([
          'mycelium:list_skills',
          'mycelium:activate_skill',
          'mycelium:deactivate_skill',
          'mycelium:get_context',
          'mycelium:search_tools',
          'echo:echo',
        ])

        // Tab after "/add " completes a skill's name.
        await complete('/add a', '/add adder')
        const added = await enter([], '/add adder', '/add adder')
        // The tools named as /tools names them.
        expect(added[0]).toBe('Skill adder is active. Tools added: echo:add.')
        expect(added).toContain('Instructions of adder.')
        expect(status(added)).toBe('dev · claude-first-1 · skills: adder, base · 0 in / 0 out')
        expect(await type('/skills', '/skills after /add')).toEqual(['* adder', '* base', '  notes'])
        expect(await type('/tools', '/tools after /add')).toEqual([
          'mycelium:list_skills',
          'mycelium:activate_skill',
          'mycelium:deactivate_skill',
          'mycelium:get_context',
          'mycelium:search_tools',
          'echo:echo',
          'echo:add',
        ])

        // /remove: the protected skill stays; another goes, with its tool.
        expect(await type('/remove base', '/remove base')).toEqual([
          'Skill base is protected and stays active for this session.',
        ])
        const removed = await type('/remove adder', '/remove adder')
        expect(removed[0]).toBe('Skill adder is no longer active. Tools removed: echo:add.')
        expect(status(removed)).toBe('dev · claude-first-1 · skills: base · 0 in / 0 out')
        expect(await type('/skills', '/skills after /remove')).toEqual(['  adder', '* base', '  notes'])

        // /model shows, then switches the model of the next request.
        expect(await type('/model', '/model')).toEqual(['model claude-first-1'])
        expect(await type('/model claude-second-2', '/model NAME')).toEqual([
          'model claude-second-2',
          'dev · claude-second-2 · skills: base · 0 in / 0 out',
        ])

        // With memory granted, the model saves an entry through mycelium__save_memory; /memory shows it (and only a match for words).
        // activate_skill names the built-ins the grant adds.
        expect((await type('/add notes', '/add notes'))[0]).toBe(
          'Skill notes is active. Tools added: mycelium:save_memory, mycelium:recall_memory, mycelium:list_memories.',
        )
        let from = requestsBefore()
        const saved = await type('please remember the deploy day', 'the memory turn')
        expect(saved).toEqual([
          expect.stringMatching(/^→ mycelium:save_memory \{"content":"Deploys happen on Tuesdays"/),
          expect.stringMatching(/^✓ mycelium:save_memory /),
          'Saved it.',
          'dev · claude-second-2 · skills: base, notes · 20 in / 10 out',
        ])
        expect(fake.requests.slice(from).map((r) => r.body.model)).toEqual(['claude-second-2', 'claude-second-2'])
        expect((fake.requests[from]!.body.tools ?? []).map((t) => t.name)).toContain('mycelium__save_memory')
        const memoryId = /mem_[\w-]+/.exec(JSON.stringify([...toolResults(fake.requests[from + 1]!).values()]))?.[0]
        expect(memoryId).toBeDefined()
        expect(readFileSync(path.join(p.dir, '.mycelium', 'memory', 'dev.memory.md'), 'utf8')).toContain(memoryId)
        expect(await type('/memory', '/memory with a grant')).toEqual([
          expect.stringMatching(new RegExp(`^\\[${memoryId}\\] dev · fact · tags: ops · \\d{4}-`)),
          '  Deploys happen on Tuesdays',
        ])
        expect(await type('/memory tuesdays', '/memory WORDS')).toEqual([
          expect.stringContaining(`[${memoryId}]`),
          '  Deploys happen on Tuesdays',
        ])
        expect(await type('/memory nothing-like-this', '/memory WORDS, no match')).toEqual(['No memories found.'])

        // /status: role, model, skills, tools offered (4 skill tools, echo:echo, 3 memory tools) and tokens of 2 requests.
        expect(await type('/status', '/status')).toEqual([
          'role dev · model claude-second-2 · skills base, notes · 9 tools · 30 tokens',
        ])
        // /budget: the spend so far, and no cap (agent-chat-budget.test.ts sets and raises one).
        expect(await type('/budget', '/budget')).toEqual([
          'spent 30 tokens; no budget (/budget N sets one in USD, /budget N tokens in tokens, /budget off removes it)',
        ])

        expect(await type('second question', 'turn 2')).toContain('answer to "second question" after 5 messages')
        expect(await type('third question', 'turn 3')).toContain('answer to "third question" after 7 messages')

        // /save names the session recorded so far; /sessions lists it with its turns.
        const savedAs = await type('/save team-chat', '/save NAME')
        const [, id, file] = /^session (\S+) saved as "team-chat" \((\S+)\)$/.exec(savedAs[0] ?? '') ?? []
        expect(id).toMatch(/^\d{8}-\d{6}-[0-9a-f]{6}$/)
        expect(file).toBe(path.join(p.sessions, `${id}.jsonl`))
        expect(readFileSync(file!, 'utf8')).toContain('{"type":"name","name":"team-chat"}')
        expect(await type('/sessions', '/sessions')).toEqual([`${id} team-chat · chat · 4 turns`])

        // /fork --at 1: a new session from the first turn only; the named one keeps its three.
        const forked = await type('/fork --at 1', '/fork --at N')
        const fork = new RegExp(`^forked ${id} at turn 1 into (\\S+); ${id} is untouched$`).exec(
          forked.at(-1) ?? '',
        )?.[1]
        expect(fork).toBeDefined()
        expect(fork).not.toBe(id)
        expect(forked[0]).toBe(`resumed session ${fork}: 2 turns`)
        from = requestsBefore()
        expect(await type('after the fork', 'the turn after /fork')).toContain(
          'answer to "after the fork" after 5 messages',
        )
        expect(userTurns(fake.requests[from]!)).toEqual(['please remember the deploy day', 'after the fork'])
        expect(await type('/sessions', '/sessions after /fork')).toEqual([
          `${fork} · chat · 3 turns`,
          `${id} team-chat · chat · 4 turns`,
        ])

        // /resume ID: back to the named session, its three tasks (four model answers) sent again.
        expect(await type(`/resume ${id}`, '/resume ID')).toEqual([`resumed session ${id} (team-chat): 4 turns`])
        from = requestsBefore()
        expect(await type('back again', 'the turn after /resume')).toContain('answer to "back again" after 9 messages')
        expect(userTurns(fake.requests[from]!)).toEqual([
          'please remember the deploy day',
          'second question',
          'third question',
          'back again',
        ])

        // /compress: the fake summarises the two older turns; the last two are kept whole.
        from = requestsBefore()
        const compressed = await type('/compress', '/compress')
        expect(compressed[0]).toMatch(
          new RegExp(
            `^compressed 2 turns: about (\\d+) tokens before, (\\d+) after \\(estimated as characters / 4\\); the originals stay in ${file!.replace(/[.]/g, '\\.')}$`,
          ),
        )
        const [, tokensBefore, tokensAfter] = /about (\d+) tokens before, (\d+) after/.exec(compressed[0]!)!
        expect(Number(tokensAfter)).toBeLessThan(Number(tokensBefore))
        const summaryRequest = fake.requests[from]!
        expect(summaryRequest.body.stream).not.toBe(true)
        expect(JSON.stringify(summaryRequest.body.system)).toMatch(/Summarise this conversation/)
        expect(JSON.stringify(summaryRequest.body.messages)).toContain('second question')
        expect(JSON.stringify(summaryRequest.body.messages)).not.toContain('third question')
        // The summary's tokens count: a third request (10 in / 5 out) since the status line was last shown.
        expect(status(compressed)).toMatch(/ · 70 in \/ 35 out$/)
        from = requestsBefore()
        expect(await type('after compress', 'the turn after /compress')).toContain(
          'answer to "after compress" after 7 messages',
        )
        expect(fake.requests[from]!.body.messages[0]!.content).toContain('SUMMARY-7Q')
        expect(userTurns(fake.requests[from]!).slice(1)).toEqual(['third question', 'back again', 'after compress'])

        // /export md and html: files of this session as it reads now (summary, then the kept turns).
        const md = path.join(out, 'chat.md')
        const html = path.join(out, 'chat.html')
        expect(await type(`/export md ${md}`, '/export md FILE')).toEqual([`exported to ${md}`])
        const markdown = readFileSync(md, 'utf8')
        expect(markdown).toMatch(new RegExp(`^# Session ${id} \\(team-chat\\)\\n`))
        expect(markdown).toContain('SUMMARY-7Q')
        // Each turn's text quoted under its label (what the text says cannot pass for a label or a heading of the export).
        expect(markdown).toMatch(
          /\*\*user:\*\*\n\n> third question[\s\S]*\*\*user:\*\*\n\n> back again[\s\S]*\*\*user:\*\*\n\n> after compress\n\n\*\*assistant:\*\*\n\n> answer to "after compress" after 7 messages\n$/,
        )
        expect(markdown).not.toContain('second question')
        expect(markdown).not.toContain('after the fork')
        expect(await type(`/export html ${html}`, '/export html FILE')).toEqual([`exported to ${html}`])
        const page = readFileSync(html, 'utf8')
        expect(page).toMatch(/^<!doctype html>/i)
        expect(page).toContain(`Session ${id}`)
        expect(page).toContain('after compress')
        expect(page).toContain('SUMMARY-7Q')
        expect(page).not.toContain('second question')
        // A file that cannot be written is an answer, not the end of the chat.
        const nowhere = path.join(out, 'missing', 'chat.md')
        expect(await type(`/export md ${nowhere}`, '/export to a missing folder')).toEqual([
          `/export: ENOENT: no such file or directory, open '${nowhere}'`,
        ])
        expect(existsSync(nowhere)).toBe(false)

        // /clear: the next turn is sent alone.
        expect(await type('/clear', '/clear')).toEqual(['Conversation cleared.'])
        from = requestsBefore()
        expect(await type('after clear', 'the turn after /clear')).toContain('answer to "after clear" after 1 messages')
        expect(fake.requests[from]!.body.messages).toHaveLength(1)

        // /quit: how to resume the session, by the name it was saved as; exit 0.
        tmux('send-keys', '-t', 'chat', '/quit', 'Enter')
        exercised.add('/quit')
        await waitFor(() => lines().some((l) => l.startsWith('EXIT=')), 20_000, 'the exit after /quit')
        expect(lines().filter(Boolean).slice(-2)).toEqual([
          `session ${id} is recorded: myc chat --resume team-chat`,
          'EXIT=0',
        ])

        // Every command /help listed was typed above.
        expect([...exercised].sort()).toEqual([...listed].sort())
        // What was typed is the history: the completed forms, not the keys.
        const history = readFileSync(path.join(p.home, '.mycelium', 'history'), 'utf8').split('\n')
        expect(history).toEqual(expect.arrayContaining(['/skills', '/add adder', '/hlep', '/quit']))
        expect(history).not.toContain('/sk')
      } catch (error) {
        // What the terminal showed, to see why.
        if (error instanceof Error)
          error.message += `\n--- the terminal, last lines ---\n${lines().filter(Boolean).slice(-25).join('\n')}`
        throw error
      } finally {
        term.close()
      }
    },
    60_000,
  )

  it.runIf(hasTmux)(
    'an error that escapes the chat ends it with the error shown, not with a prompt that no longer answers',
    async () => {
      requireBundle()
      const p = project()
      const term = new Terminal('chat-escape')
      const { tmux } = term
      const lines = () =>
        tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'chat')
          .split('\n')
          .map((l) => l.trimEnd())
          .filter(Boolean)
      try {
        term.open(
          'chat',
          `env -u ANTHROPIC_AUTH_TOKEN -u ANTHROPIC_MODEL HOME='${p.home}' NO_COLOR=1 ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=${fake.url} '${process.execPath}' '${bundle}' chat --config '${p.config}'; echo EXIT=$?; sleep 60`,
          {
            cols: 250,
            cwd: p.dir,
          },
        )
        await waitFor(() => lines().at(-1) === 'myc>', 20_000, 'the first prompt')
        // The session cannot be recorded any more: the turn's record fails, outside any command.
        rmSync(p.sessions, { recursive: true })
        tmux('send-keys', '-t', 'chat', 'hello', 'Enter')
        await waitFor(() => lines().some((l) => l.startsWith('EXIT=')), 20_000, 'the chat ending')
        expect(lines().slice(-3)).toEqual([
          'answer to "hello" after 1 messages',
          expect.stringMatching(/^myc: ENOENT: no such file or directory, open '.*\.jsonl'$/),
          'EXIT=1',
        ])
      } catch (error) {
        if (error instanceof Error)
          error.message += `\n--- the terminal, last lines ---\n${lines().slice(-10).join('\n')}`
        throw error
      } finally {
        term.close()
      }
    },
    30_000,
  )
})

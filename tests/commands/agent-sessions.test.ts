import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAgentHere } from '../helpers/agent.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { fixtureEntry } from '../helpers/runtime.js'

/** A message's text: a string, or its text blocks joined. */
const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : (content as Array<{ type: string; text?: string }>).map((b) => b.text ?? `[${b.type}]`).join('')

/**
 * A project with a role that reaches a skill of echo's tools. Every run starts
 * each server of its config: the cases that never look at a tool leave echo
 * out (`echo: false`; the skill is then disabled, the role still there).
 */
function project({ echo = true } = {}): { config: string; sessions: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-sessions-'))
  mkdirSync(path.join(dir, 'skills', 'talk'), { recursive: true })
  writeFileSync(
    path.join(dir, 'skills', 'talk', 'SKILL.md'),
    '---\nname: talk\ndescription: Echo things\nallowedRoles: [dev]\nallowedTools: ["echo:echo"]\n---\n',
  )
  const config = path.join(dir, 'mycelium.config.json')
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: echo ? { echo: fixtureEntry('echo') } : {}, roles: { default: 'dev' } }),
  )
  return { config, sessions: path.join(dir, '.mycelium', 'sessions') }
}

describe('recorded sessions (in process)', () => {
  const fake = new FakeAnthropic((req) => ({
    content: [{ type: 'text', text: `seen ${req.body.messages.length} messages` }],
  }))
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it('records a chat as it goes, and resumes it in a new process with its conversation and skills', async () => {
    const { config, sessions } = project()
    const first = await runAgentHere(['chat', '--config', config], {
      fake,
      input: '/add talk\nhello\n/save first-chat\n',
    })
    expect(first.code, first.stderr).toBe(0)
    const listed = await runAgentHere(['sessions', 'list', '--json', '--config', config])
    const [session] = (
      JSON.parse(listed.stdout) as {
        sessions: Array<{ id: string; name: string; turns: number; activeSkills: string[]; mode: string }>
      }
    ).sessions
    expect(session).toMatchObject({ name: 'first-chat', turns: 1, activeSkills: ['talk'], mode: 'chat' })
    // A new process, by name: the earlier turn is sent again, and the skill is back.
    const before = fake.requests.length
    const again = await runAgentHere(['chat', '--config', config, '--resume', 'first-chat'], {
      fake,
      input: 'and now?\n',
    })
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toBe('seen 3 messages\n')
    expect((fake.requests[before]!.body.tools ?? []).map((t) => t.name)).toContain('echo__echo')
    expect(
      readFileSync(path.join(sessions, `${session!.id}.jsonl`), 'utf8')
        .trim()
        .split('\n').length,
    ).toBeGreaterThan(5)
    const shown = await runAgentHere(['sessions', 'show', session!.id, '--config', config])
    expect(shown.stdout).toContain('user: and now?')
  }, 60_000)

  it('/clear is recorded: a resumed session starts after it; /resume turns off skills the session did not have', async () => {
    const { config } = project()
    const first = await runAgentHere(['chat', '--config', config], {
      fake,
      input: 'before the clear\n/clear\nafter the clear\n/save cleared-chat\n',
    })
    expect(first.code, first.stderr).toBe(0)
    const shown = JSON.parse(
      (await runAgentHere(['sessions', 'show', 'cleared-chat', '--json', '--config', config])).stdout,
    ) as { messages: Array<{ content: unknown }> }
    expect(shown.messages.map((m) => textOf(m.content))).toEqual(['after the clear', 'seen 1 messages'])
    // Resumed from a chat where talk is active: the session had no skills, so talk is turned off.
    const before = fake.requests.length
    const again = await runAgentHere(['chat', '--config', config], {
      fake,
      input: '/add talk\n/resume cleared-chat\nand now?\n',
    })
    expect(again.code, again.stderr).toBe(0)
    expect(fake.requests[before]!.body.messages.map((m) => textOf(m.content))).toEqual([
      'after the clear',
      'seen 1 messages',
      'and now?',
    ])
    expect((fake.requests[before]!.body.tools ?? []).map((t) => t.name)).not.toContain('echo__echo')
  }, 60_000)

  it('myc run records, --resume continues with a follow-up; a torn last line is ignored, a bad one elsewhere is named', async () => {
    const { config, sessions } = project({ echo: false })
    const first = await runAgentHere(['run', 'first task', '--json', '--config', config], { fake })
    const id = (first.events[0] as { sessionId: string }).sessionId
    const file = path.join(sessions, `${id}.jsonl`)
    // A crash mid-write leaves a torn line: it is not fatal.
    appendFileSync(file, '{"type":"mess')
    const follow = await runAgentHere(['run', 'follow-up', '--json', '--config', config, '--resume', id], { fake })
    expect(follow.code, follow.stderr).toBe(0)
    expect((follow.events[0] as { sessionId: string }).sessionId).toBe(id)
    expect(fake.requests.at(-1)!.body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    // Damage in the middle is an error that names the file and line.
    writeFileSync(file, readFileSync(file, 'utf8').replace('{"type":"mess', '').replace(/\n/, '\nnot json\n'))
    const broken = await runAgentHere(['run', 'again', '--json', '--config', config, '--resume', id], { fake })
    expect(broken.code).toBe(2)
    expect(broken.events.find((e) => e.type === 'error')).toMatchObject({
      message: expect.stringMatching(new RegExp(`${id}\\.jsonl:2: not a JSON record`)),
    })
    const missing = await runAgentHere(['run', 'x', '--json', '--config', config, '--resume', 'nope'], { fake })
    expect(missing.code).toBe(2)
    const removed = await runAgentHere(['sessions', 'rm', id, '--config', config])
    expect(removed.stdout).toContain(`removed ${file}`)
  }, 60_000)

  it('myc sessions list counts turns as session_end does, and shows the start date and the first task line', async () => {
    const { config } = project({ echo: false })
    fake.setScript((req) =>
      req.body.messages.length === 1
        ? { content: [{ type: 'tool_use', name: 'no_such_tool', input: {} }], stop_reason: 'tool_use' }
        : { content: [{ type: 'text', text: 'done' }] },
    )
    try {
      const run = await runAgentHere(['run', 'fix the failing tests\nthen tell me why', '--json', '--config', config], {
        fake,
      })
      const end = run.events.find((e) => e.type === 'session_end') as { turns: number; sessionId: string }
      expect(end.turns).toBe(2)
      const listed = JSON.parse((await runAgentHere(['sessions', 'list', '--json', '--config', config])).stdout) as {
        sessions: Array<{ id: string; turns: number; tasks: number; firstTask: string; created: string }>
      }
      expect(listed.sessions[0]).toMatchObject({
        id: end.sessionId,
        turns: end.turns,
        tasks: 1,
        firstTask: 'fix the failing tests',
      })
      const text = (await runAgentHere(['sessions', 'list', '--config', config])).stdout
      expect(text).toContain(`${end.sessionId}  ${listed.sessions[0]!.created.slice(0, 10)} `)
      expect(text).toMatch(/ run +2 turns +fix the failing tests\n?$/)
    } finally {
      fake.setScript((req) => ({ content: [{ type: 'text', text: `seen ${req.body.messages.length} messages` }] }))
    }
  }, 60_000)

  it('/fork --at N starts a new session from the first N turns; the old one is untouched', async () => {
    const { config } = project({ echo: false })
    fake.setScript((req) => ({ content: [{ type: 'text', text: `seen ${req.body.messages.length} messages` }] }))
    const before = fake.requests.length
    const r = await runAgentHere(['chat', '--config', config], { fake, input: 'one\ntwo\n/fork --at 1\nthree\n' })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/forked \S+ at turn 1 into \S+; \S+ is untouched/)
    // "three" follows "one" only.
    expect(fake.requests[before + 2]!.body.messages.map((m) => textOf(m.content))).toEqual([
      'one',
      'seen 1 messages',
      'three',
    ])
    const listed = JSON.parse((await runAgentHere(['sessions', 'list', '--json', '--config', config])).stdout) as {
      sessions: Array<{ turns: number }>
    }
    expect(listed.sessions.map((x) => x.turns).sort()).toEqual([2, 2])
  }, 60_000)

  it('/compress summarises the older turns with the model, keeps the last two whole, and a resumed session reads the same', async () => {
    const { config } = project({ echo: false })
    fake.setScript((req) => {
      if (req.body.stream !== true) return { content: [{ type: 'text', text: 'SUMMARY: the user said one.' }] }
      return { content: [{ type: 'text', text: `seen ${req.body.messages.length} messages` }] }
    })
    const before = fake.requests.length
    const r = await runAgentHere(['chat', '--config', config], {
      fake,
      input: 'one\ntwo\nthree\n/compress\nfour\n/save compressed\n',
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/compressed 1 turn: about \d+ tokens before, \d+ after/)
    const afterCompress = fake.requests.slice(before).find((q) => JSON.stringify(q.body.messages).includes('four'))!
    const contents = afterCompress.body.messages.map((m) => textOf(m.content))
    expect(contents[0]).toContain('SUMMARY: the user said one.')
    expect(contents.slice(2)).toEqual(['two', 'seen 3 messages', 'three', 'seen 5 messages', 'four'])
    const resumedBefore = fake.requests.length
    await runAgentHere(['chat', '--config', config, '--resume', 'compressed'], { fake, input: 'five\n' })
    const resumed = fake.requests[resumedBefore]!.body.messages.map((m) => textOf(m.content))
    expect(resumed[0]).toContain('SUMMARY')
    expect(resumed.at(-1)).toBe('five')
    expect(resumed).toHaveLength(9)
  }, 60_000)

  it('/export writes the current session in the format asked', async () => {
    const { config } = project({ echo: false })
    fake.setScript(() => ({ content: [{ type: 'text', text: 'exported soon' }] }))
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'myc-chat-export-')), 'chat.json')
    const r = await runAgentHere(['chat', '--config', config], {
      fake,
      input: `hello\n/export json ${out}\n/export pdf\n`,
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain(`exported to ${out}`)
    expect(r.stderr).toContain('/export takes md, json or html, not "pdf"')
    expect((JSON.parse(readFileSync(out, 'utf8')) as { messages: unknown[] }).messages).toHaveLength(2)
  }, 30_000)
})

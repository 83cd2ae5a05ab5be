import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAgentHere } from '../helpers/agent.js'
import { connectHere, runHere } from '../helpers/cli.js'
import { project } from '../helpers/memory-project.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * Role memory through `build/myc.cjs serve` with real SDK clients: three
 * roles with different grants save and recall over MCP and see only what
 * policy allows; the operator CLI reads the same Markdown files.
 */
type CallResult = {
  isError?: boolean
  content: Array<{ type: string; text?: string }>
  structuredContent?: Record<string, unknown>
}
/** `myc ARGS --config CONFIG` in this process. */
const cli = (config: string, ...args: string[]) => runHere([...args, '--config', config])
const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<CallResult>
const textOf = (r: CallResult) => r.content.map((c) => c.text ?? '').join('')
/** A call's answer, error or result, with the tool's name blanked (to compare two nonexistence answers). */
async function answer(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  try {
    return JSON.stringify(await call(client, name, args)).replaceAll(name, 'NAME')
  } catch (error) {
    const e = error as { code?: number; message: string }
    return JSON.stringify({ code: e.code, message: e.message.replaceAll(name, 'NAME') })
  }
}
const memoryTools = ['mycelium__list_memories', 'mycelium__recall_memory', 'mycelium__save_memory']
const toolNames = async (client: Client) =>
  (await client.listTools()).tools
    .map((t) => t.name)
    .filter((n) => n.includes('memor'))
    .sort()

describe('role memory over MCP (build/myc.cjs serve)', () => {
  let p: { dir: string; config: string }
  beforeAll(() => {
    p = project()
  })

  it('the tools exist only while a granting skill is active, appear with list_changed, and answer as nonexistent otherwise', async () => {
    const { client } = await connectHere(['serve', '--config', p.config, '--role', 'dev', '--skills', 'plain'])
    try {
      expect(await toolNames(client)).toEqual([])
      expect(await answer(client, 'mycelium__save_memory', { content: 'x' })).toBe(
        await answer(client, 'mycelium__no_such_tool', { content: 'x' }),
      )
      let changed = 0
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        changed++
      })
      const activated = await call(client, 'mycelium__activate_skill', { name: 'notes' })
      expect(activated.isError).toBeFalsy()
      await waitFor(() => changed > 0, 5_000, 'tools/list_changed after the activation')
      expect(await toolNames(client)).toEqual(memoryTools)
      await call(client, 'mycelium__deactivate_skill', { name: 'notes' })
      expect(await toolNames(client)).toEqual([])
    } finally {
      await client.close()
    }
  }, 30_000)

  it('each role writes its own memory; isolated reads only its own; team reads its team; other roles answer as empty', async () => {
    const dev = (await connectHere(['serve', '--config', p.config, '--role', 'dev', '--skills', 'notes'])).client
    const qa = (await connectHere(['serve', '--config', p.config, '--role', 'qa', '--skills', 'notes'])).client
    const lead = (await connectHere(['serve', '--config', p.config, '--role', 'lead', '--skills', 'team-notes'])).client
    try {
      const saved = await call(dev, 'mycelium__save_memory', {
        content: 'We deploy to Staging on Fridays',
        type: 'fact',
        tags: ['ops'],
      })
      expect(saved.isError).toBeFalsy()
      expect(saved.structuredContent).toMatchObject({ id: expect.stringMatching(/^mem_/), role: 'dev', type: 'fact' })
      await call(dev, 'mycelium__save_memory', { content: 'Prefer small pull requests', type: 'preference' })
      await call(qa, 'mycelium__save_memory', { content: 'QA secret: the flaky test is login' })
      await call(lead, 'mycelium__save_memory', { content: 'Lead note: plan the freeze' })

      // Words, any order, case-insensitive; newest first.
      const found = await call(dev, 'mycelium__recall_memory', { query: 'friday DEPLOY' })
      expect((found.structuredContent!.entries as Array<{ content: string }>).map((e) => e.content)).toEqual([
        'We deploy to Staging on Fridays',
      ])
      const mine = await call(dev, 'mycelium__recall_memory', {})
      expect((mine.structuredContent!.entries as Array<{ content: string }>).map((e) => e.content)).toEqual([
        'Prefer small pull requests',
        'We deploy to Staging on Fridays',
      ])

      // Isolated: another role's memory answers exactly as a role that has none.
      expect(await answer(dev, 'mycelium__recall_memory', { role: 'qa' })).toBe(
        await answer(dev, 'mycelium__recall_memory', { role: 'nobody' }),
      )
      expect(textOf(await call(dev, 'mycelium__recall_memory', { role: 'qa' }))).toBe('No memories found.')
      expect(await answer(qa, 'mycelium__list_memories', { role: 'dev' })).toBe(
        await answer(qa, 'mycelium__list_memories', { role: 'nobody' }),
      )
      const qaAll = await call(qa, 'mycelium__recall_memory', { all_roles: true })
      expect((qaAll.structuredContent!.entries as Array<{ role: string }>).map((e) => e.role)).toEqual(['qa'])

      // Team: own plus dev, never qa.
      const leadAll = await call(lead, 'mycelium__recall_memory', { all_roles: true })
      expect((leadAll.structuredContent!.entries as Array<{ role: string }>).map((e) => e.role).sort()).toEqual([
        'dev',
        'dev',
        'lead',
      ])
      expect(
        (await call(lead, 'mycelium__recall_memory', { role: 'dev', query: 'staging' })).structuredContent!.entries,
      ).toHaveLength(1)
      expect(await answer(lead, 'mycelium__recall_memory', { role: 'qa' })).toBe(
        await answer(lead, 'mycelium__recall_memory', { role: 'nobody' }),
      )
      const counts = (await call(lead, 'mycelium__list_memories')).structuredContent!.roles as Array<{
        role: string
        total: number
        byType: Record<string, number>
      }>
      expect(counts.map((c) => [c.role, c.total])).toEqual([
        ['dev', 2],
        ['lead', 1],
      ])
      expect(counts[0]!.byType).toMatchObject({ fact: 1, preference: 1 })

      // Bad arguments and caps: a tool error naming the field or the setting.
      expect(textOf(await call(dev, 'mycelium__save_memory', { content: 'x', type: 'secret' }))).toMatch(
        /"type" must be one of/,
      )
      expect(textOf(await call(dev, 'mycelium__save_memory', { content: '' }))).toMatch(/"content"/)
      expect(textOf(await call(dev, 'mycelium__recall_memory', { role: 'qa', all_roles: true }))).toMatch(/not both/)
      const tooBig = await call(dev, 'mycelium__save_memory', { content: 'z'.repeat(3000) })
      expect(tooBig.isError).toBe(true)
      expect(textOf(tooBig)).toMatch(/memory\.maxEntryBytes/)
    } finally {
      await Promise.all([dev.close(), qa.close(), lead.close()])
    }

    // The Markdown files, one per role, readable by people.
    const devFile = readFileSync(path.join(p.dir, '.mycelium', 'memory', 'dev.memory.md'), 'utf8')
    expect(devFile).toMatch(/^# Memory of role dev\n\nLast modified: .* · Entries: 2\n/)
    expect(devFile).toContain('## Facts')
    expect(devFile).toContain('We deploy to Staging on Fridays')
    // The audit log has the saves, never their content.
    const audit = readFileSync(path.join(p.dir, 'audit.jsonl'), 'utf8')
    expect(audit.match(/"event":"memory_saved"/g)).toHaveLength(4)
    expect(audit).not.toContain('Staging')
  }, 60_000)

  it('the operator CLI lists, shows, searches, exports, forgets (audited) and lints', async () => {
    const list = await cli(p.config, 'memory', 'list', '--json')
    expect(list.code).toBe(0)
    expect(list.stderr).toMatch(/acting as operator/)
    expect(
      (JSON.parse(list.stdout).roles as Array<{ role: string; total: number }>).map((r) => [r.role, r.total]),
    ).toEqual([
      ['dev', 2],
      ['lead', 1],
      ['qa', 1],
    ])
    const show = await cli(p.config, 'memory', 'show', 'dev', '--type', 'fact', '--json')
    const facts = JSON.parse(show.stdout).entries as Array<{ id: string; content: string }>
    expect(facts.map((e) => e.content)).toEqual(['We deploy to Staging on Fridays'])
    expect((await cli(p.config, 'memory', 'search', 'flaky login')).stdout).toMatch(/QA secret/)
    const exported = JSON.parse((await cli(p.config, 'memory', 'export', '--format', 'json', '--role', 'qa')).stdout)
    expect(exported.roles).toEqual([
      {
        role: 'qa',
        entries: [expect.objectContaining({ content: 'QA secret: the flaky test is login', type: 'note' })],
        unparsed: [],
      },
    ])
    expect((await cli(p.config, 'memory', 'export', '--format', 'md', '--role', 'dev')).stdout).toMatch(
      /^# Memory of role dev/,
    )

    const forgot = await cli(p.config, 'memory', 'forget', 'dev', facts[0]!.id)
    expect(forgot.code).toBe(0)
    expect(JSON.parse((await cli(p.config, 'memory', 'show', 'dev', '--json')).stdout).entries).toHaveLength(1)
    expect(readFileSync(path.join(p.dir, 'audit.jsonl'), 'utf8')).toMatch(
      /"event":"memory_forgotten","role":"dev","id":"mem_[^"]+","type":"fact","bytes":\d+,"by":"operator"/,
    )
    const again = await cli(p.config, 'memory', 'forget', 'dev', facts[0]!.id)
    expect(again.code).toBe(2)
    expect(again.stderr).toMatch(/has no memory entry/)
    expect((await cli(p.config, 'memory', 'show', '../etc')).stderr).toMatch(/not a role name/)

    expect((await cli(p.config, 'memory', 'lint')).code).toBe(0)
    // A hand edit that breaks a metadata comment: lint names file and line, exits 3, and rewrites nothing.
    const qaFile = path.join(p.dir, '.mycelium', 'memory', 'qa.memory.md')
    const broken = readFileSync(qaFile, 'utf8').replace('<!-- meta: {', '<!-- meta: {{')
    writeFileSync(qaFile, broken)
    const lint = await cli(p.config, 'memory', 'lint')
    expect(lint.code).toBe(3)
    expect(lint.stdout).toMatch(/qa\.memory\.md:\d+: the metadata comment of mem_\S+ is not a JSON object/)
    expect(readFileSync(qaFile, 'utf8')).toBe(broken)
  }, 60_000)

  it('policy check and explain show memory as they show tools', async () => {
    const check = await cli(p.config, 'policy', 'check', '--role', 'lead')
    expect(check.stdout).toMatch(/memory: team \(reads dev, lead; writes lead\)/)
    const explainOps = JSON.parse(
      (await cli(p.config, 'explain', 'mycelium:save_memory', '--role', 'ops', '--json')).stdout,
    )
    expect(explainOps.visible).toBe(false)
    const explainDev = JSON.parse(
      (await cli(p.config, 'explain', 'mycelium:save_memory', '--role', 'dev', '--skills', 'notes', '--json')).stdout,
    )
    expect(explainDev.visible).toBe(true)
    expect(JSON.stringify(explainDev.steps)).toMatch(/isolated: reads dev; writes dev/)
  }, 30_000)

  it('a role name that would leave the folder is refused at config load', async () => {
    const bad = project()
    writeFileSync(
      bad.config,
      JSON.stringify({ mcpServers: {}, skills: { dirs: ['skills'] }, roles: { definitions: { '../evil': {} } } }),
    )
    const r = await cli(bad.config, 'memory', 'list')
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/roles\.definitions.*role name/)
  })
})

describe('myc memory on memory it cannot read', () => {
  const inFolder = (dir: string, args: string[]) => runHere(['memory', ...args], '', { cwd: dir })
  const errorOf = (r: { stdout: string }) =>
    (JSON.parse(r.stdout) as { ok: boolean; error: { code: string; message: string; fix?: string } }).error

  it('list and show report an unreadable file the same way, naming it', async () => {
    const { dir } = project()
    const file = path.join(dir, '.mycelium', 'memory', 'dev.memory.md')
    // A folder where the file should be: unreadable as a file, even for root.
    mkdirSync(file, { recursive: true })
    const list = await inFolder(dir, ['list', '--json'])
    const show = await inFolder(dir, ['show', 'dev', '--json'])
    expect(list.code).toBe(1)
    expect(show.code).toBe(1)
    expect(errorOf(list)).toEqual(errorOf(show))
    expect(errorOf(show)).toMatchObject({
      code: 'runtime',
      message: `memory file ${file} cannot be read (it is a folder, not a file, EISDIR)`,
    })
    expect((await inFolder(dir, ['show', 'dev'])).stderr).toContain(`memory file ${file} cannot be read`)
  })

  it('list and show report an unreadable folder the same way (not “no role has memory yet”)', async () => {
    const { dir } = project()
    mkdirSync(path.join(dir, '.mycelium'), { recursive: true })
    writeFileSync(path.join(dir, '.mycelium', 'memory'), 'not a folder')
    const list = await inFolder(dir, ['list', '--json'])
    const show = await inFolder(dir, ['show', 'dev', '--json'])
    expect(list.code).toBe(1)
    expect(show.code).toBe(1)
    expect(errorOf(list)).toEqual(errorOf(show))
    expect(errorOf(list).message).toMatch(
      /^memory folder .*\.mycelium\/memory cannot be read \(a part of its path is a file, not a folder, ENOTDIR\)$/,
    )
    expect((await inFolder(dir, ['list'])).stdout).not.toMatch(/No role has memory yet/)
  })
})

describe('role memory in the agent (myc chat, myc run)', () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it('the model is offered the memory tools only with a grant, saves through them, and /memory shows what the role may read', async () => {
    const p = project()
    fake.setScript((_req, i) =>
      i === 0
        ? {
            content: [
              {
                type: 'tool_use',
                name: 'mycelium__save_memory',
                input: { content: 'Use pnpm in this repo', type: 'preference', tags: ['tooling'] },
              },
            ],
          }
        : { content: [{ type: 'text', text: `ok ${i}` }] },
    )
    const before = fake.requests.length
    const chat = await runAgentHere(['chat', '--config', p.config, '--role', 'dev', '--skills', 'notes'], {
      fake,
      input: 'remember that we use pnpm\n/memory pnpm\n/memory nothing-like-this\n',
    })
    expect(chat.code, chat.stderr).toBe(0)
    const offered = (fake.requests[before]!.body.tools as Array<{ name: string }>).map((t) => t.name)
    expect(offered).toEqual(
      expect.arrayContaining(['mycelium__save_memory', 'mycelium__recall_memory', 'mycelium__list_memories']),
    )
    expect(chat.stderr).toMatch(/\[mem_\S+\] dev · preference · tags: tooling · .*\n {2}Use pnpm in this repo/)
    expect(chat.stderr).toMatch(/No memories found\./)
    expect(readFileSync(path.join(p.dir, '.mycelium', 'memory', 'dev.memory.md'), 'utf8')).toContain(
      'Use pnpm in this repo',
    )

    // Without a granting skill: no memory tools offered, and /memory says why.
    fake.setScript(() => ({ content: [{ type: 'text', text: 'fine' }] }))
    const from = fake.requests.length
    const plain = await runAgentHere(['chat', '--config', p.config, '--role', 'ops'], { fake, input: 'hi\n/memory\n' })
    expect(plain.code, plain.stderr).toBe(0)
    expect(
      (fake.requests[from]!.body.tools as Array<{ name: string }> | undefined)?.map((t) => t.name) ?? [],
    ).not.toContain('mycelium__save_memory')
    expect(plain.stderr).toMatch(/No active skill grants memory to role ops/)
  }, 60_000)
})

import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectHere, runHere } from '../helpers/cli.js'
import { policyBasicWith, repoRoot } from '../helpers/fixtures.js'
import { waitFor } from '../helpers/runtime.js'

const config = path.join(repoRoot, 'tests/fixtures/policy/basic/mycelium.config.json')

// Each command and session starts every server of its config: these name fewer than the fixture.
const echoOnly = policyBasicWith(['echo'])
const noServers = policyBasicWith([])

const myc = (args: string[], cwd = repoRoot) => runHere(args, '', { cwd })

describe('a guest session in process', () => {
  // The cases only read the session: one myc serve for them all.
  let client: Client
  beforeAll(async () => {
    ;({ client } = await connectHere(['--config', config, '--role', 'guest']))
  })
  afterAll(async () => {
    await client.close()
  })

  it('a guest session sees only its tools', async () => {
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      'mycelium__list_skills',
      'mycelium__activate_skill',
      'mycelium__deactivate_skill',
      'mycelium__get_context',
      'mycelium__search_tools',
      'echo__echo',
    ])
    await expect(client.callTool({ name: 'grow__grow', arguments: {} })).rejects.toThrow(/Unknown tool: grow__grow/)
  })

  it('serves the role its skills with verified reads, and nothing else (skills over MCP)', async () => {
    const { SkillsClient } = await import('@modelcontextprotocol/client/ext/skills')
    const skills = new SkillsClient(client)
    expect(skills.supported).toBe(true)
    const listing = await skills.list()
    expect(listing.skills.map((s) => s.frontmatter.name)).toEqual(['common', 'reader'])
    const file = await skills.read(listing.skills[1]!)
    expect(file.verified).toBe(true)
    expect(file.text).toContain('Reader instructions.')
    await expect(skills.get('skill://mycelium/writer/SKILL.md')).rejects.toThrow(/Skill not found/)
  })
})

describe('policy mode in process', () => {
  it('a developer activates a skill, is told the list changed, calls the new tool, deactivates, and it is gone', async () => {
    let changed = 0
    const { client } = await connectHere(['serve', '--config', config], {
      env: { MYCELIUM_ROLE: 'developer' },
      setup: (c) =>
        c.setNotificationHandler('notifications/tools/list_changed', () => {
          changed++
        }),
    })
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('grow__grow')
    await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'writer' } })
    await waitFor(() => changed > 0, 5_000, 'list_changed')
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('grow__grow')
    const grown = await client.callTool({ name: 'grow__grow', arguments: { name: 'leaf' } })
    expect((grown.content as Array<{ text: string }>)[0]!.text).toBe('added leaf')
    await client.callTool({ name: 'mycelium__deactivate_skill', arguments: { name: 'writer' } })
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('grow__grow')
    await client.close()
  })

  it('--skills starts a session with more skills; an unknown role exits 2 naming the roles', async () => {
    const { client } = await connectHere(['--config', echoOnly, '--role', 'developer', '--skills', 'reader'])
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo__add')
    await client.close()
    const bad = await myc(['serve', '--config', echoOnly, '--role', 'root'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/unknown role "root" \(from --role\); roles: developer, guest, lead/)
  })

  it('myc tools --role and --json', async () => {
    // grow alone (the second): its tools are there, hidden from a guest. The two only read: at once.
    const [{ code, stdout }, growOnly] = await Promise.all([
      myc(['tools', '--config', echoOnly, '--role', 'guest', '--json']),
      myc(['tools', '--config', policyBasicWith(['grow']), '--role', 'guest', '--all', '--json']),
    ])
    expect(code).toBe(0)
    const doc = JSON.parse(stdout)
    expect(doc.role).toBe('guest')
    expect(doc.tools.map((t: { id: string }) => t.id)).toEqual([
      'mycelium:list_skills',
      'mycelium:activate_skill',
      'mycelium:deactivate_skill',
      'mycelium:get_context',
      'mycelium:search_tools',
      'echo:echo',
    ])
    const all = JSON.parse(growOnly.stdout)
    expect(all.tools.filter((t: { visible: boolean }) => !t.visible).map((t: { id: string }) => t.id)).toContain(
      'grow:grow',
    )
  })

  it('myc roles, skills list/show/lint, policy check, explain and preview', async () => {
    // Each command on the servers it reads: none for the roles and a skill's text, echo for the
    // skills its tools decide, and grow as well for writer's tools. They only read: all at once.
    const [roleList, skillList, skillShow, lint, check, guestCheck, explained, previewed] = await Promise.all([
      myc(['roles', '--config', noServers, '--json']),
      myc(['skills', 'list', '--config', echoOnly, '--json']),
      myc(['skills', 'show', 'writer', '--config', noServers, '--json']),
      myc(['skills', 'lint', '--config', echoOnly, '--json']),
      myc(['policy', 'check', '--role', 'developer', '--config', echoOnly, '--json']),
      myc(['policy', 'check', '--role', 'guest', '--config', echoOnly]),
      myc(['explain', 'echo__fail', '--role', 'lead', '--skills', 'writer', '--config', config, '--json']),
      myc(['preview', 'skill', 'writer', '--role', 'developer', '--config', config, '--json']),
    ])
    const roles = JSON.parse(roleList.stdout).roles
    expect(roles.map((r: { name: string }) => r.name)).toEqual(['developer', 'guest', 'lead'])
    expect(roles.find((r: { name: string }) => r.name === 'lead')).toMatchObject({
      inherits: ['developer'],
      deny: ['echo:fail'],
    })

    const skills = JSON.parse(skillList.stdout).skills
    expect(skills.find((s: { name: string }) => s.name === 'broken')).toMatchObject({ enabled: false })
    const shown = JSON.parse(skillShow.stdout).skill
    expect(shown.instructions).toBe('Writer instructions: be careful.')

    expect(lint.code).toBe(3)
    const problems = JSON.parse(lint.stdout).problems.map((p: { message: string }) => p.message)
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/ghostly/),
        expect.stringMatching(/no tool "no_such_tool"/),
        expect.stringMatching(/host tool/),
      ]),
    )

    expect(check.code).toBe(3)
    expect(JSON.parse(check.stdout).violations.join('\n')).toMatch(/no_such_tool/)
    expect(guestCheck.code).toBe(0)

    const explain = JSON.parse(explained.stdout)
    expect(explain.visible).toBe(false)
    expect(explain.steps.some((s: { rule: string }) => s.rule === 'role lead deny')).toBe(true)

    const preview = JSON.parse(previewed.stdout)
    expect(preview.added.map((t: { wireName: string }) => t.wireName)).toContain('grow__grow')
    expect(preview.addedTokens).toBeGreaterThan(0)
  })

  it('myc init writes a config and skills that myc then loads; skill add and templates', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-init-'))
    // --no-pin: its npx servers are not started (init-project.slow.test.ts pins them, where they resolve without a download).
    const init = await myc(['init', dir, '--json', '--no-pin'])
    expect(init.code).toBe(0)
    expect(JSON.parse(init.stdout)).toMatchObject({ lock: null })
    expect(existsSync(path.join(dir, 'mycelium.config.json'))).toBe(true)
    expect(existsSync(path.join(dir, 'mycelium.lock.json'))).toBe(false)
    expect(existsSync(path.join(dir, 'skills', 'code-reviewer', 'SKILL.md'))).toBe(true)
    expect(readFileSync(path.join(dir, 'skills', 'common', 'SKILL.md'), 'utf8')).toBe(
      readFileSync(path.join(repoRoot, 'skills', 'common', 'SKILL.md'), 'utf8'),
    )
    expect((await myc(['init', dir, '--no-pin'])).code).toBe(2)
    const templates = JSON.parse((await myc(['skill', 'templates', '--json'])).stdout).templates.map(
      (t: { name: string }) => t.name,
    )
    expect(templates).toEqual([
      'admin-access',
      'code-reviewer',
      'common',
      'editor',
      'git-workflow',
      'reader',
      'test-runner',
    ])
    expect((await myc(['skill', 'add', 'my-review', '--template', 'code-reviewer'], dir)).code).toBe(0)
    expect(readFileSync(path.join(dir, 'skills', 'my-review', 'SKILL.md'), 'utf8')).toMatch(/^name: my-review$/m)
    expect((await myc(['skill', 'add', 'Bad_Name'], dir)).code).toBe(2)
    const minimal = mkdtempSync(path.join(tmpdir(), 'myc-init-'))
    await myc(['init', minimal, '--minimal', '--no-pin'])
    expect(existsSync(path.join(minimal, 'skills', 'admin-access'))).toBe(false)
    expect(existsSync(path.join(minimal, 'skills', 'common', 'SKILL.md'))).toBe(true)
  })
})

describe('ask mode in process', () => {
  const fixtures = path.join(repoRoot, 'tests/fixtures')
  const askConfig = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-ask-'))
    const file = path.join(dir, 'mycelium.config.json')
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          echo: { command: 'node', args: [path.join(fixtures, 'servers/echo.mjs')] },
          grow: { command: 'node', args: [path.join(fixtures, 'servers/list-changing.mjs')] },
        },
        skills: { dirs: [path.join(fixtures, 'policy/basic/skills')] },
        roles: { default: 'developer' },
        session: { defaultSkills: ['common'], escalation: 'ask' },
      }),
    )
    return file
  }

  // One session for both answers: a declined activation changes nothing, so it goes first.
  let client: Client
  let answer: { action: 'accept'; content: { approve: boolean } } | { action: 'decline' }
  const asked: string[] = []
  beforeAll(async () => {
    ;({ client } = await connectHere(['--config', askConfig()], {
      capabilities: { elicitation: { form: {} } },
      setup: (c) =>
        c.setRequestHandler('elicitation/create', (req) => {
          asked.push((req.params as { message: string }).message)
          return answer
        }),
    }))
  })
  afterAll(async () => {
    await client.close()
  })

  it.each([
    ['declines', { action: 'decline' }, false],
    ['approves', { action: 'accept', content: { approve: true } }, true],
  ] as const)('the user %s through elicitation', async (_what, reply, activated) => {
    answer = reply
    asked.length = 0
    const r = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'writer' } })
    expect(asked).toHaveLength(1)
    expect(r.isError === true).toBe(!activated)
    expect((await client.listTools()).tools.map((t) => t.name).includes('grow__grow')).toBe(activated)
  })
})

describe('children’s skills in process', () => {
  it('are re-published under skill://<server>/ and read back verified', async () => {
    const { SkillsClient } = await import('@modelcontextprotocol/client/ext/skills')
    const { fixtureServer } = await import('../helpers/fixtures.js')
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-e2e-kb-'))
    const { mkdirSync } = await import('node:fs')
    mkdirSync(path.join(dir, 'skills', 'kb'), { recursive: true })
    writeFileSync(
      path.join(dir, 'skills', 'kb', 'SKILL.md'),
      '---\nname: kb\ndescription: kb\nallowedRoles: [dev]\nallowedTools: ["kb:*"]\n---\n',
    )
    writeFileSync(
      path.join(dir, 'mycelium.config.json'),
      JSON.stringify({ mcpServers: { kb: { command: process.execPath, args: [fixtureServer('skills-child')] } } }),
    )
    const { client } = await connectHere(['--config', path.join(dir, 'mycelium.config.json')])
    const skills = new SkillsClient(client)
    const listing = await skills.list()
    expect(listing.skills.map((s) => s.uri)).toEqual([
      'skill://mycelium/kb/SKILL.md',
      'skill://kb/deploy/SKILL.md',
      'skill://kb/review/SKILL.md',
    ])
    const file = await skills.read(listing.skills[1]!, 'scripts/run.sh')
    expect(file.verified).toBe(true)
    expect(file.text).toBe('#!/bin/sh\necho deploying\n')
    await client.close()
  })
})

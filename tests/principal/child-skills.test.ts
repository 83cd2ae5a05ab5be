import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load.js'
import { mapChildUri } from '../../src/skills/child-skills.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { connectClient, PolicyHarness, uriAnswer, waitFor } from '../helpers/runtime.js'

describe('mapChildUri', () => {
  it('keeps a skill:// path and another scheme’s authority and path under skill://<server>/', () => {
    expect(mapChildUri('kb', 'skill://deploy/SKILL.md')).toBe('skill://kb/deploy/SKILL.md')
    expect(mapChildUri('kb', 'https://docs.example.com/skills/x/SKILL.md')).toBe(
      'skill://kb/docs.example.com/skills/x/SKILL.md',
    )
  })
})

describe('children’s skills, aggregated per role', () => {
  let dir = ''
  const h = new PolicyHarness(() => loadConfig({ cwd: dir, env: {} }))

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'myc-child-skills-'))
    const skill = (name: string, roles: string, tools: string) => {
      mkdirSync(path.join(dir, 'skills', name), { recursive: true })
      writeFileSync(
        path.join(dir, 'skills', name, 'SKILL.md'),
        `---\nname: ${name}\ndescription: ${name}\nallowedRoles: [${roles}]\nallowedTools: [${tools}]\n---\n${name} body\n`,
      )
    }
    skill('basics', '"*"', 'echo:echo')
    skill('ops-tools', 'ops', '"kb:*"')
    skill('guest-only', 'guest', 'echo:add')
    writeFileSync(
      path.join(dir, 'mycelium.config.json'),
      JSON.stringify({
        mcpServers: {
          echo: { command: process.execPath, args: [fixtureServer('echo')] },
          kb: { command: process.execPath, args: [fixtureServer('skills-child')] },
        },
      }),
    )
    await h.start()
  })
  afterAll(() => h.close())

  const sessionFor = async (role: string, skills?: string[]) => {
    const { client } = await connectClient(h.runtime, { view: await h.view(role, skills ? { skills } : {}) })
    return { client, skills: new SkillsClient(client) }
  }

  it('lists a child’s skills under skill://<server>/ for a role whose skills grant that server, untouched but for URIs', async () => {
    const { client, skills } = await sessionFor('ops')
    const listing = await skills.list()
    expect(listing.skills.map((s) => s.uri)).toEqual([
      'skill://mycelium/basics/SKILL.md',
      'skill://mycelium/ops-tools/SKILL.md',
      'skill://kb/deploy/SKILL.md',
      'skill://kb/review/SKILL.md',
    ])
    const deploy = listing.skills.find((s) => s.uri === 'skill://kb/deploy/SKILL.md')!
    expect(deploy.frontmatter).toEqual({ name: 'deploy', description: 'Deploy the service', owner: 'ops-team' })
    const read = await skills.read(deploy)
    expect(read.verified).toBe(true)
    expect(read.text).toContain('Run the pipeline.')
    const script = await skills.read(deploy, 'scripts/run.sh')
    expect(script.verified).toBe(true)
    expect(script.uri).toBe('skill://kb/deploy/scripts/run.sh')
    expect((await skills.get('skill://kb/review/SKILL.md')).skill.frontmatter.name).toBe('review')
    await client.close()
  })

  it('keeps the child’s skill files out of the plain resource list', async () => {
    // Plain resources need an active skill that touches the server.
    const { client } = await sessionFor('ops', ['ops-tools'])
    const uris = (await client.listResources()).resources.map((r) => r.uri)
    expect(uris).toContain('note://plain')
    expect(uris.some((u) => u.startsWith('skill://'))).toBe(false)
    expect(
      (await client.listResourceTemplates()).resourceTemplates.some((t) => t.uriTemplate.startsWith('skill://')),
    ).toBe(false)
    await client.close()
  })

  it('hides a child’s skills from a role that does not reach the server, exactly like URIs that never existed', async () => {
    const { client, skills } = await sessionFor('guest')
    expect((await skills.list()).skills.map((s) => s.uri)).toEqual([
      'skill://mycelium/basics/SKILL.md',
      'skill://mycelium/guest-only/SKILL.md',
    ])
    const answer = (method: string, uri: string) => uriAnswer(client, method, uri)
    for (const method of ['skills/get', 'resources/read', 'resources/directory/read']) {
      const never = await answer(method, 'skill://kb/nothing/SKILL.md')
      expect(never).toMatch(/not found: <URI>$/)
      expect(await answer(method, 'skill://kb/deploy/SKILL.md')).toBe(never)
      expect(await answer(method, 'skill://deploy/SKILL.md')).toBe(never)
    }
    await client.close()
  })

  it('drops a crashed child’s skills and brings them back after the restart', async () => {
    const child = h.runtime.supervisor.children.get('kb')!
    process.kill(child.pid!, 'SIGKILL')
    await waitFor(() => h.runtime.catalogue.childSkills().length === 0, 5_000, 'skills to leave')
    await waitFor(() => h.runtime.catalogue.childSkills().length === 2, 15_000, 'skills to come back')
    const { client, skills } = await sessionFor('ops')
    expect((await skills.list()).skills.map((s) => s.uri)).toContain('skill://kb/deploy/SKILL.md')
    await client.close()
  })
})
